//! `dbus-matrix spread`: how far each cell moves between runs of the same
//! profile (how stable this machine is); exit 1 when the worst spread is
//! above `--fail-above`.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use super::{exit_code, CellFilter, OutputFormat, EXIT_SPREAD_ABOVE};
use crate::output::errln;
use crate::{analyze::history, analyze::spread};

#[derive(clap::Args)]
pub struct Args {
    /// Two or more results files of the same profile (e.g. two back-to-back
    /// runs), or directories whose *.json files are read.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Relative spread a cell should stay within (0.03 = 3%; default: the
    /// files' profile target_width when they agree, else 0.03).
    #[arg(long, allow_negative_numbers = true)]
    target: Option<f64>,
    /// Exit 1 when the worst spread is above this (0.10 = 10%), for CI gates.
    #[arg(long, allow_negative_numbers = true)]
    fail_above: Option<f64>,
    /// List only the N cells with the widest spread (the summaries count all).
    #[arg(long)]
    top: Option<NonZeroUsize>,
    /// Compare files of different profiles.
    #[arg(long)]
    allow_mixed: bool,
    #[arg(long, value_enum, default_value = "markdown")]
    format: OutputFormat,
    #[command(flatten)]
    filter: CellFilter,
}

pub fn exec(args: Args) -> Result<ExitCode> {
    if let Some(t) = args.target {
        anyhow::ensure!(
            t.is_finite() && t > 0.0,
            "--target must be a finite number above 0 (got {t})"
        );
    }
    if let Some(f) = args.fail_above {
        anyhow::ensure!(
            f.is_finite() && f >= 0.0,
            "--fail-above must be a finite number, not negative (got {f})"
        );
    }
    let (runs, errors) = history::load_inputs(&args.inputs);
    if let Some(first) = errors.into_iter().next() {
        return Err(first);
    }
    let opts = spread::SpreadOptions {
        target: args.target,
        allow_mixed: args.allow_mixed,
        top: args.top.map(NonZeroUsize::get),
        cells: args.filter.into_selection(),
    };
    let s = spread::spread(&runs, &opts)?;
    for d in &s.differences {
        errln!("warning: not like for like: {d}");
    }
    args.format.print(&s, spread::markdown)?;
    let passes = args.fail_above.is_none_or(|limit| s.worst_spread() <= limit);
    Ok(exit_code(passes, EXIT_SPREAD_ABOVE))
}
