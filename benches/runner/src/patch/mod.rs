//! `run --patch CRATE=PATH[,…]`: rows of the named adapters built against a
//! local source of their library (`<adapter>+patch`), beside the released
//! rows, in the same run. A Cargo adapter is built in a copy of the
//! workspace ([`cargo`]) with cargo's `patch.crates-io` given through
//! `--config`, into a target directory of its own, so that no tracked file
//! and no released binary changes; a Python or Ruby program runs through a
//! wrapper that puts the source first on `PYTHONPATH` / `RUBYLIB`
//! ([`program`]). What each row was built from is recorded ([`source`]).

mod build_lock;
mod cargo;
mod program;
mod source;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use harness::results::PatchedCrate;
use sha2::{Digest, Sha256};

use crate::matrix::{AdapterEntry, Matrix};

pub use crate::matrix::patched::{Patched, SUFFIX};
pub use cargo::reached;

/// One `CRATE=PATH` of `--patch`.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub name: String,
    /// Absolute, resolved.
    pub path: PathBuf,
}

/// Parses `--patch`'s items: `CRATE=PATH`, each crate once, each path an
/// existing directory.
pub fn parse(items: &[String]) -> Result<Vec<Spec>> {
    let mut specs: Vec<Spec> = Vec::new();
    for item in items {
        let Some((name, path)) = item.split_once('=') else {
            bail!("--patch {item:?}: expected CRATE=PATH (the crate's name and the directory of its source)");
        };
        let name = name.trim();
        if name.is_empty() || path.is_empty() {
            bail!("--patch {item:?}: expected CRATE=PATH, both non-empty");
        }
        crate::matrix::crate_name::check(name).with_context(|| format!("--patch {item:?}"))?;
        if path.starts_with("git:") {
            bail!(
                "--patch {item:?}: a git revision is not supported; check the revision out \
                 (`git worktree add DIR REV`) and pass CRATE=DIR"
            );
        }
        let dir = PathBuf::from(path);
        let dir = dir
            .canonicalize()
            .with_context(|| format!("--patch {item:?}: no such directory {}", dir.display()))?;
        if !dir.is_dir() {
            bail!("--patch {item:?}: {} is not a directory", dir.display());
        }
        if specs.iter().any(|s| s.name == name) {
            bail!("--patch names {name:?} twice");
        }
        specs.push(Spec {
            name: name.to_string(),
            path: dir,
        });
    }
    Ok(specs)
}

/// The cargo profile whose binaries `bin_dir` holds (`target/<profile>`,
/// `target/debug` for `dev`), which the patched rows are built with too;
/// `release` elsewhere.
pub(crate) fn profile_of(bin_dir: &Path) -> String {
    match (bin_dir.file_name(), bin_dir.parent().and_then(Path::file_name)) {
        (Some(p), Some(t)) if t == "target" && p == "debug" => "dev".into(),
        (Some(p), Some(t)) if t == "target" => p.to_string_lossy().into_owned(),
        _ => "release".into(),
    }
}

/// Builds (or wraps) the patched rows of `selected` and adds them to
/// `matrix`, each right after its adapter; returns their ids. Every crate
/// must reach at least one selected adapter, else bad input.
pub fn prepare(
    matrix: &mut Matrix,
    selected: &[String],
    specs: &[Spec],
    bin_dir: &Path,
    interrupted: &std::sync::atomic::AtomicBool,
) -> Result<Vec<String>> {
    if crate::matrix::prebuilt() {
        bail!("--patch builds adapters from source: run it from a checkout of the repository, not the prebuilt (Nix) runner");
    }
    let chosen: Vec<AdapterEntry> = matrix.select_adapters(selected)?.into_iter().cloned().collect();
    if let Some(a) = chosen.iter().find(|a| a.id.ends_with(SUFFIX)) {
        bail!(
            "adapter {}: an id ending in {SUFFIX} is a patched row; name the released adapter",
            a.id
        );
    }
    let key: String = Sha256::digest(
        specs
            .iter()
            .map(|s| format!("{}={}\n", s.name, s.path.display()))
            .collect::<String>()
            .as_bytes(),
    )
    .iter()
    .take(6)
    .map(|b| format!("{b:02x}"))
    .collect();

    // Programs whose library is named; the other crates are Cargo crates.
    let (program_specs, crate_specs): (Vec<&Spec>, Vec<&Spec>) = specs
        .iter()
        .partition(|s| chosen.iter().any(|a| a.is_program() && a.library == s.name));
    let mut rows: BTreeMap<String, Patched> = BTreeMap::new();
    let ws = crate::unhacked::workspace(&matrix.path)?;
    let shared = ws.join("target").join("patch");
    let root = shared.join(&key);
    if !crate_specs.is_empty() {
        let cargo_adapters: Vec<&AdapterEntry> = chosen
            .iter()
            .filter(|a| !a.is_program() && a.unavailable_here().is_none())
            .collect();
        let built = cargo::build(
            matrix,
            cargo::Dirs {
                ws: &ws,
                shared: &shared,
                bins: &root.join("bin"),
                profile: &profile_of(bin_dir),
            },
            &cargo_adapters,
            &crate_specs,
            interrupted,
        )?;
        rows.extend(built);
    }
    if !program_specs.is_empty() {
        let dir = root.join("programs");
        for s in &program_specs {
            for a in chosen.iter().filter(|a| a.is_program() && a.library == s.name) {
                rows.insert(a.id.clone(), program::wrap(a, s, &dir)?);
            }
        }
    }
    let mut ids = Vec::new();
    for (of, patched) in rows {
        let at = matrix
            .adapters
            .iter()
            .position(|a| a.id == of)
            .expect("a selected adapter");
        let mut entry = matrix.adapters[at].clone();
        entry.id = format!("{of}{SUFFIX}");
        // Its sockets and fifos are named after `package`: not the released row's.
        entry.package = format!("{}{SUFFIX}", entry.package);
        entry.baseline = false;
        entry.patched = Some(patched);
        ids.push(entry.id.clone());
        matrix.adapters.insert(at + 1, entry);
    }
    Ok(ids)
}

/// The record of a crate's source: its version where known, and git facts.
fn crate_record(spec: &Spec, version: Option<String>) -> PatchedCrate {
    let git = source::git(&spec.path);
    PatchedCrate {
        name: spec.name.clone(),
        version,
        path: spec.path.display().to_string(),
        git_revision: git.as_ref().map(|g| g.revision.clone()),
        git_dirty: git.map(|g| g.dirty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_checked() {
        let dir = std::env::temp_dir();
        let ok = parse(&[format!("zbus={}", dir.display())]).unwrap();
        assert_eq!(ok[0].name, "zbus");
        assert_eq!(ok[0].path, dir.canonicalize().unwrap());
        for bad in ["zbus", "=/tmp", "zbus=", "zbus=/no/such/dir", "zbus=git:abc123"] {
            assert!(parse(&[bad.to_string()]).is_err(), "{bad}");
        }
        let twice = [format!("a={}", dir.display()), format!("a={}", dir.display())];
        assert!(parse(&twice).unwrap_err().to_string().contains("twice"));
    }

    #[test]
    fn the_profile_comes_from_the_bin_dir() {
        assert_eq!(profile_of(Path::new("benches/target/ci")), "ci");
        assert_eq!(profile_of(Path::new("/x/target/debug")), "dev");
        assert_eq!(profile_of(Path::new("/usr/bin")), "release");
    }
}
