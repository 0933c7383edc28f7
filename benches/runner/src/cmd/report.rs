//! `dbus-matrix report`: a results file as a table or in another tool's format.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::output::out;
use crate::{export, store};

#[derive(clap::Args)]
pub struct Args {
    file: PathBuf,
    #[arg(long, value_enum, default_value = "markdown")]
    format: export::Format,
    /// critcmp only: the baseline name (default: the run's start time and
    /// profile, e.g. 2026-11-23T101500Z-quick). critcmp keys baselines by
    /// name, so the runs compared must have different names.
    #[arg(long)]
    baseline: Option<String>,
}

pub fn exec(args: Args) -> Result<ExitCode> {
    let results = store::load(&args.file)?;
    match (args.format, args.baseline) {
        (export::Format::Critcmp, Some(name)) => {
            anyhow::ensure!(!name.trim().is_empty(), "--baseline must not be empty");
            out!("{}", export::critcmp::render(&results, &name))?;
        }
        (_, Some(_)) => anyhow::bail!("--baseline is only for --format critcmp"),
        (format, None) => out!("{}", export::render(&results, format))?,
    }
    Ok(ExitCode::SUCCESS)
}
