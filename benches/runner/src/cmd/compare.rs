//! `dbus-matrix compare`: two results files cell by cell; exit 1 on a
//! regression, a broken cell, or a cell missing from NEW or no longer
//! measured there (ok → unsupported; unless `--allow-missing`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use super::{check_significance, exit_code, CellFilter, OutputFormat, EXIT_REGRESSED};
use crate::analyze::{compare, compare_pr};
use crate::store;

/// `compare`'s output: the common ones and the pull-request comment.
#[derive(Clone, Copy, clap::ValueEnum)]
enum CompareFormat {
    Markdown,
    Json,
    Pr,
}

#[derive(clap::Args)]
pub struct Args {
    old: PathBuf,
    new: PathBuf,
    /// Relative change of the median that counts (0.05 = 5%); smaller significant changes are "unchanged".
    #[arg(long, default_value_t = 0.05)]
    threshold: f64,
    /// Significance level of the Mann-Whitney U test on per-sample times.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// Cells of OLD that NEW lacks (verdict `missing`) or no longer measures
    /// (ok, now unsupported: verdict `dropped`) do not fail the gate.
    #[arg(long)]
    allow_missing: bool,
    /// `pr`: a short pull-request comment (the changed cells by scenario
    /// family, a verdict, the full table folded), under GitHub's size limit.
    #[arg(long, value_enum, default_value = "markdown")]
    format: CompareFormat,
    #[command(flatten)]
    filter: CellFilter,
}

pub fn exec(args: Args) -> Result<ExitCode> {
    check_significance(args.threshold, args.alpha)?;
    let (old, new) = (store::load(&args.old)?, store::load(&args.new)?);
    let opts = compare::CompareOptions {
        threshold: args.threshold,
        alpha: args.alpha,
        adapters: args.filter.adapters,
        scenarios: args.filter.scenarios,
        buses: args.filter.buses,
        allow_missing: args.allow_missing,
    };
    let c = compare::compare(&old, &new, &opts)?;
    match args.format {
        CompareFormat::Markdown => OutputFormat::Markdown.print(&c, compare::markdown)?,
        CompareFormat::Json => OutputFormat::Json.print(&c, compare::markdown)?,
        CompareFormat::Pr => crate::output::out!("{}", compare_pr::render(&c))?,
    }
    Ok(exit_code(c.passes(), EXIT_REGRESSED))
}
