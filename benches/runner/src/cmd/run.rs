//! `dbus-matrix run`: run the matrix, print it, say which cells failed.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result};

use super::{exit_code, Context, EXIT_CELL_FAILED, EXIT_INTERRUPTED};
use crate::output::{errln, out};
use crate::placement::Placement;
use crate::{export, run};

#[derive(clap::Args)]
pub struct Args {
    /// smoke (seconds, for tests), quick (minutes), full (publication).
    #[arg(long, default_value = "quick")]
    profile: String,
    /// Only these adapters (comma-separated ids from matrix.toml).
    #[arg(long, value_delimiter = ',')]
    adapters: Vec<String>,
    /// Only these scenarios (comma-separated ids).
    #[arg(long, value_delimiter = ',')]
    scenarios: Vec<String>,
    /// Only these buses for IPC scenarios (comma-separated ids; default all).
    #[arg(long, value_delimiter = ',')]
    buses: Vec<String>,
    /// IPC over this machine's system bus ($DBUS_SYSTEM_BUS_ADDRESS or
    /// /run/dbus/system_bus_socket) and p2p, instead of private buses (NixOS VM tests).
    #[arg(long, conflicts_with = "buses")]
    system_bus: bool,
    /// Directory for the results file.
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Finish an interrupted run: only cells missing from FILE are run.
    #[arg(long)]
    resume: Option<PathBuf>,
    /// Seconds after which a cell is killed and marked failed (above 0, at most a week).
    #[arg(long, value_name = "SECONDS", value_parser = super::parse_cell_timeout)]
    cell_timeout: Option<Duration>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// CPU placement for IPC cells, e.g. `client=0,server=1,bus=1` (default: not pinned).
    #[arg(long, default_value = "none")]
    pin: String,
    /// Also count instructions per operation of marshal/demarshal cells
    /// under valgrind's callgrind (machine-independent; needs valgrind).
    #[arg(long)]
    instructions: bool,
}

pub fn exec(args: Args, ctx: &Context) -> Result<ExitCode> {
    let opts = run::RunOptions {
        matrix: ctx.load_matrix()?,
        profile: args.profile,
        adapters: args.adapters,
        scenarios: args.scenarios,
        buses: args.buses,
        system_bus: args.system_bus,
        out_dir: args.out,
        bin_dir: ctx.bin_dir()?,
        resume: args.resume,
        cell_timeout: args.cell_timeout,
        progress: !args.quiet,
        placement: Placement::parse(&args.pin).with_context(|| format!("--pin {:?}", args.pin))?,
        instructions: args.instructions,
    };
    let summary = run::run(opts, ctx.interrupted.clone())?;
    out!("{}", export::markdown::render(&summary.results))?;
    let failed = summary.failed();
    for c in &failed {
        errln!("failed: {} {}: {}", c.adapter, c.scenario, c.reason().unwrap_or(""));
    }
    errln!(
        "results: {} ({} cells: {} failed)",
        summary.path.display(),
        summary.results.cells.len(),
        failed.len()
    );
    if summary.interrupted {
        errln!(
            "interrupted: finish with `dbus-matrix run --resume {}`",
            summary.path.display()
        );
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(exit_code(failed.is_empty(), EXIT_CELL_FAILED))
}
