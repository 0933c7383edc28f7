//! What a run needs before its first cell, on its own: `run --list-builds`
//! (what scripts/build.sh must build for it) and `run --preflight` (every
//! binary there, every adapter able to say what it is). Both see the same
//! adapters as the run itself ([`super::adapters_needed`]), so the build
//! that quick.sh and CI share cannot forget one the run will ask for.

use std::sync::atomic::AtomicBool;

use anyhow::Result;

use super::RunOptions;
use crate::output::outln;
use crate::process::adapter;
use crate::process::scratch::Scratch;

/// `package NAME` (a member of the benches workspace) or `manifest PATH` (an
/// adapter with a lockfile of its own, absolute) for every Cargo adapter the
/// run needs, in matrix order. Programs build or prepare themselves when
/// first asked (`--preflight` asks them).
pub fn list_builds(opts: &RunOptions) -> Result<()> {
    for a in super::adapters_needed(opts)? {
        if a.is_program() || a.unavailable_here().is_some() {
            continue;
        }
        match opts.matrix.own_lock_manifest(a) {
            Some(manifest) => {
                let manifest = manifest.canonicalize().unwrap_or(manifest);
                outln!("manifest {}", manifest.display())?
            }
            None => outln!("package {}", a.package)?,
        }
    }
    Ok(())
}

/// Every binary the run needs (all missing ones named in one error), then
/// each adapter asked what it is and checked against matrix.toml, as the run
/// does before its first cell. Prints a line per adapter.
pub fn check(opts: &RunOptions, interrupted: &AtomicBool) -> Result<()> {
    let needed = super::adapters_needed(opts)?;
    let binaries = adapter::binaries(&opts.bin_dir, &needed)?;
    let scratch = Scratch::new("preflight")?;
    for (a, bin) in needed.iter().zip(&binaries) {
        if let Some(reason) = a.unavailable_here() {
            outln!("{:<24} not run here: {reason}", a.id)?;
            continue;
        }
        let d = adapter::describe(bin, scratch.path(), interrupted)?;
        adapter::check_identity(a, bin, &d)?;
        let interpreter = d
            .listing
            .interpreter
            .as_ref()
            .map_or_else(String::new, |i| format!(" on {i}"));
        outln!(
            "{:<24} ready: {} {}{interpreter}",
            a.id,
            d.listing.library,
            d.listing.version
        )?;
    }
    outln!("preflight: {} adapters ready", needed.len())?;
    Ok(())
}
