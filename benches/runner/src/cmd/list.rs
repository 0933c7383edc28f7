//! `dbus-matrix list`: the adapters (asked for their versions and support), scenarios and profiles.

use std::process::ExitCode;

use anyhow::Result;

use super::Context;
use crate::adapters::{self, Described};
use crate::matrix::Matrix;
use crate::scratch::Scratch;

pub fn exec(ctx: &Context) -> Result<ExitCode> {
    let m = ctx.load_matrix()?;
    let bin_dir = ctx.bin_dir()?;
    let scratch = Scratch::new("list")?;
    println!("adapters ({}):", m.path.display());
    for a in &m.adapters {
        let desc = adapters::binary(&bin_dir, a)
            .and_then(|bin| adapters::describe(&bin, scratch.path(), ctx.interrupted()))
            .map(|d| describe_line(&m, &d))
            .unwrap_or_else(|e| format!("not available: {e:#}"));
        println!("  {:<24} {desc}{}", a.id, if a.baseline { " [baseline]" } else { "" });
    }
    println!("scenarios:");
    for s in &m.scenarios {
        let summary = harness::scenario::find(&s.id).map_or("", |s| s.summary.as_str());
        println!("  {:<24} {summary}", s.id);
    }
    println!("profiles: {}", m.profile.keys().cloned().collect::<Vec<_>>().join(", "));
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
