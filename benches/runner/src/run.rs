//! `dbus-matrix run`: plan the cells, drive the adapters one cell at a time,
//! write the results file after every cell.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use harness::results::{
    AdapterRecord, Cell, CellStatus, Measurement, ResultsFile, RunInfo, FORMAT_NAME, SCHEMA_VERSION,
};
use indicatif::{ProgressBar, ProgressStyle};

use crate::adapters::{self, Described};
use crate::matrix::{AdapterEntry, Matrix, Profile};
use crate::{environment, exec, store};

pub struct RunOptions {
    pub matrix: Matrix,
    pub profile: String,
    pub adapters: Vec<String>,
    pub scenarios: Vec<String>,
    pub out_dir: PathBuf,
    pub bin_dir: PathBuf,
    pub resume: Option<PathBuf>,
    /// Per-cell limit; by default derived from the profile.
    pub cell_timeout: Option<Duration>,
    pub progress: bool,
}

pub struct RunSummary {
    pub path: PathBuf,
    pub results: ResultsFile,
    pub interrupted: bool,
}

impl RunSummary {
    pub fn failed(&self) -> Vec<&Cell> {
        self.results
            .cells
            .iter()
            .filter(|c| c.status == CellStatus::Failed)
            .collect()
    }
}

/// Criterion needs warm-up + measurement, plus analysis and the process
/// start; slow operations can stretch sampling, hence the generous margin.
fn default_timeout(p: &Profile) -> Duration {
    Duration::from_secs_f64(60.0 + 4.0 * (p.warm_up + p.measurement))
}

struct Planned<'a> {
    adapter: &'a AdapterEntry,
    scenario: String,
}

pub fn run(opts: RunOptions, interrupted: Arc<AtomicBool>) -> Result<RunSummary> {
    let profile = opts.matrix.profile(&opts.profile)?.clone();
    let adapters = opts.matrix.select_adapters(&opts.adapters)?;
    let scenarios = opts.matrix.select_scenarios(&opts.scenarios)?;
    let timeout = opts.cell_timeout.unwrap_or_else(|| default_timeout(&profile));
    let binaries: Vec<PathBuf> = adapters
        .iter()
        .map(|a| adapters::binary(&opts.bin_dir, a))
        .collect::<Result<_>>()?;
    let scratch = ScratchDir::new()?;

    let (path, mut results) = match &opts.resume {
        Some(p) => {
            let r = store::load(p)?;
            if r.run.profile != opts.profile {
                bail!(
                    "{} was run with profile {:?}; resume it with --profile {}",
                    p.display(),
                    r.run.profile,
                    r.run.profile
                );
            }
            (p.clone(), r)
        }
        None => {
            std::fs::create_dir_all(&opts.out_dir)
                .with_context(|| format!("cannot create the output directory {}", opts.out_dir.display()))?;
            check_writable(&opts.out_dir)?;
            let started = environment::now_rfc3339();
            let name = format!("{}-{}.json", started.replace(':', ""), opts.profile);
            let repo = opts.matrix.path.parent().unwrap_or(Path::new("."));
            let results = ResultsFile {
                format: FORMAT_NAME.into(),
                schema_version: SCHEMA_VERSION,
                run: RunInfo {
                    started_at: started,
                    finished_at: None,
                    profile: opts.profile.clone(),
                    revision: environment::revision(repo),
                    tool_version: env!("CARGO_PKG_VERSION").into(),
                    command: std::env::args().collect(),
                    complete: false,
                },
                environment: environment::detect(),
                adapters: Vec::new(),
                cells: Vec::new(),
            };
            (opts.out_dir.join(name), results)
        }
    };

    // Ask every adapter what it is; one that cannot answer fails all its cells.
    let mut described: HashMap<&str, Result<Described, String>> = HashMap::new();
    for (a, bin) in adapters.iter().zip(&binaries) {
        let d = adapters::describe(bin, scratch.path(), &interrupted).map_err(|e| format!("{e:#}"));
        if let Ok(d) = &d {
            if d.listing.id != a.id {
                bail!(
                    "{} says it is adapter {:?}, but matrix.toml expects {:?}",
                    bin.display(),
                    d.listing.id,
                    a.id
                );
            }
            if d.listing.library != a.library {
                bail!(
                    "adapter {} measures {:?}, but matrix.toml says {:?}",
                    a.id,
                    d.listing.library,
                    a.library
                );
            }
        }
        // Every cell's adapter is recorded, even one that could not say its version.
        if !results.adapters.iter().any(|r| r.id == a.id) {
            results.adapters.push(AdapterRecord {
                id: a.id.clone(),
                library: a.library.clone(),
                version: d
                    .as_ref()
                    .map_or_else(|_| "unknown".into(), |d| d.listing.version.clone()),
                baseline: a.baseline,
            });
        }
        described.insert(a.id.as_str(), d);
    }

    let done: HashSet<(String, String)> = results
        .cells
        .iter()
        .map(|c| (c.adapter.clone(), c.scenario.clone()))
        .collect();
    // Scenario-major order, rotating the adapter order each scenario, so no
    // adapter always runs first (or always right after a heavy one).
    let mut plan = Vec::new();
    for (i, s) in scenarios.iter().enumerate() {
        for k in 0..adapters.len() {
            let a = adapters[(i + k) % adapters.len()];
            if !done.contains(&(a.id.clone(), s.id.clone())) {
                plan.push(Planned {
                    adapter: a,
                    scenario: s.id.clone(),
                });
            }
        }
    }

    let bar = if opts.progress {
        ProgressBar::new(plan.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    store::write_atomic(&path, &results)?;
    let mut was_interrupted = false;
    for cell in plan {
        if interrupted.load(Ordering::SeqCst) {
            was_interrupted = true;
            break;
        }
        bar.set_message(format!("{} {}", cell.adapter.id, cell.scenario));
        let bin = opts.bin_dir.join(&cell.adapter.package);
        let c = run_cell(
            &cell,
            &bin,
            &described[cell.adapter.id.as_str()],
            &profile,
            timeout,
            scratch.path(),
            &interrupted,
        )?;
        if c.status == CellStatus::Failed {
            if interrupted.load(Ordering::SeqCst) {
                // An interrupted cell is missing, not failed: --resume runs it again.
                was_interrupted = true;
                break;
            }
            bar.println(format!(
                "failed: {} {}: {}",
                c.adapter,
                c.scenario,
                c.reason.as_deref().unwrap_or("")
            ));
        }
        results.cells.push(c);
        store::write_atomic(&path, &results)?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    results.run.complete = !was_interrupted;
    results.run.finished_at = Some(environment::now_rfc3339());
    store::write_atomic(&path, &results)?;
    Ok(RunSummary {
        path,
        results,
        interrupted: was_interrupted,
    })
}

fn run_cell(
    cell: &Planned,
    bin: &Path,
    described: &Result<Described, String>,
    profile: &Profile,
    timeout: Duration,
    scratch: &Path,
    interrupted: &AtomicBool,
) -> Result<Cell> {
    let mut c = Cell {
        adapter: cell.adapter.id.clone(),
        scenario: cell.scenario.clone(),
        bus: None,
        status: CellStatus::Failed,
        reason: None,
        measurement: None,
        elapsed_s: 0.0,
    };
    let d = match described {
        Ok(d) => d,
        Err(e) => {
            c.reason = Some(e.clone());
            return Ok(c);
        }
    };
    if let Some(reason) = d.unsupported.get(&cell.scenario) {
        c.status = CellStatus::Unsupported;
        c.reason = Some(reason.clone());
        return Ok(c);
    }
    let result_file = scratch.join("measurement.json");
    let _ = std::fs::remove_file(&result_file);
    let mut cmd = Command::new(bin);
    cmd.arg("bench")
        .arg("--scenario")
        .arg(&cell.scenario)
        .arg("--result")
        .arg(&result_file)
        .arg("--criterion-dir")
        .arg(scratch.join("criterion"))
        .arg("--sample-size")
        .arg(profile.sample_size.to_string())
        .arg("--warm-up")
        .arg(profile.warm_up.to_string())
        .arg("--measurement")
        .arg(profile.measurement.to_string());
    let _ = std::fs::remove_dir_all(scratch.join("criterion"));
    let out = exec::run(cmd, None, scratch, timeout, interrupted)?;
    c.elapsed_s = out.elapsed.as_secs_f64();
    if out.ending == exec::Ending::Exited(harness::cli::EXIT_UNSUPPORTED as i32) {
        c.status = CellStatus::Unsupported;
        c.reason = Some(out.stderr_tail(1).trim_start_matches("unsupported: ").to_string());
        return Ok(c);
    }
    if !out.success() {
        c.reason = Some(out.describe());
        return Ok(c);
    }
    match std::fs::read(&result_file)
        .map_err(anyhow::Error::from)
        .and_then(|b| serde_json::from_slice::<Measurement>(&b).map_err(Into::into))
    {
        Ok(m) => {
            c.status = CellStatus::Ok;
            c.measurement = Some(m);
        }
        Err(e) => c.reason = Some(format!("the adapter exited 0 but its result is unreadable: {e}")),
    }
    Ok(c)
}

fn check_writable(dir: &Path) -> Result<()> {
    let probe = dir.join(format!(".dbus-matrix-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").with_context(|| format!("the output directory {} is not writable", dir.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// A private (0700) scratch directory for one run, removed at the end.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    pub fn new() -> Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        let base = std::env::temp_dir();
        for n in 0..1000u32 {
            let p = base.join(format!("dbus-matrix-run-{}-{n}", std::process::id()));
            if std::fs::DirBuilder::new().mode(0o700).create(&p).is_ok() {
                return Ok(ScratchDir(p));
            }
        }
        bail!("cannot create a scratch directory in {}", base.display())
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
