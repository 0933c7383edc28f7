//! The subcommands: one file each, holding its arguments (clap) and its entry
//! function `exec(args, &Context) -> Result<ExitCode>`. `main` parses, hands
//! the command to [`Cmd::exec`] and turns an error into exit status 2.

mod bisect;
mod build_times;
mod canon;
mod compare;
mod history;
mod interop;
mod list;
mod list_families;
mod patch;
mod pinned;
mod report;
mod run;
mod site;
mod spread;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::Subcommand;

use crate::matrix::Matrix;
use crate::{matrix, process::adapter};

/// A cell failed (run) or verification failed.
pub const EXIT_CELL_FAILED: u8 = 1;
/// `compare` found a significant regression.
pub const EXIT_REGRESSED: u8 = 1;
/// `spread`: the worst spread is above `--fail-above`.
pub const EXIT_SPREAD_ABOVE: u8 = 1;
/// Usage, matrix.toml, a results file, a missing binary, ...
pub const EXIT_BAD_INPUT: u8 = 2;
/// SIGINT, SIGTERM or SIGHUP; the results file keeps the finished cells.
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Subcommand)]
pub enum Cmd {
    /// Run the matrix and write a results file.
    Run(run::Args),
    /// Print a results file as a table, or in another tool's format (bmf, critcmp).
    Report(report::Args),
    /// Compare two results files cell by cell: NEW/OLD with a significance verdict.
    /// Exits 1 when a cell regressed significantly beyond --threshold, broke,
    /// or is missing from NEW (unless --allow-missing).
    Compare(compare::Args),
    /// The medians of many runs over time, per cell, with steps marked (▲ slower, ▼ faster).
    History(history::Args),
    /// Run-to-run spread of each cell over two or more runs of the same profile:
    /// how stable this machine is. Exits 1 when the worst spread is above --fail-above.
    Spread(spread::Args),
    /// Check that every adapter does the same work (bytes and values), untimed.
    Verify(verify::Args),
    /// List adapters (with exact versions and support) and scenarios, or the
    /// coverage table (--format markdown).
    List(list::Args),
    /// One adapter built with every registry release of its library between
    /// --from and --to, the asked cells run for each in one run, and where
    /// each cell's figure moved (by compare's rules).
    Bisect(bisect::Args),
    /// Build time of each adapter: a release build of it where only the shared
    /// harness is already built (needs a checkout and cargo).
    BuildTimes(build_times::Args),
    /// Which client libraries interoperate with which servers: every client
    /// calls every server a few times, untimed. Exits 1 when a pair failed a check.
    Interop(interop::Args),
    /// Print the canon as data (payloads, method and property tables, expected
    /// digests, introspection XML, the adapter command line) for the programs in
    /// other languages: benches/programs/canon.json, or its C header.
    Canon(canon::Args),
    /// A static site of many runs (directories walked): the newest headline tables,
    /// each scenario over runs, any two runs compared. Works from file://, fetches nothing.
    Site(site::Args),
}

impl Cmd {
    pub fn exec(self, ctx: &Context) -> Result<ExitCode> {
        match self {
            Cmd::Run(args) => run::exec(args, ctx),
            Cmd::Report(args) => report::exec(args),
            Cmd::Compare(args) => compare::exec(args),
            Cmd::History(args) => history::exec(args),
            Cmd::Spread(args) => spread::exec(args),
            Cmd::Verify(args) => verify::exec(args, ctx),
            Cmd::List(args) => list::exec(args, ctx),
            Cmd::BuildTimes(args) => build_times::exec(args, ctx),
            Cmd::Bisect(args) => bisect::exec(args, ctx),
            Cmd::Interop(args) => interop::exec(args, ctx),
            Cmd::Canon(args) => canon::exec(args),
            Cmd::Site(args) => site::exec(args),
        }
    }

    /// Whether a first signal only sets the interrupt flag (the command polls
    /// it, stops its children and keeps what it has), rather than ending the
    /// runner at once (with its temporary directories removed).
    pub fn stops_cleanly(&self) -> bool {
        matches!(self, Cmd::Run(_) | Cmd::BuildTimes(_) | Cmd::Bisect(_))
    }
}

/// What every command may need: the global options and the interrupt flag.
pub struct Context {
    /// `--matrix`, if given.
    pub matrix: Option<PathBuf>,
    /// `--bin-dir`, if given.
    pub bin_dir: Option<PathBuf>,
    /// Set by SIGINT/SIGTERM.
    pub interrupted: Arc<AtomicBool>,
}

impl Context {
    pub fn load_matrix(&self) -> Result<Matrix> {
        Matrix::load(&matrix::locate(self.matrix.as_deref())?)
    }

    pub fn bin_dir(&self) -> Result<PathBuf> {
        adapter::bin_dir(self.bin_dir.as_deref())
    }

    pub fn interrupted(&self) -> &AtomicBool {
        &self.interrupted
    }
}

/// Which cells `compare`, `history` and `spread` look at.
#[derive(clap::Args)]
pub struct CellFilter {
    /// Only these adapters (comma-separated ids).
    #[arg(long, value_delimiter = ',')]
    pub adapters: Vec<String>,
    /// Only these scenarios (comma-separated ids).
    #[arg(long, value_delimiter = ',')]
    pub scenarios: Vec<String>,
    /// Only IPC cells on these buses (comma-separated ids).
    #[arg(long, value_delimiter = ',')]
    pub buses: Vec<String>,
}

impl CellFilter {
    pub fn into_selection(self) -> crate::analyze::selection::CellSelection {
        crate::analyze::selection::CellSelection {
            adapters: self.adapters,
            scenarios: self.scenarios,
            buses: self.buses,
        }
    }
}

/// The output of `compare`, `history`, `spread` and `build-times`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum OutputFormat {
    Markdown,
    Json,
}

impl OutputFormat {
    /// Prints `markdown` (already ending in a newline) or `value` as pretty JSON.
    pub fn print<T: serde::Serialize>(self, value: &T, markdown: impl FnOnce(&T) -> String) -> Result<()> {
        match self {
            OutputFormat::Markdown => crate::output::out!("{}", markdown(value))?,
            OutputFormat::Json => crate::output::outln!("{}", serde_json::to_string_pretty(value)?)?,
        }
        Ok(())
    }
}

/// `--threshold` and `--alpha` of `compare` and `history`.
pub fn check_significance(threshold: f64, alpha: f64) -> Result<()> {
    anyhow::ensure!(
        threshold.is_finite() && threshold >= 0.0,
        "--threshold must be a finite number, not negative (got {threshold})"
    );
    anyhow::ensure!(
        alpha > 0.0 && alpha < 1.0,
        "--alpha must be between 0 and 1 (got {alpha})"
    );
    Ok(())
}

/// clap's parser of `--cell-timeout`: seconds, finite, above zero, at most
/// [`crate::run::MAX_CELL_TIMEOUT_S`] (`Duration::from_secs_f64` panics on the rest).
pub fn parse_cell_timeout(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    crate::run::cell_timeout_of_secs(secs)
}

/// `ExitCode::SUCCESS` when `ok`, else `failure`.
pub fn exit_code(ok: bool, failure: u8) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(failure)
    }
}
