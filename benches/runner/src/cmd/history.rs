//! `dbus-matrix history`: the medians of many runs over time, with steps marked.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use super::{check_significance, CellFilter, OutputFormat};
use crate::analyze::history;

#[derive(clap::Args)]
pub struct Args {
    /// Results files, or directories whose *.json files are read.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Relative change of the median from the series' level that counts as a step (0.05 = 5%).
    #[arg(long, default_value_t = 0.05)]
    threshold: f64,
    /// Significance level of the Mann-Whitney U test against the previous run.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    #[arg(long, value_enum, default_value = "markdown")]
    format: OutputFormat,
    #[command(flatten)]
    filter: CellFilter,
}

pub fn exec(args: Args) -> Result<ExitCode> {
    check_significance(args.threshold, args.alpha)?;
    let (runs, errors) = history::load_inputs(&args.inputs);
    history::report_skipped(runs.len(), &errors)?;
    let opts = history::HistoryOptions {
        threshold: args.threshold,
        alpha: args.alpha,
        cells: args.filter.into_selection(),
    };
    let h = history::history(&runs, &opts)?;
    args.format.print(&h, history::markdown)?;
    Ok(ExitCode::SUCCESS)
}
