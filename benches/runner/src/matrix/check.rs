//! The checks of a whole `matrix.toml` beyond its syntax: unique ids, known
//! scenarios, buses and profiles, paths that exist.

use std::collections::HashSet;
use std::path::Path;

use anyhow::{bail, ensure, Context, Result};

use super::*;

impl Matrix {
    pub(super) fn check(&self) -> Result<()> {
        ensure!(
            self.schema == SUPPORTED_SCHEMA,
            "schema = {} but this dbus-matrix understands schema {SUPPORTED_SCHEMA}",
            self.schema
        );
        ensure!(!self.adapters.is_empty(), "no [[adapter]] entries");
        unique(self.adapters.iter().map(|a| a.id.as_str()), "adapter id")?;
        for a in &self.adapters {
            // Ids become bus names (run::bus_session::service_name, nix/buses.nix serviceName).
            ensure!(
                !a.id.is_empty() && a.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'),
                "adapter id {:?}: use only letters, digits, '-' and '.'",
                a.id
            );
        }
        unique(self.adapters.iter().map(|a| a.package.as_str()), "adapter package")?;
        unique(self.scenarios.iter().map(|s| s.id.as_str()), "scenario id")?;
        unique(self.buses.iter().map(|b| b.id.as_str()), "bus id")?;
        for b in &self.buses {
            ensure!(
                known_bus_ids().any(|k| k == b.id),
                "unknown bus {:?}; the runner knows: {}",
                b.id,
                known_bus_ids().collect::<Vec<_>>().join(", ")
            );
        }
        for a in &self.adapters {
            if let Some(p) = &a.program {
                ensure!(
                    !p.is_empty() && !p.contains('/') && p != "." && p != "..",
                    "adapter {}: program {p:?} must be a file name in the adapter's `path`",
                    a.id
                );
            }
            for (mode, reason) in &a.unavailable_in {
                ensure!(
                    BUILD_MODES.contains(&mode.as_str()),
                    "adapter {}: unavailable_in: unknown build mode {mode:?}; known: {}",
                    a.id,
                    BUILD_MODES.join(", ")
                );
                ensure!(
                    !reason.trim().is_empty(),
                    "adapter {}: unavailable_in.{mode}: give the reason (it becomes the cells' reason)",
                    a.id
                );
            }
            ensure!(
                a.package != RUNNER_PACKAGE,
                "adapter {}: package {:?} is the runner itself, not an adapter",
                a.id,
                a.package
            );
        }
        for s in &self.scenarios {
            if harness::scenario::find(&s.id).is_none() {
                let known: Vec<_> = harness::scenario::all().map(|s| s.id.as_str()).collect();
                bail!("unknown scenario {:?}; the harness knows: {}", s.id, known.join(", "));
            }
        }
        for (name, p) in &self.profile {
            p.check().with_context(|| format!("[profile.{name}]"))?;
            super::roles::check_profile(name, p)?;
        }
        for s in &self.scenarios {
            for name in s.profiles.iter().flatten() {
                ensure!(
                    self.profile.contains_key(name),
                    "scenario {}: unknown profile {name:?} in `profiles`",
                    s.id
                );
            }
        }
        super::pinned::check(self)?;
        super::roles::check_config(self)
    }

    /// Every adapter's `path` exists, relative to this file (unless the
    /// adapters are prebuilt without sources, see [`PREBUILT_ENV`]).
    pub(super) fn check_paths(&self) -> Result<()> {
        if prebuilt() {
            return Ok(());
        }
        let dir = self.path.parent().unwrap_or(Path::new(""));
        for a in &self.adapters {
            let crate_dir = dir.join(&a.path);
            ensure!(
                crate_dir.is_dir(),
                "adapter {}: path {:?} does not exist ({} is not a directory; paths are relative to matrix.toml; \
                 set {PREBUILT_ENV}=1 where the adapters come prebuilt without sources)",
                a.id,
                a.path,
                crate_dir.display()
            );
            if let Some(program) = &a.program_path {
                use std::os::unix::fs::PermissionsExt;
                let executable =
                    std::fs::metadata(program).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
                ensure!(
                    executable,
                    "adapter {}: program {} is not an executable file",
                    a.id,
                    program.display()
                );
            }
        }
        Ok(())
    }
}

fn unique<'a>(ids: impl Iterator<Item = &'a str>, what: &str) -> Result<()> {
    let mut seen = HashSet::new();
    for id in ids {
        ensure!(seen.insert(id), "duplicate {what} {id:?}");
    }
    Ok(())
}
