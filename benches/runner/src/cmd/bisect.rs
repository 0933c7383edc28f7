//! `dbus-matrix bisect`: one adapter built with every registry release of its
//! library between two (`zbus-6@6.1.0`, `zbus-6@6.2.0`, …, the version axis'
//! machinery, [`crate::pin`]), the asked cells run for all of them in one run
//! (same rounds, same placement), and where each cell's figure moved
//! ([`crate::analyze::bisect`], by compare's rules).

use std::process::ExitCode;

use anyhow::{bail, ensure, Context as _, Result};

use super::{check_significance, exit_code, Context, EXIT_CELL_FAILED, EXIT_INTERRUPTED};
use crate::analyze::bisect::{self, CellAsk};
use crate::analyze::compare::CompareOptions;
use crate::matrix::pinned::Pin;
use crate::output::{errln, out};
use crate::pin::index::{self, Version};
use crate::pin::Row;
use crate::run;

#[derive(clap::Args)]
pub struct Args {
    /// The adapter (a member of the benches workspace) to build with each release.
    #[arg(long)]
    adapter: String,
    /// The crate whose releases are walked [default: the adapter's library].
    #[arg(long = "crate", value_name = "CRATE")]
    krate: Option<String>,
    /// The first release (X.Y.Z).
    #[arg(long)]
    from: String,
    /// The last release (X.Y.Z).
    #[arg(long)]
    to: String,
    /// The cells (comma-separated `SCENARIO@BUS`, or `SCENARIO` for a codec
    /// scenario); the run measures every asked scenario on every asked bus.
    #[arg(long, value_delimiter = ',', required = true)]
    cell: Vec<String>,
    /// Released adapters to run beside the releases, for reference
    /// (comma-separated ids; shown above the releases, not judged).
    #[arg(long, value_delimiter = ',')]
    beside: Vec<String>,
    /// The profile of the run (rounds, samples) [default: quick].
    #[arg(long)]
    profile: Option<String>,
    /// Directory for the results file [default: results].
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// Also count instructions under callgrind (as `run --instructions`).
    #[arg(long)]
    instructions: bool,
    /// Relative change of the median that counts (as compare's).
    #[arg(long, default_value_t = 0.05)]
    threshold: f64,
    /// Significance level (as compare's).
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// `SCENARIO@BUS` or `SCENARIO`, both known to the matrix.
fn parse_cell(m: &crate::matrix::Matrix, text: &str) -> Result<CellAsk> {
    let (scenario, bus) = match text.split_once('@') {
        Some((s, b)) => (s, Some(b.to_string())),
        None => (text, None),
    };
    m.select_scenarios(&[scenario.to_string()])
        .with_context(|| format!("--cell {text:?}"))?;
    let ipc = harness::scenario::find(scenario).is_some_and(|s| s.ipc_op().is_some());
    match (&bus, ipc) {
        (Some(b), true) => {
            m.select_buses(std::slice::from_ref(b))
                .with_context(|| format!("--cell {text:?}"))?;
        }
        (None, true) => bail!("--cell {text:?}: an IPC scenario needs its bus (SCENARIO@BUS)"),
        (Some(_), false) => bail!("--cell {text:?}: a codec scenario runs on no bus (give SCENARIO alone)"),
        (None, false) => {}
    }
    Ok(CellAsk {
        scenario: scenario.to_string(),
        bus,
    })
}

pub fn exec(args: Args, ctx: &Context) -> Result<ExitCode> {
    check_significance(args.threshold, args.alpha)?;
    crate::process::scratch::remove_dead_runs();
    let mut matrix = ctx.load_matrix()?;
    let adapter = matrix.select_adapters(std::slice::from_ref(&args.adapter))?[0].clone();
    ensure!(
        !adapter.is_program() && !adapter.own_lockfile && adapter.version_line.is_none(),
        "--adapter {}: not a member of the benches workspace built from the registry (a program, an \
         own-lockfile adapter or a machine's package cannot be built with other releases)",
        adapter.id
    );
    let krate = args.krate.clone().unwrap_or_else(|| adapter.library.clone());
    let from = Version::parse(&args.from).context("--from")?;
    let to = Version::parse(&args.to).context("--to")?;
    ensure!(from < to, "--from {from} must be an older release than --to {to}");
    let asks: Vec<CellAsk> = args
        .cell
        .iter()
        .map(|c| parse_cell(&matrix, c))
        .collect::<Result<_>>()?;
    if !args.beside.is_empty() {
        matrix.select_adapters(&args.beside).context("--beside")?;
    }
    let beside = args.beside.clone();
    if let Some(p) = &args.profile {
        matrix.profile(p)?;
    }
    ensure!(
        !crate::matrix::prebuilt(),
        "bisect builds the adapter from source: run it from a checkout of the repository, not the prebuilt (Nix) runner"
    );
    let releases = index::between(&index::releases(&krate)?, from, to, &krate)?;
    errln!(
        "bisect: {} with {krate} {}",
        adapter.id,
        releases.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    );
    let rows: Vec<Row> = releases
        .iter()
        .map(|v| {
            Ok(Row {
                id: format!("{}@{v}", adapter.id),
                of: adapter.id.clone(),
                pin: Pin::parse(&format!("{krate}@={v}"))?,
            })
        })
        .collect::<Result<_>>()?;
    let bin_dir = ctx.bin_dir()?;
    let ids = crate::pin::add(&mut matrix, &rows, &bin_dir, ctx.interrupted())?;
    let mut scenarios: Vec<String> = asks.iter().map(|a| a.scenario.clone()).collect();
    scenarios.dedup();
    let mut buses: Vec<String> = asks.iter().filter_map(|a| a.bus.clone()).collect();
    buses.sort();
    buses.dedup();
    let opts = run::RunOptions {
        matrix,
        profile: args.profile,
        adapters: beside.iter().chain(&ids).cloned().collect(),
        scenarios,
        buses,
        system_bus: false,
        out_dir: args.out.unwrap_or_else(|| "results".into()),
        bin_dir,
        resume: None,
        cell_timeout: None,
        progress: !args.quiet,
        placement: None,
        instructions: args.instructions,
        roles: Vec::new(),
        reference: None,
    };
    let summary = run::run(opts, ctx.interrupted.clone())?;
    if summary.interrupted {
        errln!(
            "interrupted: the results so far are in {} (`dbus-matrix run --resume` does not know bisect's rows: run bisect again)",
            summary.path.display()
        );
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    let rows: Vec<(String, String)> = ids
        .iter()
        .zip(&releases)
        .map(|(id, v)| (id.clone(), v.to_string()))
        .collect();
    let copts = CompareOptions {
        threshold: args.threshold,
        alpha: args.alpha,
        adapters: Vec::new(),
        scenarios: Vec::new(),
        buses: Vec::new(),
        allow_missing: false,
    };
    let beside: Vec<(String, String)> = beside
        .iter()
        .map(|id| {
            let version = summary
                .results
                .adapters
                .iter()
                .find(|a| a.id == *id)
                .map_or("?", |a| a.version.as_str());
            (id.clone(), format!("{id} {version} (beside)"))
        })
        .collect();
    let reports = bisect::report(&summary.results, &rows, &beside, &asks, &copts)?;
    out!("{}", bisect::markdown(&adapter.id, &krate, &reports))?;
    let failed = summary.failed();
    for c in &failed {
        errln!("failed: {} {}: {}", c.adapter, c.scenario, c.reason().unwrap_or(""));
    }
    errln!("results: {}", summary.path.display());
    Ok(exit_code(failed.is_empty(), EXIT_CELL_FAILED))
}
