//! The results schema (docs/results-schema.md describes it for readers).
//! One results file per run; adapters write one [`Measurement`] per cell and
//! the runner collects them into a [`ResultsFile`].
//!
//! Compatibility rule: readers accept any file whose `schema_version` is at
//! most [`SCHEMA_VERSION`]; new optional fields do not bump it, removed or
//! re-meant fields do. Version 2 added the run's [`Plan`], which `run
//! --resume` requires (files of version 1 are read, not resumed).

mod adapter;
mod costs;
mod instructions;
pub mod portability;

use serde::{Deserialize, Serialize};

pub use crate::raw_samples::{BenchResult, RawMeasurement, RawSample, RawSampleError};
pub use crate::roles::{InteropCheck, InteropPair, InteropStatus, InteropTable, Role, RolesPlan};
pub use adapter::{AdapterRecord, BuildRecord, PatchRecord, PatchedCrate, PinRecord};
pub use costs::{ConnectionMemory, IdleCost, IdleProcess, IpcCosts, ProcessCost};
pub use instructions::{CountMethod, IpcInstructions, ProcessInstructions};

pub const SCHEMA_VERSION: u32 = 2;
/// Written into every results file so that foreign JSON is recognised.
pub const FORMAT_NAME: &str = "dbus-matrix-results";

/// A point estimate with its 95% confidence interval, in nanoseconds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    pub point: f64,
    pub lower: f64,
    pub upper: f64,
}

/// Wall time per operation. One round (one `bench` of the adapter): as
/// criterion (or the direct timer) estimated it. Several rounds, spread over
/// the run: combined by the runner (`runner/src/run/rounds.rs`), the median
/// of the round medians with an interval from the variation between rounds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WallTime {
    pub median_ns: Estimate,
    pub mean_ns: Estimate,
    pub std_dev_ns: f64,
    /// Number of criterion samples.
    pub samples: usize,
    /// Total timed iterations over all samples.
    pub iterations: u64,
    /// Per-sample time per iteration (ns), for rank tests when comparing runs.
    pub sample_ns: Vec<f64>,
    /// The median of each round, in the order they ran; empty for one round
    /// (and in files from before rounds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_medians_ns: Vec<f64>,
}

impl WallTime {
    /// For samples timed one operation each (cold starts, slow operations):
    /// median with a distribution-free 95% interval (order statistics) and
    /// mean with a normal interval.
    pub fn from_samples(samples: &[f64]) -> WallTime {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = crate::stats::median_of_sorted(&s);
        let half = 0.98 * (n as f64).sqrt();
        let lo = ((n as f64 / 2.0 - half).floor().max(0.0) as usize).min(n - 1);
        let hi = ((n as f64 / 2.0 + half).ceil() as usize).min(n - 1);
        let mean = s.iter().sum::<f64>() / n as f64;
        let var = s.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n.max(2) - 1) as f64;
        let sd = var.sqrt();
        let se = sd / (n as f64).sqrt();
        WallTime {
            median_ns: Estimate {
                point: median,
                lower: s[lo].min(median),
                upper: s[hi].max(median),
            },
            mean_ns: Estimate {
                point: mean,
                lower: (mean - 1.96 * se).max(0.0),
                upper: mean + 1.96 * se,
            },
            std_dev_ns: sd,
            samples: n,
            iterations: n as u64,
            sample_ns: samples.to_vec(),
            round_medians_ns: Vec::new(),
        }
    }

    /// Width of the median's interval relative to the median,
    /// `(upper - lower) / point`; `None` for a zero median.
    pub fn relative_width(&self) -> Option<f64> {
        let e = &self.median_ns;
        (e.point > 0.0).then(|| (e.upper - e.lower) / e.point)
    }
}

/// Heap use per operation, from the counting allocator.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AllocCost {
    pub allocations_per_op: f64,
    pub bytes_per_op: f64,
}

/// What one adapter process measured for one cell.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Measurement {
    pub wall: WallTime,
    /// Bytes processed per operation (the wire message length).
    pub throughput_bytes: u64,
    pub alloc: Option<AllocCost>,
    /// Why `alloc` is absent, where it is not a Rust adapter's choice (an
    /// interpreter has no counting allocator): reports show `—` with this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alloc_unavailable: Option<String>,
    /// Instructions per operation under callgrind (set by the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_per_op: Option<f64>,
    /// Allowed differences seen when verifying before timing.
    pub verification_notes: Vec<String>,
    /// IPC cells: median divided by the median of the raw-socket floor of the
    /// same size measured in the same run (set by the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_ratio: Option<f64>,
    /// IPC cells: what one operation costs each process and the bus, counted
    /// over a separate window of operations after timing (set by the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub costs: Option<IpcCosts>,
    /// IPC cells under `run --instructions`: instructions per operation of
    /// each process, over their own window (set by the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipc_instructions: Option<IpcInstructions>,
    /// Why the timing was cut short (one operation over the profile's cell
    /// budget was timed once): the figure is one sample, not an estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
    /// IPC cells: where the processes ran, `unpinned` or the CPUs of each
    /// role (`client=0,server=0,bus=0`), as the runner placed them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// `connect/idle-connections/<n>`: memory with the n connections held
    /// (read by the runner, [`ConnectionMemory`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_memory: Option<ConnectionMemory>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CellStatus {
    Ok,
    Unsupported,
    Failed,
}

/// Which cell: an adapter on a scenario, on a bus for IPC scenarios, in a
/// role. Ordered by adapter, scenario, bus (no bus first), then role.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellKey {
    pub adapter: String,
    pub scenario: String,
    /// The bus for IPC scenarios; absent for marshal/demarshal.
    pub bus: Option<String>,
    /// Which side the adapter plays (`same` for every cell but `call/*`
    /// cells measured against the reference).
    pub role: Role,
}

/// How a cell ended. A measurement exists exactly when the cell is ok, and
/// a reason exactly when it is not (as docs/results.schema.json requires).
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Ok(Box<Measurement>),
    Unsupported { reason: String },
    Failed { reason: String },
}

impl Outcome {
    pub fn status(&self) -> CellStatus {
        match self {
            Outcome::Ok(_) => CellStatus::Ok,
            Outcome::Unsupported { .. } => CellStatus::Unsupported,
            Outcome::Failed { .. } => CellStatus::Failed,
        }
    }
}

/// One cell of a run. In the file it is a flat object (`status`, `reason`,
/// `measurement` side by side: [`CellRecord`], written in that field order);
/// loading refuses a status that disagrees with the fields present.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "CellRecord")]
pub struct Cell {
    pub adapter: String,
    pub scenario: String,
    /// The bus for IPC scenarios; absent for marshal/demarshal.
    pub bus: Option<String>,
    /// Which side the adapter plays; `same` (not written) for all but the
    /// client and server roles of `call/*` cells.
    pub role: Role,
    pub outcome: Outcome,
    /// Wall-clock seconds the cell took, including verification and warm-up.
    pub elapsed_s: f64,
}

impl Cell {
    /// A cell of `key` with `outcome` that took no time yet.
    pub fn new(key: CellKey, outcome: Outcome) -> Cell {
        Cell {
            adapter: key.adapter,
            scenario: key.scenario,
            bus: key.bus,
            role: key.role,
            outcome,
            elapsed_s: 0.0,
        }
    }

    pub fn key(&self) -> CellKey {
        CellKey {
            adapter: self.adapter.clone(),
            scenario: self.scenario.clone(),
            bus: self.bus.clone(),
            role: self.role,
        }
    }

    pub fn status(&self) -> CellStatus {
        self.outcome.status()
    }

    /// What an ok cell measured.
    pub fn measurement(&self) -> Option<&Measurement> {
        match &self.outcome {
            Outcome::Ok(m) => Some(m),
            _ => None,
        }
    }

    pub fn measurement_mut(&mut self) -> Option<&mut Measurement> {
        match &mut self.outcome {
            Outcome::Ok(m) => Some(m),
            _ => None,
        }
    }

    /// Why a cell is unsupported or failed.
    pub fn reason(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Ok(_) => None,
            Outcome::Unsupported { reason } | Outcome::Failed { reason } => Some(reason),
        }
    }

    pub fn median_ns(&self) -> Option<f64> {
        self.measurement().map(|m| m.wall.median_ns.point)
    }
}

/// A cell as the results file spells it (the format of schema version 1).
#[derive(Clone, Debug, Deserialize)]
pub struct CellRecord {
    pub adapter: String,
    pub scenario: String,
    #[serde(default)]
    pub bus: Option<String>,
    /// Absent: `same` (every file from before roles).
    #[serde(default)]
    pub role: Role,
    pub status: CellStatus,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub measurement: Option<Box<Measurement>>,
    pub elapsed_s: f64,
}

/// A cell record whose status disagrees with its fields.
#[derive(Debug, thiserror::Error)]
#[error("cell {adapter} {scenario}{}: {problem}", bus.as_ref().map(|b| format!(" on {b}")).unwrap_or_default())]
pub struct CellRecordError {
    pub adapter: String,
    pub scenario: String,
    pub bus: Option<String>,
    pub problem: &'static str,
}

impl TryFrom<CellRecord> for Cell {
    type Error = CellRecordError;

    fn try_from(r: CellRecord) -> Result<Cell, CellRecordError> {
        let outcome = match (r.status, r.measurement, r.reason) {
            (CellStatus::Ok, Some(m), None) => Ok(Outcome::Ok(m)),
            (CellStatus::Ok, None, _) => Err("status ok without a measurement"),
            (CellStatus::Ok, Some(_), Some(_)) => {
                Err("status ok with a reason (only unsupported and failed cells have one)")
            }
            (_, Some(_), _) => Err("a measurement although the status is not ok"),
            (_, None, None) => Err("no reason for a cell that is not ok"),
            (CellStatus::Unsupported, None, Some(reason)) => Ok(Outcome::Unsupported { reason }),
            (CellStatus::Failed, None, Some(reason)) => Ok(Outcome::Failed { reason }),
        };
        match outcome {
            Ok(outcome) => Ok(Cell {
                adapter: r.adapter,
                scenario: r.scenario,
                bus: r.bus,
                role: r.role,
                outcome,
                elapsed_s: r.elapsed_s,
            }),
            Err(problem) => Err(CellRecordError {
                adapter: r.adapter,
                scenario: r.scenario,
                bus: r.bus,
                problem,
            }),
        }
    }
}

impl Serialize for Cell {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// [`CellRecord`], borrowed.
        #[derive(Serialize)]
        struct Record<'a> {
            adapter: &'a str,
            scenario: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            bus: Option<&'a str>,
            #[serde(skip_serializing_if = "Role::is_same")]
            role: Role,
            status: CellStatus,
            #[serde(skip_serializing_if = "Option::is_none")]
            reason: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            measurement: Option<&'a Measurement>,
            elapsed_s: f64,
        }
        Record {
            adapter: &self.adapter,
            scenario: &self.scenario,
            bus: self.bus.as_deref(),
            role: self.role,
            status: self.status(),
            reason: self.reason(),
            measurement: self.measurement(),
            elapsed_s: self.elapsed_s,
        }
        .serialize(s)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    pub rustc: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_bytes: u64,
    pub kernel: String,
    pub os: String,
    /// SHA-256 prefix of the hostname: tells machines apart without naming them.
    pub hostname_hash: String,
    /// "host", or "nixos-vm" with the VM's cores and memory above.
    pub mode: String,
    /// `valgrind --version`, when instructions were counted (`run --instructions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valgrind: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    /// RFC 3339 UTC.
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    pub profile: String,
    /// Git revision of the checkout (or the flake's `self.rev`), "-dirty" when modified.
    pub revision: String,
    pub tool_version: String,
    /// The command line that produced this file.
    pub command: Vec<String>,
    /// CPU placement of client, server and bus (`client=0,server=1,bus=1`, or `none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// False while the run is going on or when it was interrupted.
    pub complete: bool,
    /// Every `run --resume` of this file, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumes: Vec<ResumeRecord>,
    /// The git revision the runner was built from (`unknown` when built without git).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_revision: Option<String>,
    /// The matrix file the run was planned from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<MatrixFileRecord>,
}

/// Which matrix.toml a run used: where it was and what it held.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MatrixFileRecord {
    /// Absolute path.
    pub path: String,
    /// SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ResultsFile {
    pub format: String,
    pub schema_version: u32,
    pub run: RunInfo,
    /// What the run was asked to do and what must match to resume it
    /// (absent in files of schema version 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
    pub environment: Environment,
    pub adapters: Vec<AdapterRecord>,
    /// The buses IPC cells ran on, with the daemon version.
    #[serde(default)]
    pub buses: Vec<BusRecord>,
    pub cells: Vec<Cell>,
    /// Which client libraries interoperate with which servers (`dbus-matrix
    /// interop`, or `run --interop`); absent when not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interop: Option<InteropTable>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BusRecord {
    pub id: String,
    /// Daemon and exact version, or why it could not be started.
    pub description: String,
}

/// What a run was asked to do, and the fingerprint of the setup that must
/// match to resume it (schema version 2; absent in older files).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Plan {
    /// `--adapters`, `--scenarios`, `--buses` as given (empty: not given, all).
    pub requested: Selection,
    /// The selection resolved against matrix.toml: what the run covers.
    pub resolved: Selection,
    /// `--system-bus`: IPC cells on the machine's system bus and p2p.
    pub system_bus: bool,
    pub profile: String,
    /// Seconds after which a cell is killed (`--cell-timeout` or the profile's default).
    pub cell_timeout_s: f64,
    /// `--pin`, as [`RunInfo::placement`] spells it.
    pub placement: String,
    /// `--instructions`.
    pub instructions: bool,
    /// `--roles` (absent: same-library cells only, as before roles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<RolesPlan>,
    pub fingerprint: Fingerprint,
}

/// Ids of adapters, scenarios and buses.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Selection {
    pub adapters: Vec<String>,
    pub scenarios: Vec<String>,
    pub buses: Vec<String>,
}

/// What must be the same to add cells to a file: besides these, the
/// machine facts of [`Environment`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Fingerprint {
    /// SHA-256 (hex) of matrix.toml as read.
    pub matrix_sha256: String,
    /// Every adapter of the plan as its binary described itself.
    pub adapters: Vec<AdapterVersion>,
    /// The criterion settings of the profile.
    pub profile: ProfileSettings,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AdapterVersion {
    pub id: String,
    pub library: String,
    /// Exact version, "unknown" when the binary could not say.
    pub version: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProfileSettings {
    pub sample_size: usize,
    pub warm_up_s: f64,
    pub measurement_s: f64,
    pub nresamples: usize,
    /// `criterion` or `direct` (absent in files from before: criterion).
    #[serde(default = "default_timer")]
    pub timer: String,
    /// Rounds per cell, at least and at most (absent in files from before: 1).
    #[serde(default = "one")]
    pub rounds: u32,
    #[serde(default = "one")]
    pub max_rounds: u32,
    /// A cell whose interval width (`WallTime::relative_width`) is above this
    /// gets more rounds (up to `max_rounds`) and is flagged in the reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_width: Option<f64>,
    /// Cells run at once (bus by bus); 1 for timing that means something.
    #[serde(default = "one")]
    pub jobs: u32,
    /// The IPC scenarios whose costs are counted; `None`: all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_scenarios: Option<Vec<String>>,
    /// Seconds: one operation slower than this is timed once (`Measurement::cut`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_budget_s: Option<f64>,
}

fn default_timer() -> String {
    "criterion".into()
}

fn one() -> u32 {
    1
}

/// One `run --resume` of the file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ResumeRecord {
    /// RFC 3339 UTC.
    pub started_at: String,
    pub command: Vec<String>,
    /// `--cell-timeout` given to the resume (the plan's otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_timeout_s: Option<f64>,
    /// Cells `--rerun` measured again (`adapter/scenario[@bus]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rerun: Vec<String>,
    /// `--force`: how the setup differed from the file's (`field: recorded … now …`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forced_differences: Vec<String>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn summary_of_known_samples() {
        let w = super::WallTime::from_samples(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!(w.median_ns.point, 3.0);
        assert_eq!(w.mean_ns.point, 3.0);
        assert!(w.median_ns.lower <= 3.0 && w.median_ns.upper >= 3.0);
        assert_eq!(w.samples, 5);
    }
}
