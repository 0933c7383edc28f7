//! Finding adapter binaries and asking them what they are.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use harness::cli::{Listing, ScenarioSupport};
use harness::contract::Command;

use crate::adapter;
use crate::matrix::AdapterEntry;

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
    if entry.unavailable_here().is_some() {
        // Never run: its listing is [`unavailable`], every cell decided by it.
        return Ok(bin_dir.join(&entry.package));
    }
    if let Some(program) = entry.program_path.as_ref().filter(|_| !crate::matrix::prebuilt()) {
        return Ok(program.clone());
    }
    let p = bin_dir.join(&entry.package);
    if !p.is_file() {
        let build = match entry.path.strip_prefix("benches/").filter(|_| entry.own_lockfile) {
            // A workspace of its own: into the workspace's target/, next to the others.
            Some(dir) => format!("cargo build --release --locked --manifest-path {dir}/Cargo.toml --target-dir target"),
            None => format!("cargo build --release -p {}", entry.package),
        };
        bail!(
            "adapter {} has no binary at {}; build it with `{build}` in benches/ (or pass --bin-dir)",
            entry.id,
            p.display(),
        );
    }
    refuse_runner(bin_dir, entry)?;
    Ok(p)
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
    if d.listing.id != entry.id {
        bail!(
            "{} says it is adapter {:?}, but matrix.toml expects {:?}",
            binary.display(),
            d.listing.id,
            entry.id
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
    Ok(())
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
