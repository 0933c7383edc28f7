//! `dbus-matrix`: runs the D-Bus library benchmark matrix and reports on it.
//!
//! Exit status (a closed stdout is not an error: the output stops, the status
//! stays the command's own): 0 success; 1 a cell failed (run), verification failed, or a significant
//! regression, a broken, `missing` or `dropped` cell (compare, unless --allow-missing), or a spread
//! above --fail-above (spread);
//! 2 bad input (usage, a value out of range, matrix.toml, results file, a
//! `--resume` file without a plan or of another setup without --force, missing
//! binary, an adapter binary that is another adapter or the runner itself, no
//! loadable file for history, a failed build in build-times, a results file
//! another process is writing, a selection that checks nothing);
//! 130 interrupted by SIGINT, SIGTERM or SIGHUP (the results file keeps the finished cells).
//!
//! Signals ([`signals`]): `run` and `build-times` stop cleanly on the first
//! signal and at once on a second; the other commands end at once on the
//! first. Ending at once still removes the temporary directories. Every process the runner starts dies with it, even when it is
//! SIGKILLed, and `run` and `verify` remove what killed runs left in $TMPDIR.

mod analyze;
mod cmd;
mod environment;
mod export;
mod files;
mod matrix;
mod measure;
mod output;
mod patch;
mod pin;
mod placement;
mod process;
mod progress;
mod roles;
mod run;
mod signals;
mod site;
mod store;
mod unhacked;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use cmd::{Cmd, Context, EXIT_BAD_INPUT};

#[derive(Parser)]
#[command(
    name = "dbus-matrix",
    version,
    about = "A reproducible benchmark matrix for D-Bus client libraries"
)]
struct Cli {
    /// The matrix file (default: $DBUS_MATRIX_MATRIX, ./matrix.toml, or the repository's).
    #[arg(long, global = true)]
    matrix: Option<PathBuf>,
    /// Where the adapter binaries are (default: $DBUS_MATRIX_BIN_DIR or next to dbus-matrix).
    #[arg(long, global = true)]
    bin_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Cmd,
}

fn main() -> ExitCode {
    if std::env::var_os(process::adapter::NESTED_ENV).is_some() {
        output::errln!(
            "error: dbus-matrix was started by dbus-matrix as an adapter ({} is set): an adapter binary must not be \
             the runner, which would start itself again and again",
            process::adapter::NESTED_ENV
        );
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let cli = Cli::parse();
    let interrupted = signals::install(cli.command.stops_cleanly());
    let ctx = Context {
        matrix: cli.matrix,
        bin_dir: cli.bin_dir,
        interrupted,
    };
    cli.command.exec(&ctx).unwrap_or_else(|e| {
        output::errln!("error: {e:#}");
        ExitCode::from(EXIT_BAD_INPUT)
    })
}
