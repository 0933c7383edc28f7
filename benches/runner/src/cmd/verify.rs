//! `dbus-matrix verify`: every adapter's codec work checked against the reference, untimed.

use std::process::ExitCode;

use anyhow::Result;

use super::{exit_code, Context, EXIT_CELL_FAILED};
use crate::output::outln;
use crate::process::scratch::Scratch;
use crate::{analyze::verify, process::adapter};

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_delimiter = ',')]
    adapters: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    scenarios: Vec<String>,
    /// Also check the selected adapters built against a local source of
    /// their library (`CRATE=DIR`, as `run --patch`), as `<adapter>+patch`.
    #[arg(long, value_delimiter = ',', value_name = "CRATE=DIR")]
    patch: Vec<String>,
}

pub fn exec(args: Args, ctx: &Context) -> Result<ExitCode> {
    crate::process::scratch::remove_dead_runs();
    let mut m = ctx.load_matrix()?;
    let bin_dir = ctx.bin_dir()?;
    let mut adapters = args.adapters;
    let pinned = super::pinned::take(&m, &mut adapters)?;
    super::pinned::check_patch(pinned.1, !args.patch.is_empty())?;
    if !args.patch.is_empty() {
        super::patch::add_rows(&mut m, &mut adapters, &bin_dir, &args.patch, ctx)?;
    }
    super::pinned::add(&mut m, &mut adapters, pinned, &bin_dir, ctx)?;
    let is_codec = |id: &str| harness::scenario::find(id).is_some_and(|s| s.ipc_op().is_none());
    if !m.select_scenarios(&args.scenarios)?.iter().any(|s| is_codec(&s.id)) {
        anyhow::bail!(
            "--scenarios selects no marshal or demarshal scenario: verify checks codec work only              (an IPC cell verifies its replies itself when it runs), so it would check nothing"
        );
    }
    let scratch = Scratch::new("verify")?;
    let mut failures = 0;
    let selected = m.select_adapters(&adapters)?;
    // Every missing binary named at once, before any adapter is asked.
    adapter::binaries(&bin_dir, &selected)?;
    for a in selected {
        let codec_scenarios = m
            .select_scenarios(&args.scenarios)?
            .into_iter()
            .filter(|s| is_codec(&s.id));
        if let Some(reason) = a.unavailable_here() {
            for s in codec_scenarios {
                outln!("{:<24} {:<22} unsupported: {reason}", a.id, s.id)?;
            }
            continue;
        }
        let bin = adapter::binary(&bin_dir, a)?;
        // One that cannot describe itself fails its checks below, as before.
        if let Ok(d) = adapter::describe(&bin, scratch.path(), ctx.interrupted()) {
            adapter::check_identity(a, &bin, &d)?;
        }
        // IPC scenarios need a live service; each IPC cell verifies itself before timing.
        for s in codec_scenarios {
            let c = verify::check(&a.id, &bin, &s.id, scratch.path(), ctx.interrupted());
            let line = match &c.verdict {
                verify::Verdict::Passed(notes) if notes.is_empty() => "ok".to_string(),
                verify::Verdict::Passed(notes) => format!("ok ({})", notes.join("; ")),
                verify::Verdict::Unsupported(r) => format!("unsupported: {r}"),
                verify::Verdict::Failed(r) => {
                    failures += 1;
                    format!("FAILED: {r}")
                }
            };
            outln!("{:<24} {:<22} {line}", c.adapter, c.scenario)?;
        }
    }
    outln!("verify: {failures} failed")?;
    Ok(exit_code(failures == 0, EXIT_CELL_FAILED))
}
