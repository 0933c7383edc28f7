//! `dbus-matrix list`: the adapters (asked for their versions and support), scenarios and profiles.
//! What an adapter does not support is summarised per scenario family
//! (`list_families`); `--verbose` adds every unsupported scenario with its reason.

use std::process::ExitCode;

use anyhow::Result;

use super::list_families;
use super::Context;
use crate::analyze::coverage;
use crate::matrix::Matrix;
use crate::output::outln;
use crate::process::adapter::{self, Described};
use crate::process::scratch::Scratch;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// text: adapters, scenarios, profiles; markdown: the coverage table
    /// (docs/coverage.md's, generated from here).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// text: under each family's summary, every unsupported scenario id,
    /// grouped by reason (the summary alone gives counts and the first reason).
    #[arg(long, short)]
    verbose: bool,
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
        Format::Text => text(&m, &described, args.verbose)?,
    }
    anyhow::ensure!(
        mismatches.is_empty(),
        "matrix.toml and the adapter binaries disagree: {}",
        mismatches.join("; ")
    );
    Ok(ExitCode::SUCCESS)
}

fn text(m: &Matrix, described: &[Result<Described, String>], verbose: bool) -> Result<()> {
    outln!("adapters ({}):", m.path.display())?;
    let order: Vec<&str> = m.scenarios.iter().map(|s| s.id.as_str()).collect();
    for (a, d) in m.adapters.iter().zip(described) {
        let baseline = if a.baseline { " [baseline]" } else { "" };
        let d = match d {
            Ok(d) => d,
            Err(e) if e.starts_with("MISMATCH") => {
                outln!("  {:<24} {e}{baseline}", a.id)?;
                continue;
            }
            Err(e) => {
                outln!("  {:<24} not available: {e}{baseline}", a.id)?;
                continue;
            }
        };
        outln!("  {:<24} {}{baseline}", a.id, version_line(d))?;
        for line in list_families::summarise(&order, &d.unsupported, verbose) {
            outln!("  {:<24} {line}", "")?;
        }
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

/// `library version[ on interpreter]`.
fn version_line(d: &Described) -> String {
    let interpreter = d
        .listing
        .interpreter
        .as_ref()
        .map_or_else(String::new, |i| format!(" on {i}"));
    format!("{} {}{interpreter}", d.listing.library, d.listing.version)
}
