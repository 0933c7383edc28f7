//! Timing with criterion, and reading its estimates back (criterion keeps
//! them on disk only).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use crate::contract::{CriterionSettings, Timer};
use crate::results::{Estimate, WallTime};
use crate::scenario::Scenario;

pub(super) struct Settings {
    pub sample_size: usize,
    pub warm_up: Duration,
    pub measurement: Duration,
    pub nresamples: usize,
    pub timer: Timer,
    pub budget: Option<Duration>,
}

impl TryFrom<&CriterionSettings> for Settings {
    type Error = anyhow::Error;

    fn try_from(s: &CriterionSettings) -> Result<Self> {
        let seconds = |name: &str, v: f64| {
            Duration::try_from_secs_f64(v)
                .ok()
                .filter(|d| !d.is_zero())
                .with_context(|| format!("--{name}={v}: not a number of seconds above 0"))
        };
        anyhow::ensure!(s.sample_size >= 1, "--sample-size=0: a round needs at least one sample");
        Ok(Settings {
            sample_size: s.sample_size,
            warm_up: seconds("warm-up", s.warm_up)?,
            measurement: seconds("measurement", s.measurement)?,
            nresamples: s.nresamples,
            timer: s.timer,
            budget: s.budget.map(|b| seconds("budget", b)).transpose()?,
        })
    }
}

pub(super) fn time_with_criterion(
    op: &mut dyn FnMut(),
    adapter_id: &str,
    scenario: &Scenario,
    settings: &Settings,
    dir: &Path,
) -> Result<WallTime> {
    let mut criterion = criterion::Criterion::default()
        .sample_size(settings.sample_size.max(10))
        .warm_up_time(settings.warm_up)
        .measurement_time(settings.measurement)
        .nresamples(settings.nresamples.max(1000))
        .without_plots()
        .with_output_color(false)
        .output_directory(dir);
    criterion
        .benchmark_group(adapter_id)
        .bench_function(scenario.id.replace('/', "_"), |b| b.iter(&mut *op));
    read_criterion_output(dir)
}

// The subset of criterion's `new/estimates.json` and `new/sample.json` we use.
#[derive(Deserialize)]
struct CriterionInterval {
    lower_bound: f64,
    upper_bound: f64,
}
#[derive(Deserialize)]
struct CriterionEstimate {
    point_estimate: f64,
    confidence_interval: CriterionInterval,
}
#[derive(Deserialize)]
struct CriterionEstimates {
    mean: CriterionEstimate,
    median: CriterionEstimate,
    std_dev: CriterionEstimate,
}
#[derive(Deserialize)]
struct CriterionSample {
    iters: Vec<f64>,
    times: Vec<f64>,
}

impl From<&CriterionEstimate> for Estimate {
    fn from(e: &CriterionEstimate) -> Self {
        Estimate {
            point: e.point_estimate,
            lower: e.confidence_interval.lower_bound,
            upper: e.confidence_interval.upper_bound,
        }
    }
}

fn find_file(dir: &Path, suffix: &Path) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let p = entry.path();
        if p.is_dir() {
            let candidate = p.join(suffix);
            if candidate.is_file() {
                return Some(candidate);
            }
            if let Some(found) = find_file(&p, suffix) {
                return Some(found);
            }
        }
    }
    None
}

/// Reads criterion's saved estimates back (criterion keeps them on disk only).
pub fn read_criterion_output(dir: &Path) -> Result<WallTime> {
    let est_path = find_file(dir, Path::new("new/estimates.json"))
        .with_context(|| format!("criterion wrote no new/estimates.json under {}", dir.display()))?;
    let sample_path = est_path.with_file_name("sample.json");
    let est: CriterionEstimates = serde_json::from_slice(&std::fs::read(&est_path)?)
        .with_context(|| format!("parsing {}", est_path.display()))?;
    let sample: CriterionSample = serde_json::from_slice(&std::fs::read(&sample_path)?)
        .with_context(|| format!("parsing {}", sample_path.display()))?;
    let sample_ns: Vec<f64> = sample.iters.iter().zip(&sample.times).map(|(i, t)| t / i).collect();
    Ok(WallTime {
        round_medians_ns: Vec::new(),
        median_ns: (&est.median).into(),
        mean_ns: (&est.mean).into(),
        std_dev_ns: est.std_dev.point_estimate,
        samples: sample_ns.len(),
        iterations: sample.iters.iter().sum::<f64>() as u64,
        sample_ns,
    })
}

/// A temporary directory removed on drop (no extra dependency for this).
pub(super) struct TempDir(PathBuf);

impl TempDir {
    pub(super) fn path(&self) -> &Path {
        &self.0
    }

    pub(super) fn new() -> Result<Self> {
        let base = std::env::temp_dir();
        for n in 0..1000u32 {
            let p = base.join(format!("dbus-matrix-criterion-{}-{n}", std::process::id()));
            if std::fs::create_dir(&p).is_ok() {
                return Ok(TempDir(p));
            }
        }
        bail!("could not create a temporary directory in {}", base.display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
