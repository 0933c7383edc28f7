//! `dbus-matrix run`: plan the cells ([`plan`]), ask every adapter what it is
//! ([`roster`]), run them group by group, in rounds ([`schedule`],
//! [`rounds`]), each cell ([`cell`]) with a bus session per bus
//! ([`bus_session`]), and write the results file after every cell.
//! A resumed run takes its plan from the file ([`resume`]).

mod bus_session;
mod cell;
mod cold_start;
mod held_memory;
pub mod interop;
mod match_rules;
mod parallel_clients;
mod plan;
pub mod preflight;
mod resume;
mod roster;
mod rounds;
mod schedule;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use harness::results::{Cell, CellStatus, Outcome, Plan, ResultsFile, Role};

use crate::matrix::{AdapterEntry, Matrix};
use crate::placement::PlacementPolicy;
use crate::process::scratch::Scratch;
use crate::roles::RoleSelection;
use crate::{environment, measure::instructions, process::adapter, progress, store};

pub use bus_session::{check_socket_room, BusSession};
pub use resume::ResumeRequest;

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
    /// Also count instructions per operation of codec cells under callgrind.
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

/// The selected adapters and the reference: it serves and calls in the other
/// roles' cells, so it is asked what it is and allowed on the bus like them.
fn involved<'m>(
    matrix: &'m Matrix,
    adapters: &[&'m AdapterEntry],
    roles: &RoleSelection,
) -> Result<Vec<&'m AdapterEntry>> {
    let mut involved = adapters.to_vec();
    if let Some(id) = &roles.reference {
        if !involved.iter().any(|a| &a.id == id) {
            involved.extend(matrix.select_adapters(std::slice::from_ref(id))?);
        }
    }
    Ok(involved)
}

/// The adapters a new run of `opts` involves (its selection and the
/// reference of its roles), for `run --preflight` and `--list-builds`.
pub fn adapters_needed(opts: &RunOptions) -> Result<Vec<&AdapterEntry>> {
    let profile_name = opts.profile.as_deref().unwrap_or("quick");
    let profile = opts.matrix.profile(profile_name)?;
    let roles = RoleSelection::resolve(&opts.matrix, profile, &opts.roles, opts.reference.as_deref())?;
    let adapters = opts.matrix.select_adapters(&opts.adapters)?;
    involved(&opts.matrix, &adapters, &roles)
}

pub fn run(mut opts: RunOptions, interrupted: Arc<AtomicBool>) -> Result<RunSummary> {
    let resumed = match &opts.resume {
        Some(req) => Some(resume::open(req, &opts)?),
        None => None,
    };
    if let Some(r) = &resumed {
        resume::apply_plan(&mut opts, &r.plan)?;
    }
    let profile_name = opts.profile.clone().unwrap_or_else(|| "quick".into());
    let profile = opts.matrix.profile(&profile_name)?.clone();
    let placement = match opts.placement {
        Some(p) => p,
        None => profile.placement_policy()?,
    };
    if !placement.allows_jobs(profile.jobs) {
        // Fixed CPUs would put two workers' clients, servers and buses together.
        anyhow::bail!(
            "profile {profile_name:?} runs {} cells at once (jobs), which --pin cannot place on fixed CPUs ({}): \
             use --pin one-cpu (a CPU per worker), or a profile of jobs = 1",
            profile.jobs,
            placement.describe()
        );
    }
    let roles = match &resumed {
        Some(r) => RoleSelection::from_plan(r.plan.roles.as_ref()),
        None => RoleSelection::resolve(&opts.matrix, &profile, &opts.roles, opts.reference.as_deref())?,
    };
    let adapters = opts.matrix.select_adapters(&opts.adapters)?;
    let involved = involved(&opts.matrix, &adapters, &roles)?;
    let mut scenarios = opts.matrix.select_scenarios(&opts.scenarios)?;
    if opts.scenarios.is_empty() {
        // Named scenarios run whatever the profile; otherwise the profile's own.
        scenarios.retain(|s| s.in_profile(&profile_name));
    }
    let mut system_buses = Vec::new();
    let buses = plan::buses(&opts, &mut system_buses)?;
    if resumed.is_none() && plan::plan(&adapters, &scenarios, &buses, &roles, &HashSet::new()).is_empty() {
        // Not an empty success: a typo'd or mismatched selection would look like a run.
        anyhow::bail!(
            "the selection has no cell to run (adapters {}; scenarios {}): e.g. a baseline scenario needs              the baseline adapter, an IPC scenario a library with a transport and a bus",
            ids(adapters.iter().map(|a| &a.id)),
            ids(scenarios.iter().map(|s| &s.id))
        );
    }
    let timeout = opts.cell_timeout.unwrap_or_else(|| match &resumed {
        Some(r) => r.cell_timeout,
        None => plan::default_timeout(&profile),
    });
    let binaries = adapter::binaries(&opts.bin_dir, &involved)?;
    let valgrind = if opts.instructions {
        Some(instructions::check_valgrind()?)
    } else {
        None
    };
    let scratch = Scratch::new("run")?;
    let has_ipc_cells = scenarios.iter().any(|s| {
        let op = harness::scenario::find(&s.id).and_then(|sc| sc.ipc_op());
        op.is_some_and(|op| !matches!(op, harness::ipc::IpcOp::RawSocket(_)))
    });
    if has_ipc_cells {
        bus_session::check_socket_room(&buses, &involved, scratch.path())?;
    }

    let (mut results, new_stem) = match &resumed {
        Some(r) => (r.results.clone(), None),
        None => {
            let (stem, results) = plan::new_results(&opts, &profile_name, &placement)?;
            (results, Some(stem))
        }
    };
    let roster = roster::describe_all(&involved, binaries, scratch.path(), &interrupted, &mut results)?;
    let fingerprint = resume::fingerprint(&opts.matrix, &profile, &involved, &roster)?;
    let (path, lock) = match resumed {
        Some(r) => {
            let mut now = environment::detect();
            now.valgrind = valgrind.clone();
            let differences = resume::differences(&results, &r.plan.fingerprint, &fingerprint, &now);
            let record = resume::record(opts.cell_timeout.map(|t| t.as_secs_f64()), r.rerun);
            let force = opts.resume.as_ref().is_some_and(|q| q.force);
            resume::admit(&r.path, &mut results, differences, force, record)?;
            resume::learn_versions(&mut results, &fingerprint);
            (r.path, r.lock)
        }
        None => {
            let (requested, resolved) = plan::selection(&opts, &adapters, &scenarios, &buses);
            results.plan = Some(Plan {
                requested,
                resolved,
                system_bus: opts.system_bus,
                profile: profile_name.clone(),
                cell_timeout_s: timeout.as_secs_f64(),
                placement: placement.describe(),
                instructions: opts.instructions,
                roles: roles.record(),
                fingerprint,
            });
            store::create_new(&opts.out_dir, &new_stem.unwrap_or_default(), &results)?
        }
    };
    if valgrind.is_some() {
        // Also when resuming: the counted cells say which valgrind counted them.
        results.environment.valgrind = valgrind;
    }
    let done: HashSet<_> = results.cells.iter().map(|c| c.key()).collect();
    let plan = plan::plan(&adapters, &scenarios, &buses, &roles, &done);

    let estimate: f64 = plan.iter().map(|p| schedule::cell_estimate(&profile, p)).sum();
    let bar = progress::run_bar(schedule::to_ms(estimate), plan.len(), opts.progress);
    store::write_atomic(&path, &results)?;
    let results = Mutex::new(results);
    let shared = schedule::Shared {
        profile: &profile,
        timeout,
        interrupted: &interrupted,
        placement,
        instructions: opts.instructions,
        adapters: &involved,
        reference: roles.reference.as_deref(),
        roster: &roster,
        scratch: scratch.path(),
        bar: &bar,
        path: &path,
        results: &results,
    };
    let was_interrupted = schedule::run(&shared, schedule::groups(plan))?;
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

fn ids<'a>(ids: impl Iterator<Item = &'a String>) -> String {
    let ids: Vec<&str> = ids.map(String::as_str).collect();
    match ids.is_empty() {
        true => "none".into(),
        false => ids.join(","),
    }
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
