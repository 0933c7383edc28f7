//! `dbus-matrix list`: the adapters (asked for their versions and support), scenarios and profiles.

use std::process::ExitCode;

use anyhow::Result;

use super::Context;
use crate::analyze::coverage;
use crate::matrix::Matrix;
use crate::output::outln;
use crate::process::adapter::{self, Described};
use crate::process::scratch::Scratch;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// text: adapters, scenarios, profiles; markdown: the coverage table
    /// (the README's, generated from here).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Text,
    Markdown,
}

pub fn exec(args: Args, ctx: &Context) -> Result<ExitCode> {
    let m = ctx.load_matrix()?;
    let bin_dir = ctx.bin_dir()?;
    let scratch = Scratch::new("list")?;
    for a in &m.adapters {
        adapter::refuse_runner(&bin_dir, a)?;
    }
    let mut mismatches = Vec::new();
    let described: Vec<Result<Described, String>> = m
        .adapters
        .iter()
        .map(|a| {
            if let Some(reason) = a.unavailable_here() {
                return Err(reason);
            }
            let bin = adapter::binary(&bin_dir, a).map_err(|e| format!("{e:#}"))?;
            let d = adapter::describe(&bin, scratch.path(), ctx.interrupted()).map_err(|e| format!("{e:#}"))?;
            if let Err(e) = adapter::check_identity(a, &bin, &d) {
                mismatches.push(format!("{e:#}"));
                return Err(format!("MISMATCH: {e:#}"));
            }
            Ok(d)
        })
        .collect();
    match args.format {
        Format::Markdown => outln!("{}", coverage::markdown(&m, &described).trim_end())?,
        Format::Text => text(&m, &described)?,
    }
    anyhow::ensure!(
        mismatches.is_empty(),
        "matrix.toml and the adapter binaries disagree: {}",
        mismatches.join("; ")
    );
    Ok(ExitCode::SUCCESS)
}

fn text(m: &Matrix, described: &[Result<Described, String>]) -> Result<()> {
    outln!("adapters ({}):", m.path.display())?;
    for (a, d) in m.adapters.iter().zip(described) {
        let desc = match d {
            Ok(d) => describe_line(m, d),
            Err(e) if e.starts_with("MISMATCH") => e.clone(),
            Err(e) => format!("not available: {e}"),
        };
        outln!("  {:<24} {desc}{}", a.id, if a.baseline { " [baseline]" } else { "" })?;
    }
    for u in &m.unavailable {
        outln!("  {:<24} not in the matrix: {}", format!("({})", u.library), u.reason)?;
    }
    outln!("scenarios:")?;
    for s in &m.scenarios {
        let summary = harness::scenario::find(&s.id).map_or("", |s| s.summary.as_str());
        outln!("  {:<24} {summary}", s.id)?;
    }
    outln!("profiles: {}", m.profile.keys().cloned().collect::<Vec<_>>().join(", "))?;
    Ok(())
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
    let interpreter = d
        .listing
        .interpreter
        .as_ref()
        .map_or_else(String::new, |i| format!(" on {i}"));
    format!("{} {}{interpreter}{note}", d.listing.library, d.listing.version)
}
