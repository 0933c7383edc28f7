//! The command line every adapter binary shares (the adapter contract):
//!
//! ```text
//! <adapter> list                         JSON: id, library, version, scenarios with support
//! <adapter> emit --scenario ID           marshal: the wire bytes on stdout
//! <adapter> demarshal --scenario ID      reads wire bytes on stdin, prints the digest (hex)
//! <adapter> bench --scenario ID --result FILE [criterion settings]
//!                                        verify, count allocations, time with criterion,
//!                                        write a `Measurement` as JSON to FILE
//! <adapter> repeat --scenario ID --iterations N
//!                                        verify, then run the operation N times inside
//!                                        `dbus_matrix_measured_region` (for callgrind)
//! ```
//! Exit status: 0 success, 1 error (message on stderr), 3 scenario unsupported
//! by this library (reason on stderr).

use std::hint::black_box;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use serde::{Deserialize, Serialize};

use crate::adapter::{AdapterInfo, Codec};
use crate::digest::Digest;
use crate::payload::Body;
use crate::results::{AllocCost, Estimate, Measurement, WallTime};
use crate::scenario::{self, Kind, Scenario, Shape};
use crate::{alloc, verify, wire};

pub const EXIT_UNSUPPORTED: u8 = 3;

#[derive(Parser)]
#[command(about = "A dbus-matrix adapter (see harness::cli for the contract)")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print id, library, version and scenario support as JSON.
    List,
    /// Write the wire bytes of a marshal scenario to stdout.
    Emit {
        #[arg(long)]
        scenario: String,
    },
    /// Decode wire bytes from stdin as a demarshal scenario; print the digest.
    Demarshal {
        #[arg(long)]
        scenario: String,
    },
    /// Verify, then time one scenario with criterion.
    Bench {
        #[arg(long)]
        scenario: String,
        /// Where the `Measurement` JSON goes.
        #[arg(long)]
        result: PathBuf,
        /// Criterion's working directory (a fresh temporary one by default).
        #[arg(long)]
        criterion_dir: Option<PathBuf>,
        #[arg(long, default_value_t = 20)]
        sample_size: usize,
        /// Seconds.
        #[arg(long, default_value_t = 0.3)]
        warm_up: f64,
        /// Seconds.
        #[arg(long, default_value_t = 1.0)]
        measurement: f64,
    },
    /// Verify, then run the operation N times in `dbus_matrix_measured_region`.
    Repeat {
        #[arg(long)]
        scenario: String,
        #[arg(long)]
        iterations: u64,
    },
}

/// What `list` prints.
#[derive(Debug, Serialize, Deserialize)]
pub struct Listing {
    pub id: String,
    pub library: String,
    pub version: String,
    pub scenarios: Vec<ScenarioSupport>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct ScenarioSupport {
    pub id: String,
    pub supported: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The timed work of a cell, prepared and verified.
enum Input {
    Marshal(Body),
    Demarshal(Vec<u8>, Shape),
}

struct Prepared {
    input: Input,
    throughput_bytes: u64,
    notes: Vec<String>,
}

/// Entry point used by `adapter_main!`.
pub fn main<C: Codec>(info: AdapterInfo, make: impl FnOnce() -> C) -> ExitCode {
    let args = Args::parse();
    match run(info, make, args.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn find_scenario(id: &str) -> Result<&'static Scenario> {
    scenario::find(id).with_context(|| {
        let known: Vec<_> = scenario::all().map(|s| s.id).collect();
        format!("unknown scenario {id:?}; known: {}", known.join(", "))
    })
}

fn run<C: Codec>(info: AdapterInfo, make: impl FnOnce() -> C, command: Command) -> Result<ExitCode> {
    let mut codec = make();
    let scenario_id = match &command {
        Command::List => {
            let listing = Listing {
                id: info.id.into(),
                library: info.library.into(),
                version: info.version.into(),
                scenarios: scenario::all()
                    .map(|s| {
                        let reason = codec.unsupported(s);
                        ScenarioSupport {
                            id: s.id.into(),
                            supported: reason.is_none(),
                            reason,
                        }
                    })
                    .collect(),
            };
            println!("{}", serde_json::to_string_pretty(&listing)?);
            return Ok(ExitCode::SUCCESS);
        }
        Command::Emit { scenario }
        | Command::Demarshal { scenario }
        | Command::Bench { scenario, .. }
        | Command::Repeat { scenario, .. } => scenario.clone(),
    };
    let scenario = find_scenario(&scenario_id)?;
    if let Some(reason) = codec.unsupported(scenario) {
        eprintln!("unsupported: {reason}");
        return Ok(ExitCode::from(EXIT_UNSUPPORTED));
    }
    match command {
        Command::List => unreachable!(),
        Command::Emit { .. } => {
            if scenario.kind != Kind::Marshal {
                bail!("emit takes a marshal scenario, not {}", scenario.id);
            }
            let wire = codec.marshal(&scenario.body()).context("marshal failed")?;
            std::io::stdout().write_all(wire.as_ref())?;
        }
        Command::Demarshal { .. } => {
            if scenario.kind != Kind::Demarshal {
                bail!("demarshal takes a demarshal scenario, not {}", scenario.id);
            }
            let mut bytes = Vec::new();
            std::io::stdin().read_to_end(&mut bytes)?;
            let mut digest = Digest::new();
            codec
                .demarshal(&bytes, scenario.shape(), &mut digest)
                .context("demarshal failed")?;
            println!("{:016x}", digest.finish());
        }
        Command::Bench {
            result,
            criterion_dir,
            sample_size,
            warm_up,
            measurement,
            ..
        } => {
            let prepared = prepare(&mut codec, scenario)?;
            let alloc = count_allocations(&mut codec, &prepared.input);
            let scratch;
            let dir = match criterion_dir {
                Some(d) => d,
                None => {
                    scratch = TempDir::new()?;
                    scratch.0.clone()
                }
            };
            let settings = Settings {
                sample_size,
                warm_up: Duration::from_secs_f64(warm_up),
                measurement: Duration::from_secs_f64(measurement),
            };
            let wall = time_with_criterion(&mut codec, &prepared.input, info.id, scenario, &settings, &dir)?;
            let m = Measurement {
                wall,
                throughput_bytes: prepared.throughput_bytes,
                alloc: Some(alloc),
                instructions_per_op: None,
                verification_notes: prepared.notes,
            };
            std::fs::write(&result, serde_json::to_vec_pretty(&m)?)
                .with_context(|| format!("writing {}", result.display()))?;
        }
        Command::Repeat { iterations, .. } => {
            let prepared = prepare(&mut codec, scenario)?;
            let mut op = operation(&mut codec, &prepared.input);
            dbus_matrix_measured_region(&mut || {
                for _ in 0..iterations {
                    op();
                }
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds the input and checks the adapter's result against the canonical
/// one: nothing is timed unless this passes.
fn prepare<C: Codec>(codec: &mut C, scenario: &Scenario) -> Result<Prepared> {
    let body = scenario.body();
    match scenario.kind {
        Kind::Marshal => {
            let wire = codec.marshal(&body).context("marshal failed")?;
            let bytes = wire.as_ref();
            let verdict = verify::verify_signal(bytes, &body)
                .with_context(|| format!("verification of {} failed", scenario.id))?;
            Ok(Prepared {
                throughput_bytes: bytes.len() as u64,
                notes: verdict.notes,
                input: Input::Marshal(body),
            })
        }
        Kind::Demarshal => {
            let bytes = wire::canonical_signal(&body);
            let mut digest = Digest::new();
            codec
                .demarshal(&bytes, scenario.shape(), &mut digest)
                .context("demarshal failed")?;
            verify::verify_digest(digest.finish(), &body)
                .with_context(|| format!("verification of {} failed", scenario.id))?;
            Ok(Prepared {
                throughput_bytes: bytes.len() as u64,
                notes: Vec::new(),
                input: Input::Demarshal(bytes, scenario.shape()),
            })
        }
    }
}

/// The timed operation. It was verified by `prepare`, so a failure here is a
/// library fault worth a panic (the runner reports it as a failed cell).
fn operation<'a, C: Codec>(codec: &'a mut C, input: &'a Input) -> impl FnMut() + 'a {
    move || match input {
        Input::Marshal(body) => {
            black_box(
                codec
                    .marshal(black_box(body))
                    .expect("marshal failed after verification"),
            );
        }
        Input::Demarshal(bytes, shape) => {
            let mut digest = Digest::new();
            codec
                .demarshal(black_box(bytes), *shape, &mut digest)
                .expect("demarshal failed after verification");
            black_box(digest.finish());
        }
    }
}

/// The region callgrind counts (`--toggle-collect=dbus_matrix_measured_region`).
#[no_mangle]
#[inline(never)]
pub extern "Rust" fn dbus_matrix_measured_region(f: &mut dyn FnMut()) {
    f();
}

fn count_allocations<C: Codec>(codec: &mut C, input: &Input) -> AllocCost {
    const OPS: u64 = 16;
    let mut op = operation(codec, input);
    op(); // first-call effects (lazy statics, buffer growth) are not per-op costs
    let (a0, b0) = alloc::snapshot();
    for _ in 0..OPS {
        op();
    }
    let (a1, b1) = alloc::snapshot();
    AllocCost {
        allocations_per_op: (a1 - a0) as f64 / OPS as f64,
        bytes_per_op: (b1 - b0) as f64 / OPS as f64,
    }
}

struct Settings {
    sample_size: usize,
    warm_up: Duration,
    measurement: Duration,
}

fn time_with_criterion<C: Codec>(
    codec: &mut C,
    input: &Input,
    adapter_id: &str,
    scenario: &Scenario,
    settings: &Settings,
    dir: &Path,
) -> Result<WallTime> {
    let mut criterion = criterion::Criterion::default()
        .sample_size(settings.sample_size.max(10))
        .warm_up_time(settings.warm_up)
        .measurement_time(settings.measurement)
        .without_plots()
        .with_output_color(false)
        .output_directory(dir);
    let mut op = operation(codec, input);
    criterion
        .benchmark_group(adapter_id)
        .bench_function(scenario.id.replace('/', "_"), |b| b.iter(&mut op));
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
        median_ns: (&est.median).into(),
        mean_ns: (&est.mean).into(),
        std_dev_ns: est.std_dev.point_estimate,
        samples: sample_ns.len(),
        iterations: sample.iters.iter().sum::<f64>() as u64,
        sample_ns,
    })
}

/// A temporary directory removed on drop (no extra dependency for this).
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self> {
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
