//! `dbus-matrix interop`: which client libraries interoperate with which
//! server libraries (not timed), printed and optionally recorded in a
//! results file, whose reports then show the table.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use harness::results::{InteropTable, ResultsFile};

use super::{exit_code, Context, OutputFormat, EXIT_CELL_FAILED};
use crate::run::interop::{self, Pairs};
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

/// `run --interop`: the default checks between the run's adapters, over
/// dbus-daemon when the run has it (else its first bus), recorded in the
/// run's results file (`results`, written to `path`).
pub fn after_run(
    results: &mut ResultsFile,
    path: &Path,
    pairs: Pairs,
    reference: Option<String>,
    ctx: &Context,
) -> Result<InteropTable> {
    let plan = results.plan.as_ref().context("the results file has no plan")?;
    let buses = &plan.resolved.buses;
    let Some(bus) = buses.iter().find(|b| *b == "dbus-daemon").or(buses.first()) else {
        bail!("--interop: the run has no bus to check the pairs over (select an IPC scenario and a bus)");
    };
    let m = ctx.load_matrix()?;
    let opts = interop::Options {
        matrix: &m,
        adapters: plan.resolved.adapters.clone(),
        checks: interop::DEFAULT_CHECKS.map(str::to_string).to_vec(),
        bus: bus.clone(),
        pairs,
        reference: reference.or_else(|| plan.roles.as_ref().map(|r| r.reference.clone())),
        bin_dir: ctx.bin_dir()?,
        progress: false,
    };
    let table = interop::check(&opts, ctx.interrupted())?;
    results.interop = Some(table.clone());
    store::write_atomic(path, results)?;
    Ok(table)
}

/// Exit 1 when a pair failed a check (as `verify` does), 0 when all passed.
pub fn exec(args: Args, ctx: &Context) -> Result<ExitCode> {
    // A bad file, or one that cannot be written or is being written, is
    // reported before anything runs; the lock is held until the table is in.
    let _lock = store::lock_for_into(args.into.as_deref())?;
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
    args.format.print(&table, export::markdown::interop)?;
    if let Some(f) = &args.into {
        let mut results = store::load(f)?;
        results.interop = Some(table.clone());
        store::write_atomic(f, &results)?;
    }
    Ok(exit_code(table.pairs.iter().all(|p| p.passed()), EXIT_CELL_FAILED))
}
