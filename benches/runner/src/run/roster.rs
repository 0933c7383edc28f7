//! The adapters of a run: each asked what it is before any cell runs, checked
//! against matrix.toml and recorded in the results file.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use harness::results::{AdapterRecord, ResultsFile};

use crate::matrix::AdapterEntry;
use crate::measure::binsize;
use crate::process::adapter::{self, Described};

/// The version of an adapter that could not say (or was not asked).
pub const UNKNOWN_VERSION: &str = "unknown";

/// One adapter of the run.
pub struct RunAdapter {
    pub bin: PathBuf,
    /// What it said about itself; an adapter that could not answer fails all its cells with this reason.
    pub described: Result<Described, String>,
}

/// Asks every adapter what it is. An adapter that names another id or
/// library than matrix.toml is bad input; one that cannot answer is recorded
/// (version "unknown") and its cells fail.
pub fn describe_all(
    adapters: &[&AdapterEntry],
    binaries: Vec<PathBuf>,
    scratch: &std::path::Path,
    interrupted: &AtomicBool,
    results: &mut ResultsFile,
) -> Result<HashMap<String, RunAdapter>> {
    let mut roster = HashMap::new();
    for (a, bin) in adapters.iter().zip(binaries) {
        let d = match a.unavailable_here() {
            Some(reason) => Ok(adapter::unavailable(a, &reason)),
            None => adapter::describe(&bin, scratch, interrupted).map_err(|e| format!("{e:#}")),
        };
        if let Ok(d) = &d {
            adapter::check_identity(a, &bin, d)?;
        }
        // A version not known when the file was written (a run interrupted
        // while it listed the adapters) is learnt now.
        if let (Some(r), Ok(d)) = (results.adapters.iter_mut().find(|r| r.id == a.id), &d) {
            if r.version == UNKNOWN_VERSION {
                r.version = d.listing.version.clone();
                r.runtime = Some(d.listing.runtime.clone()).filter(|r| !r.is_empty());
            }
        }
        // Every cell's adapter is recorded, even one that could not say its version.
        if !results.adapters.iter().any(|r| r.id == a.id) {
            results.adapters.push(AdapterRecord {
                id: a.id.clone(),
                library: a.library.clone(),
                version: d
                    .as_ref()
                    .map_or_else(|_| UNKNOWN_VERSION.into(), |d| d.listing.version.clone()),
                baseline: a.baseline,
                loaded_bytes: binsize::loaded_bytes(&bin).ok(),
                runtime: d
                    .as_ref()
                    .ok()
                    .map(|d| d.listing.runtime_with_interpreter())
                    .filter(|r| !r.is_empty()),
                build: None,
                patch: a.patched.as_ref().map(|p| p.record.clone()),
                pin: a.pinned.as_ref().map(|p| p.record.clone()),
            });
        }
        roster.insert(a.id.clone(), RunAdapter { bin, described: d });
    }
    Ok(roster)
}
