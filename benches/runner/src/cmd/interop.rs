//! `dbus-matrix interop`: which client libraries interoperate with which
//! server libraries (not timed), printed and optionally recorded in a
//! results file, whose reports then show the table.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use super::{exit_code, Context, OutputFormat, EXIT_CELL_FAILED};
use crate::interop::{self, Pairs};
use crate::{export, store};

#[derive(clap::Args)]
pub struct Args {
    /// Only these adapters (comma-separated ids from matrix.toml; the baseline never takes part).
    #[arg(long, value_delimiter = ',')]
    adapters: Vec<String>,
    /// The scenarios each pair is checked with (comma-separated IPC ids)
    /// [default: call/void,call/in-out-string,call/relation-set,property/get].
    #[arg(long, value_delimiter = ',')]
    checks: Vec<String>,
    /// The bus the checks run over.
    #[arg(long, default_value = "dbus-daemon")]
    bus: String,
    /// `all`: every client against every server; `reference`: each adapter
    /// against itself and against the reference, both ways.
    #[arg(long, value_enum, default_value = "all")]
    pairs: Pairs,
    /// The reference of `--pairs reference` [default: matrix.toml's `[roles] reference`].
    #[arg(long, value_name = "ADAPTER")]
    reference: Option<String>,
    #[arg(long, value_enum, default_value = "markdown")]
    format: OutputFormat,
    /// Also record the table in this results file (its reports show it).
    #[arg(long)]
    into: Option<PathBuf>,
    /// No progress lines.
    #[arg(long)]
    quiet: bool,
}

/// Exit 1 when a pair failed a check (as `verify` does), 0 when all passed.
pub fn exec(args: Args, ctx: &Context) -> Result<ExitCode> {
    if let Some(f) = &args.into {
        store::load(f)?; // a bad file is reported before anything runs
    }
    let m = ctx.load_matrix()?;
    let checks = match args.checks.is_empty() {
        true => interop::DEFAULT_CHECKS.map(str::to_string).to_vec(),
        false => args.checks,
    };
    let opts = interop::Options {
        matrix: &m,
        adapters: args.adapters,
        checks,
        bus: args.bus,
        pairs: args.pairs,
        reference: args.reference,
        bin_dir: ctx.bin_dir()?,
        progress: !args.quiet,
    };
    let table = interop::check(&opts, ctx.interrupted())?;
    args.format.print(&table, export::interop::markdown)?;
    if let Some(f) = &args.into {
        let mut results = store::load(f)?;
        results.interop = Some(table.clone());
        store::write_atomic(f, &results)?;
    }
    Ok(exit_code(table.pairs.iter().all(|p| p.passed()), EXIT_CELL_FAILED))
}
