//! `dbus-matrix site RESULTS… --out DIR`: a static site of every results
//! file found (directories walked): the newest headline tables, a page per
//! scenario over runs, a compare view of any two runs
//! (`site`). Files that do not load are reported and skipped.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use super::check_significance;
use crate::output::errln;
use crate::site;

#[derive(clap::Args)]
pub struct Args {
    /// Results files, or directories searched for *.json (subdirectories too).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The site's directory: created, or empty, or written by `site` before (its pages are replaced).
    #[arg(long)]
    out: PathBuf,
    /// As `history` and `compare`: the relative change that counts as a step or a regression.
    #[arg(long, default_value_t = 0.05)]
    threshold: f64,
    /// As `history` and `compare`: the significance level.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
}

pub fn exec(args: Args) -> Result<ExitCode> {
    check_significance(args.threshold, args.alpha)?;
    let built = site::build(
        &args.inputs,
        &args.out,
        site::Settings {
            threshold: args.threshold,
            alpha: args.alpha,
        },
    )?;
    for e in &built.skipped {
        errln!("skipped: {e:#}");
    }
    errln!(
        "site: {} runs, {} pages in {} (open index.html)",
        built.runs,
        built.pages,
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
