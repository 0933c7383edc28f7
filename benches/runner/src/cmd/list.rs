//! `dbus-matrix list`: the adapters (asked for their versions and support), scenarios and profiles.

use std::process::ExitCode;

use anyhow::Result;

use super::Context;
use crate::adapters::{self, Described};
use crate::matrix::Matrix;
use crate::output::outln;
use crate::scratch::Scratch;

pub fn exec(ctx: &Context) -> Result<ExitCode> {
    let m = ctx.load_matrix()?;
    let bin_dir = ctx.bin_dir()?;
    let scratch = Scratch::new("list")?;
    for a in &m.adapters {
        adapters::refuse_runner(&bin_dir, a)?;
    }
    outln!("adapters ({}):", m.path.display())?;
    let mut mismatches = Vec::new();
    for a in &m.adapters {
        let desc = adapters::binary(&bin_dir, a)
            .and_then(|bin| {
                let d = adapters::describe(&bin, scratch.path(), ctx.interrupted())?;
                if let Err(e) = adapters::check_identity(a, &bin, &d) {
                    mismatches.push(format!("{e:#}"));
                    return Ok(format!("MISMATCH: {e:#}"));
                }
                Ok(describe_line(&m, &d))
            })
            .unwrap_or_else(|e| format!("not available: {e:#}"));
        outln!("  {:<24} {desc}{}", a.id, if a.baseline { " [baseline]" } else { "" })?;
    }
    outln!("scenarios:")?;
    for s in &m.scenarios {
        let summary = harness::scenario::find(&s.id).map_or("", |s| s.summary.as_str());
        outln!("  {:<24} {summary}", s.id)?;
    }
    outln!("profiles: {}", m.profile.keys().cloned().collect::<Vec<_>>().join(", "))?;
    anyhow::ensure!(
        mismatches.is_empty(),
        "matrix.toml and the adapter binaries disagree: {}",
        mismatches.join("; ")
    );
    Ok(ExitCode::SUCCESS)
}

/// `library version (unsupported: ...)`, the scenarios in matrix order, not the map's.
fn describe_line(m: &Matrix, d: &Described) -> String {
    let unsupported: Vec<_> = m
        .scenarios
        .iter()
        .filter(|s| d.unsupported.contains_key(&s.id))
        .map(|s| s.id.as_str())
        .collect();
    let note = if unsupported.is_empty() {
        String::new()
    } else {
        format!(" (unsupported: {})", unsupported.join(", "))
    };
    format!("{} {}{}", d.listing.library, d.listing.version, note)
}
