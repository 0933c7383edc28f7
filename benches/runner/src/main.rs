//! `dbus-matrix`: runs the D-Bus library benchmark matrix and reports on it.
//!
//! Exit status: 0 success; 1 a cell failed (run), verification failed, or a
//! significant regression (compare); 2 bad input (usage, matrix.toml, results file, missing binary,
//! no loadable file for history, a failed build in build-times);
//! 130 interrupted (the results file keeps the finished cells).

mod adapters;
mod binsize;
mod build_times;
mod compare;
mod costs;
mod environment;
mod exec;
mod export;
mod history;
mod instructions;
mod ipc_run;
mod matrix;
mod placement;
mod run;
mod stats;
mod store;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand};

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

#[derive(Subcommand)]
enum Cmd {
    /// Run the matrix and write a results file.
    Run {
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
        /// Seconds after which a cell is killed and marked failed.
        #[arg(long)]
        cell_timeout: Option<f64>,
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
    },
    /// Print a results file as a table, or in another tool's format (bmf, critcmp).
    Report {
        file: PathBuf,
        #[arg(long, value_enum, default_value = "markdown")]
        format: export::Format,
        /// critcmp only: the baseline name (default: the run's start time and
        /// profile, e.g. 2026-11-23T101500Z-quick). critcmp keys baselines by
        /// name, so the runs compared must have different names.
        #[arg(long)]
        baseline: Option<String>,
    },
    /// Compare two results files cell by cell: NEW/OLD with a significance verdict.
    /// Exits 1 when a cell regressed significantly beyond --threshold or broke.
    Compare {
        old: PathBuf,
        new: PathBuf,
        /// Relative change of the median that counts (0.05 = 5%); smaller significant changes are "unchanged".
        #[arg(long, default_value_t = 0.05)]
        threshold: f64,
        /// Significance level of the Mann-Whitney U test on per-sample times.
        #[arg(long, default_value_t = 0.05)]
        alpha: f64,
        #[arg(long, value_enum, default_value = "markdown")]
        format: CompareFormat,
        #[command(flatten)]
        filter: CellFilter,
    },
    /// The medians of many runs over time, per cell, with steps marked (▲ slower, ▼ faster).
    History {
        /// Results files, or directories whose *.json files are read.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Relative change of the median from the series' level that counts as a step (0.05 = 5%).
        #[arg(long, default_value_t = 0.05)]
        threshold: f64,
        /// Significance level of the Mann-Whitney U test against the previous run.
        #[arg(long, default_value_t = 0.05)]
        alpha: f64,
        #[arg(long, value_enum, default_value = "markdown")]
        format: CompareFormat,
        #[command(flatten)]
        filter: CellFilter,
    },
    /// Check that every adapter does the same work (bytes and values), untimed.
    Verify {
        #[arg(long, value_delimiter = ',')]
        adapters: Vec<String>,
        #[arg(long, value_delimiter = ',')]
        scenarios: Vec<String>,
    },
    /// List adapters (with exact versions and support) and scenarios.
    List,
    /// Build time of each adapter: a release build of it where only the shared
    /// harness is already built (needs a checkout and cargo).
    BuildTimes {
        /// Only these adapters (comma-separated ids from matrix.toml).
        #[arg(long, value_delimiter = ',')]
        adapters: Vec<String>,
        /// Cargo's -j (default: the number of CPUs).
        #[arg(long)]
        jobs: Option<u32>,
        #[arg(long, value_enum, default_value = "markdown")]
        format: CompareFormat,
        /// Also record the figures in this results file's adapters (`build`).
        #[arg(long)]
        into: Option<PathBuf>,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
}

/// Which cells `compare` and `history` look at.
#[derive(clap::Args)]
struct CellFilter {
    /// Only these adapters (comma-separated ids).
    #[arg(long, value_delimiter = ',')]
    adapters: Vec<String>,
    /// Only these scenarios (comma-separated ids).
    #[arg(long, value_delimiter = ',')]
    scenarios: Vec<String>,
    /// Only IPC cells on these buses (comma-separated ids).
    #[arg(long, value_delimiter = ',')]
    buses: Vec<String>,
}

fn check_significance(threshold: f64, alpha: f64) -> anyhow::Result<()> {
    anyhow::ensure!(threshold >= 0.0, "--threshold must not be negative");
    anyhow::ensure!(alpha > 0.0 && alpha < 1.0, "--alpha must be between 0 and 1");
    Ok(())
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum CompareFormat {
    Markdown,
    Json,
}

const EXIT_CELL_FAILED: u8 = 1;
const EXIT_REGRESSED: u8 = 1;
const EXIT_BAD_INPUT: u8 = 2;
const EXIT_INTERRUPTED: u8 = 130;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let interrupted = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second signal ends the runner at once; the first lets it clean up.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, EXIT_INTERRUPTED as i32, interrupted.clone());
        let _ = signal_hook::flag::register(sig, interrupted.clone());
    }
    match real_main(cli, interrupted) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn real_main(cli: Cli, interrupted: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    let load_matrix = || matrix::Matrix::load(&matrix::locate(cli.matrix.as_deref())?);
    match cli.command {
        Cmd::Run {
            profile,
            adapters,
            scenarios,
            buses,
            system_bus,
            out,
            resume,
            cell_timeout,
            quiet,
            pin,
            instructions,
        } => {
            let opts = run::RunOptions {
                matrix: load_matrix()?,
                profile,
                adapters,
                scenarios,
                buses,
                system_bus,
                out_dir: out,
                bin_dir: adapters::bin_dir(cli.bin_dir.as_deref())?,
                resume,
                cell_timeout: cell_timeout.map(Duration::from_secs_f64),
                progress: !quiet,
                placement: placement::Placement::parse(&pin)?,
                instructions,
            };
            let summary = run::run(opts, interrupted)?;
            print!("{}", export::markdown::render(&summary.results));
            let failed = summary.failed();
            for c in &failed {
                eprintln!("failed: {} {}: {}", c.adapter, c.scenario, c.reason().unwrap_or(""));
            }
            eprintln!(
                "results: {} ({} cells: {} failed)",
                summary.path.display(),
                summary.results.cells.len(),
                failed.len()
            );
            if summary.interrupted {
                eprintln!(
                    "interrupted: finish with `dbus-matrix run --resume {}`",
                    summary.path.display()
                );
                return Ok(ExitCode::from(EXIT_INTERRUPTED));
            }
            Ok(if failed.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_CELL_FAILED)
            })
        }
        Cmd::Report { file, format, baseline } => {
            let results = store::load(&file)?;
            match (format, baseline) {
                (export::Format::Critcmp, Some(name)) => {
                    anyhow::ensure!(!name.trim().is_empty(), "--baseline must not be empty");
                    print!("{}", export::critcmp::render(&results, &name));
                }
                (_, Some(_)) => anyhow::bail!("--baseline is only for --format critcmp"),
                (format, None) => print!("{}", export::render(&results, format)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Compare {
            old,
            new,
            threshold,
            alpha,
            format,
            filter,
        } => {
            check_significance(threshold, alpha)?;
            let (old_results, new_results) = (store::load(&old)?, store::load(&new)?);
            let opts = compare::CompareOptions {
                threshold,
                alpha,
                adapters: filter.adapters,
                scenarios: filter.scenarios,
                buses: filter.buses,
            };
            let c = compare::compare(&old_results, &new_results, &opts)?;
            match format {
                CompareFormat::Markdown => print!("{}", compare::markdown(&c)),
                CompareFormat::Json => println!("{}", serde_json::to_string_pretty(&c)?),
            }
            Ok(if c.regressions() > 0 {
                ExitCode::from(EXIT_REGRESSED)
            } else {
                ExitCode::SUCCESS
            })
        }
        Cmd::History {
            inputs,
            threshold,
            alpha,
            format,
            filter,
        } => {
            check_significance(threshold, alpha)?;
            let (runs, errors) = history::load_inputs(&inputs);
            history::report_skipped(runs.len(), &errors)?;
            let opts = history::HistoryOptions {
                threshold,
                alpha,
                adapters: filter.adapters,
                scenarios: filter.scenarios,
                buses: filter.buses,
            };
            let h = history::history(&runs, &opts)?;
            match format {
                CompareFormat::Markdown => print!("{}", history::markdown(&h)),
                CompareFormat::Json => println!("{}", serde_json::to_string_pretty(&h)?),
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Verify { adapters, scenarios } => {
            let m = load_matrix()?;
            let bin_dir = adapters::bin_dir(cli.bin_dir.as_deref())?;
            let scratch = run::ScratchDir::new()?;
            let mut failures = 0;
            for a in m.select_adapters(&adapters)? {
                let bin = adapters::binary(&bin_dir, a)?;
                // IPC scenarios need a live service; each IPC cell verifies itself before timing.
                let codec_scenarios = m
                    .select_scenarios(&scenarios)?
                    .into_iter()
                    .filter(|s| harness::scenario::find(&s.id).is_some_and(|s| s.ipc_op().is_none()));
                for s in codec_scenarios {
                    let c = verify::check(&a.id, &bin, &s.id, scratch.path(), &interrupted);
                    let line = match &c.verdict {
                        verify::Verdict::Passed(notes) if notes.is_empty() => "ok".to_string(),
                        verify::Verdict::Passed(notes) => format!("ok ({})", notes.join("; ")),
                        verify::Verdict::Unsupported(r) => format!("unsupported: {r}"),
                        verify::Verdict::Failed(r) => {
                            failures += 1;
                            format!("FAILED: {r}")
                        }
                    };
                    println!("{:<24} {:<22} {line}", c.adapter, c.scenario);
                }
            }
            println!("verify: {failures} failed");
            Ok(if failures == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_CELL_FAILED)
            })
        }
        Cmd::BuildTimes {
            adapters,
            jobs,
            format,
            into,
            quiet,
        } => {
            if let Some(f) = &into {
                store::load(f)?; // a bad file is reported before anything is built
            }
            let m = load_matrix()?;
            let opts = build_times::Options {
                matrix: &m,
                adapters,
                jobs,
                progress: !quiet,
            };
            let report = match build_times::measure(opts, &interrupted) {
                Ok(r) => r,
                Err(e) if interrupted.load(std::sync::atomic::Ordering::SeqCst) => {
                    eprintln!("error: {e:#}");
                    return Ok(ExitCode::from(EXIT_INTERRUPTED));
                }
                Err(e) => return Err(e),
            };
            match format {
                CompareFormat::Markdown => print!("{}", build_times::markdown(&report)),
                CompareFormat::Json => println!("{}", serde_json::to_string_pretty(&report)?),
            }
            if let Some(f) = &into {
                build_times::record_into(f, &report)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::List => {
            let m = load_matrix()?;
            let bin_dir = adapters::bin_dir(cli.bin_dir.as_deref())?;
            let scratch = run::ScratchDir::new()?;
            println!("adapters ({}):", m.path.display());
            for a in &m.adapters {
                let desc = adapters::binary(&bin_dir, a)
                    .and_then(|bin| adapters::describe(&bin, scratch.path(), &interrupted))
                    .map(|d| {
                        // In matrix order, not the map's.
                        let unsupported: Vec<_> = m
                            .scenarios
                            .iter()
                            .filter(|s| d.unsupported.contains_key(&s.id))
                            .map(|s| s.id.as_str())
                            .collect();
                        let note = if unsupported.is_empty() {
                            String::new()
                        } else {
                            format!(" (unsupported: {})", unsupported.join(", "))
                        };
                        format!("{} {}{}", d.listing.library, d.listing.version, note)
                    })
                    .unwrap_or_else(|e| format!("not available: {e:#}"));
                println!("  {:<24} {desc}{}", a.id, if a.baseline { " [baseline]" } else { "" });
            }
            println!("scenarios:");
            for s in &m.scenarios {
                let summary = harness::scenario::find(&s.id).map_or("", |s| s.summary.as_str());
                println!("  {:<24} {summary}", s.id);
            }
            println!("profiles: {}", m.profile.keys().cloned().collect::<Vec<_>>().join(", "));
            Ok(ExitCode::SUCCESS)
        }
    }
}
