//! Finding adapter binaries and asking them what they are.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use harness::cli::{Listing, ScenarioSupport};
use harness::contract::Command;

use crate::matrix::AdapterEntry;
use crate::process::adapter;

/// `--bin-dir`, else `$DBUS_MATRIX_BIN_DIR`, else the runner's own directory
/// (cargo puts every binary of the workspace side by side).
pub fn bin_dir(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(d) = explicit {
        return Ok(d.to_path_buf());
    }
    if let Some(d) = std::env::var_os("DBUS_MATRIX_BIN_DIR") {
        return Ok(PathBuf::from(d));
    }
    let exe = std::env::current_exe().context("cannot locate the dbus-matrix executable")?;
    Ok(exe.parent().context("executable has no directory")?.to_path_buf())
}

/// The executable of an adapter: its Cargo binary in `bin_dir`; for a
/// program, the file in its source directory (checked when matrix.toml was
/// loaded), or its installed executable in `bin_dir` where adapters come prebuilt.
pub fn binary(bin_dir: &Path, entry: &AdapterEntry) -> Result<PathBuf> {
    let mut found = binaries(bin_dir, &[entry])?;
    Ok(found.remove(0))
}

/// The executables of `entries`, in order; all are looked for before any
/// error, which names every missing one and the one command that builds them.
pub fn binaries(bin_dir: &Path, entries: &[&AdapterEntry]) -> Result<Vec<PathBuf>> {
    let located: Vec<(&AdapterEntry, PathBuf, bool)> = entries
        .iter()
        .map(|a| {
            let (path, present) = locate(bin_dir, a);
            (*a, path, present)
        })
        .collect();
    let missing: Vec<&AdapterEntry> = located.iter().filter(|l| !l.2).map(|l| l.0).collect();
    if !missing.is_empty() {
        bail!("{}", missing_message(bin_dir, &missing));
    }
    for a in entries {
        refuse_runner(bin_dir, a)?;
    }
    Ok(located.into_iter().map(|l| l.1).collect())
}

/// Where `entry`'s executable is, and whether it is there.
fn locate(bin_dir: &Path, entry: &AdapterEntry) -> (PathBuf, bool) {
    if let Some(p) = &entry.patched {
        return (p.bin.clone(), p.bin.is_file());
    }
    if let Some(p) = &entry.pinned {
        return (p.bin.clone(), p.bin.is_file());
    }
    if entry.unavailable_here().is_some() {
        // Never run: its listing is [`unavailable`], every cell decided by it.
        return (bin_dir.join(&entry.package), true);
    }
    if let Some(program) = entry.program_path.as_ref().filter(|_| !crate::matrix::prebuilt()) {
        return (program.clone(), true);
    }
    let p = bin_dir.join(&entry.package);
    let present = p.is_file();
    (p, present)
}

/// One sentence for every missing binary, with the one command that builds
/// them all for the cargo profile `bin_dir` belongs to (`target/<profile>`).
fn missing_message(bin_dir: &Path, missing: &[&AdapterEntry]) -> String {
    let profile = match (bin_dir.file_name(), bin_dir.parent().and_then(Path::file_name)) {
        (Some(p), Some(t)) if t == "target" && p == "debug" => "dev".to_string(),
        (Some(p), Some(t)) if t == "target" => p.to_string_lossy().into_owned(),
        _ => "release".to_string(),
    };
    let ids: Vec<&str> = missing.iter().map(|a| a.id.as_str()).collect();
    let what = match missing {
        [one] => format!(
            "adapter {} has no binary at {}",
            one.id,
            bin_dir.join(&one.package).display()
        ),
        _ => format!(
            "{} adapters have no binary in {}: {}",
            missing.len(),
            bin_dir.display(),
            missing
                .iter()
                .map(|a| format!("{} ({})", a.id, a.package))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    if crate::matrix::prebuilt() {
        // Nix's wrapper puts every adapter the flake builds in its bin dir.
        return format!("{what}: the prebuilt runner's bin dir lacks it (a packaging fault), or pass --bin-dir");
    }
    format!(
        "{what}; build {} with `bash scripts/build.sh {profile} --adapters {}` from the repository root \
         (it builds every adapter a run of them needs, own-lockfile ones included), or pass --bin-dir",
        if missing.len() == 1 { "it" } else { "them" },
        ids.join(",")
    )
}

/// Under any name (a symlink, a hard link), the runner is not an adapter: it
/// would start itself again and again. Bad input, also where a missing
/// binary is not (`list`).
pub fn refuse_runner(bin_dir: &Path, entry: &AdapterEntry) -> Result<()> {
    let p = bin_dir.join(&entry.package);
    let me = std::env::current_exe().and_then(|e| e.canonicalize());
    if let (Ok(me), Ok(it)) = (me, p.canonicalize()) {
        if me == it {
            bail!(
                "adapter {}: {} (package {:?}) is the runner itself, not an adapter",
                entry.id,
                p.display(),
                entry.package
            );
        }
    }
    Ok(())
}

/// An adapter that names another id or library than matrix.toml is bad
/// input: matrix.toml and the binaries disagree about what is measured.
pub fn check_identity(entry: &AdapterEntry, binary: &Path, d: &Described) -> Result<()> {
    // A patched row runs its adapter's code, which says the adapter's id.
    // So does a version-axis row, whose library must be the release it was built with.
    let expected = entry
        .patched
        .as_ref()
        .map(|p| &p.of)
        .or(entry.pinned.as_ref().map(|p| &p.of))
        .unwrap_or(&entry.id);
    if let Some(p) = entry.pinned.as_ref().filter(|p| p.record.version != d.listing.version) {
        bail!(
            "{} (row {}) says it runs {} {}, but it was built with {} (cargo's lockfile of the build)",
            binary.display(),
            entry.id,
            d.listing.library,
            d.listing.version,
            p.record.version
        );
    }
    if &d.listing.id != expected {
        bail!(
            "{} says it is adapter {:?}, but matrix.toml expects {:?}",
            binary.display(),
            d.listing.id,
            expected
        );
    }
    if d.listing.library != entry.library {
        bail!(
            "adapter {} measures {:?}, but matrix.toml says {:?}",
            entry.id,
            d.listing.library,
            entry.library
        );
    }
    // The line is host mode's (Debian's package). In build mode nix (prebuilt,
    // or the flake's nextest check and dev shell, which run the programs from
    // their sources with nixpkgs' interpreters) the library is nixpkgs' at the
    // flake's pin (jeepney 0.9 for the row jeepney-0.8) and recorded as it is;
    // a row unavailable there never runs (its version is `unknown`).
    // A patched source may be on another line (a branch's next version): its id says +patch.
    let host_mode = crate::matrix::build_mode().ok().flatten().is_none();
    let line = entry.version_line.as_deref().filter(|_| entry.patched.is_none());
    if let Some(line) = line.filter(|_| host_mode) {
        if !on_line(&d.listing.version, line) {
            bail!(
                "adapter {} runs {} {}, outside its line {line} (matrix.toml version_line): \
                 this machine's package is not the library the adapter's id names",
                entry.id,
                d.listing.library,
                d.listing.version
            );
        }
    }
    Ok(())
}

/// `1.14.10` and `1.14` are on line `1.14`; `1.140.0` and `1.15.0` are not.
fn on_line(version: &str, line: &str) -> bool {
    version
        .strip_prefix(line)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// What an adapter said about itself, with support per scenario.
pub struct Described {
    pub listing: Listing,
    /// Scenario -> reason, on a bus (and for marshal/demarshal).
    pub unsupported: HashMap<String, String>,
    /// Scenario -> reason, peer to peer.
    pub unsupported_p2p: HashMap<String, String>,
}

/// The listing of an adapter this runner cannot have (matrix.toml
/// `unavailable_in`): every scenario unsupported with `reason`, on a bus and
/// peer to peer; version `unknown` (nothing was asked).
pub fn unavailable(entry: &AdapterEntry, reason: &str) -> Described {
    let ids: Vec<String> = harness::scenario::all().map(|s| s.id.clone()).collect();
    let every = || {
        ids.iter()
            .map(|id| (id.clone(), reason.to_string()))
            .collect::<HashMap<_, _>>()
    };
    let scenarios = ids
        .iter()
        .map(|id| ScenarioSupport {
            id: id.clone(),
            supported: false,
            reason: Some(reason.to_string()),
            p2p_supported: Some(false),
            p2p_reason: Some(reason.to_string()),
        })
        .collect();
    Described {
        listing: Listing {
            id: entry.id.clone(),
            library: entry.library.clone(),
            version: "unknown".into(),
            runtime: String::new(),
            interpreter: None,
            scenarios,
        },
        unsupported: every(),
        unsupported_p2p: every(),
    }
}

pub fn describe(binary: &Path, scratch: &Path, interrupted: &AtomicBool) -> Result<Described> {
    let out = adapter::run(
        binary,
        &Command::List,
        None,
        scratch,
        Duration::from_secs(30),
        interrupted,
        None,
    )?;
    if !out.success() {
        bail!("`{} list` failed: {}", binary.display(), out.describe());
    }
    let listing: Listing = serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "`{} list` printed something that is not an adapter listing",
            binary.display()
        )
    })?;
    let unsupported = listing
        .scenarios
        .iter()
        .filter(|s| !s.supported)
        .map(|s| {
            (
                s.id.clone(),
                s.reason.clone().unwrap_or_else(|| "no reason given".into()),
            )
        })
        .collect();
    let unsupported_p2p = listing
        .scenarios
        .iter()
        .filter(|s| s.p2p_supported == Some(false))
        .map(|s| {
            (
                s.id.clone(),
                s.p2p_reason.clone().unwrap_or_else(|| "no reason given".into()),
            )
        })
        .collect();
    Ok(Described {
        listing,
        unsupported,
        unsupported_p2p,
    })
}

#[cfg(test)]
mod tests {
    use super::on_line;

    #[test]
    fn a_version_is_on_its_line_only_at_a_component_boundary() {
        assert!(on_line("1.14.10", "1.14"));
        assert!(on_line("1.14", "1.14"));
        assert!(on_line("0.8.0", "0.8"));
        assert!(!on_line("1.140.0", "1.14"));
        assert!(!on_line("1.15.0", "1.14"));
        assert!(!on_line("0.9.0", "0.8"));
        assert!(!on_line("", "0.8"));
    }
}
