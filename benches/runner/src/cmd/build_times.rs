//! `dbus-matrix build-times`: each adapter's release build time, optionally recorded into a results file.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::Result;

use super::{Context, OutputFormat, EXIT_INTERRUPTED};
use crate::{analyze::build_times, store};

#[derive(clap::Args)]
pub struct Args {
    /// Only these adapters (comma-separated ids from matrix.toml).
    #[arg(long, value_delimiter = ',')]
    adapters: Vec<String>,
    /// Cargo's -j (default: the number of CPUs; 1 to 1024).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    jobs: Option<u32>,
    #[arg(long, value_enum, default_value = "markdown")]
    format: OutputFormat,
    /// Also record the figures in this results file's adapters (`build`).
    #[arg(long)]
    into: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Also build each selected adapter that depends on the crate against a
    /// local source of it, as `<adapter>+patch`, from the same prepared state
    /// (comma-separated `CRATE=DIR`, as `run --patch`; Cargo adapters of the
    /// workspace only).
    #[arg(long, value_delimiter = ',', value_name = "CRATE=DIR")]
    patch: Vec<String>,
}

pub fn exec(args: Args, ctx: &Context) -> Result<ExitCode> {
    // A bad file, or one that cannot be written or is being written, is
    // reported before anything is built; the lock is held until the figures are in.
    let _lock = store::lock_for_into(args.into.as_deref())?;
    let m = ctx.load_matrix()?;
    let patches = crate::patch::parse(&args.patch)?;
    let opts = build_times::Options {
        matrix: &m,
        adapters: args.adapters,
        jobs: args.jobs,
        progress: !args.quiet,
        patches,
    };
    let report = match build_times::measure(opts, ctx.interrupted()) {
        Ok(r) => r,
        Err(e) if ctx.interrupted.load(Ordering::SeqCst) => {
            crate::output::errln!("error: {e:#}");
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
        Err(e) => return Err(e),
    };
    args.format.print(&report, build_times::markdown)?;
    if let Some(f) = &args.into {
        build_times::record_into(f, &report)?;
    }
    Ok(ExitCode::SUCCESS)
}
