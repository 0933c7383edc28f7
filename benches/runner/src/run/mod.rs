//! `dbus-matrix run`: plan the cells ([`plan`]), ask every adapter what it is
//! ([`roster`]), run them group by group, in rounds ([`schedule`],
//! [`rounds`]), each cell ([`cell`]) with a bus session per bus
//! ([`bus_session`]), and write the results file after every cell.
//! What the run is, new or resumed, is resolved once first ([`setup`]); a
//! resumed run takes its plan from the file ([`resume`]).

mod bus_session;
mod cell;
pub mod interop;
mod match_rules;
mod plan;
pub mod preflight;
mod resume;
mod roster;
mod rounds;
mod schedule;
mod setup;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use harness::results::{Cell, CellStatus, Outcome, ResultsFile, Role};

use crate::matrix::Matrix;
use crate::placement::PlacementPolicy;
use crate::process::scratch::Scratch;
use crate::{environment, measure::instructions, process::adapter, progress, store};

pub use bus_session::{check_socket_room, BusSession};
pub use resume::ResumeRequest;
pub use setup::adapters_needed;
use setup::{Origin, RunSetup};

/// The longest `--cell-timeout`: a week (a full run of the whole matrix takes hours).
pub const MAX_CELL_TIMEOUT_S: f64 = 7.0 * 86_400.0;

/// A cell timeout of `secs` seconds, checked as `--cell-timeout` is (also
/// for the one a results file's plan records, which may have been edited).
pub fn cell_timeout_of_secs(secs: f64) -> Result<Duration, String> {
    if !(secs.is_finite() && secs > 0.0 && secs <= MAX_CELL_TIMEOUT_S) {
        return Err(format!(
            "seconds must be above 0 and at most {MAX_CELL_TIMEOUT_S} (a week)"
        ));
    }
    let d = Duration::from_secs_f64(secs);
    if d.is_zero() {
        return Err("seconds must be above 0 (this rounds to zero)".into());
    }
    Ok(d)
}

/// The options of `run` as given; a resumed run replaces the selection and
/// settings with the file's plan.
pub struct RunOptions {
    pub matrix: Matrix,
    /// `None`: `quick`, or the resumed file's.
    pub profile: Option<String>,
    pub adapters: Vec<String>,
    pub scenarios: Vec<String>,
    pub buses: Vec<String>,
    /// Use the machine's system bus (and p2p) instead of the matrix's private buses.
    pub system_bus: bool,
    pub out_dir: PathBuf,
    pub bin_dir: PathBuf,
    pub resume: Option<ResumeRequest>,
    /// Per-cell limit; by default derived from the profile.
    pub cell_timeout: Option<Duration>,
    pub progress: bool,
    /// `--pin`, or the resumed file's placement; `None`: the profile's.
    pub placement: Option<PlacementPolicy>,
    /// Also count instructions per operation under callgrind: codec cells,
    /// and every process of IPC cells.
    pub instructions: bool,
    /// `--roles` (empty: the profile's, or `same`).
    pub roles: Vec<Role>,
    /// `--reference` (default: matrix.toml's `[roles] reference`).
    pub reference: Option<String>,
}

pub struct RunSummary {
    pub path: PathBuf,
    /// The results file's write lock, held until the summary is dropped
    /// (`run --interop` writes the file again after the cells).
    pub _lock: store::WriteLock,
    pub results: ResultsFile,
    pub interrupted: bool,
}

impl RunSummary {
    pub fn failed(&self) -> Vec<&Cell> {
        self.results
            .cells
            .iter()
            .filter(|c| c.status() == CellStatus::Failed)
            .collect()
    }
}

pub fn run(mut opts: RunOptions, interrupted: Arc<AtomicBool>) -> Result<RunSummary> {
    let origin = Origin::open(&mut opts)?;
    let setup = RunSetup::resolve(&opts, &origin)?;
    let mut system_buses = Vec::new();
    let buses = plan::buses(&opts, &mut system_buses)?;
    origin.check_has_cells(&setup, &buses)?;
    let binaries = adapter::binaries(&opts.bin_dir, &setup.involved)?;
    let valgrind = if opts.instructions {
        Some(instructions::check_valgrind()?)
    } else {
        None
    };
    let scratch = Scratch::new("run")?;
    let has_ipc_cells = setup.resolved.iter().any(|s| {
        s.ipc_op()
            .is_some_and(|op| !matches!(op, harness::ipc::IpcOp::RawSocket(_)))
    });
    if has_ipc_cells {
        bus_session::check_socket_room(&buses, &setup.involved, scratch.path())?;
    }

    let mut begun = origin.begin(&setup, &opts)?;
    let roster = roster::describe_all(
        &setup.involved,
        binaries,
        scratch.path(),
        &interrupted,
        &mut begun.results,
    )?;
    let fingerprint = resume::fingerprint(&opts.matrix, &setup.profile, &setup.involved, &roster)?;
    let (path, lock) = origin.record(&setup, &opts, &buses, &mut begun, fingerprint, valgrind.clone())?;
    let mut results = begun.results;
    if valgrind.is_some() {
        // Also when resuming: the counted cells say which valgrind counted them.
        results.environment.valgrind = valgrind;
    }
    let done: HashSet<_> = results.cells.iter().map(|c| c.key()).collect();
    let plan = setup.plan(&buses, &done);

    let estimate: f64 = plan.iter().map(|p| schedule::cell_estimate(&setup.profile, p)).sum();
    let bar = progress::run_bar(schedule::to_ms(estimate), plan.len(), opts.progress);
    store::write_atomic(&path, &results)?;
    let results = Mutex::new(results);
    let shared = schedule::Shared {
        profile: &setup.profile,
        timeout: setup.timeout,
        interrupted: &interrupted,
        placement: setup.placement,
        instructions: opts.instructions,
        adapters: &setup.involved,
        reference: setup.roles.reference.as_deref(),
        roster: &roster,
        scratch: scratch.path(),
        bar: &bar,
        path: &path,
        results: &results,
    };
    let was_interrupted = schedule::run(&shared, schedule::groups(plan, &setup.profile))?;
    let mut results = results.into_inner().expect("results");
    bar.finish_and_clear();
    plan::sort_in_plan_order(&mut results);
    set_floor_ratios(&mut results);
    results.run.complete = !was_interrupted;
    results.run.finished_at = Some(environment::now_rfc3339());
    store::write_atomic(&path, &results)?;
    Ok(RunSummary {
        path,
        _lock: lock,
        results,
        interrupted: was_interrupted,
    })
}

/// Every IPC cell's ratio to the raw-socket floor of its size, from this run.
fn set_floor_ratios(results: &mut ResultsFile) {
    let baselines: HashSet<&str> = results
        .adapters
        .iter()
        .filter(|a| a.baseline)
        .map(|a| a.id.as_str())
        .collect();
    let floors: HashMap<String, f64> = results
        .cells
        .iter()
        .filter(|c| c.bus.is_none() && baselines.contains(c.adapter.as_str()))
        .filter_map(|c| Some((c.scenario.clone(), c.median_ns()?)))
        .collect();
    for c in &mut results.cells {
        let floor = harness::scenario::find(&c.scenario)
            .and_then(|s| s.ipc_op())
            .and_then(harness::scenario::floor_of)
            .and_then(|f| floors.get(&f).copied());
        if let (Outcome::Ok(m), Some(f)) = (&mut c.outcome, floor) {
            if c.bus.is_some() && f > 0.0 {
                m.floor_ratio = Some(m.wall.median_ns.point / f);
            }
        }
    }
}
