//! Which cells a run has: the matrix's selection, minus the cells a resumed
//! results file already holds, in the order they run.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use harness::ipc::IpcOp;
use harness::results::{CellKey, ResultsFile, Role, RunInfo, Selection, FORMAT_NAME, SCHEMA_VERSION};
use harness::scenario::Scenario;

use super::bus_session::SYSTEM_BUS;
use super::RunOptions;
use crate::environment;
use crate::matrix::{AdapterEntry, BusEntry, Profile, ScenarioEntry};
use crate::placement::PlacementPolicy;
use crate::roles::RoleSelection;

/// One cell to run.
pub struct Planned<'a> {
    pub adapter: &'a AdapterEntry,
    /// The harness's scenario, looked up once ([`resolve`]).
    pub scenario: &'static Scenario,
    /// `None` for marshal/demarshal and the raw-socket floor.
    pub bus: Option<&'a BusEntry>,
    /// Which side the adapter plays (`same` but for the client and server
    /// roles of `call/*` cells).
    pub role: Role,
}

/// The harness's scenario of each selected matrix entry: the one lookup of
/// a scenario id in a run. An id the harness does not know is an error
/// (matrix.toml is checked for them when read; this keeps the plan honest
/// if it was not), never a codec cell by default.
pub fn resolve(scenarios: &[&ScenarioEntry]) -> Result<Vec<&'static Scenario>> {
    scenarios
        .iter()
        .map(|s| {
            harness::scenario::find(&s.id)
                .with_context(|| format!("unknown scenario {:?}: the harness does not know it", s.id))
        })
        .collect()
}

/// Which cells exist: codec scenarios for every adapter; the raw-socket floor
/// for baseline adapters only; other IPC scenarios for every library adapter
/// on every bus, in each role `roles` selects. Order: scenario-major, then
/// role, rotating the adapter order each scenario so no adapter always runs
/// first (or right after a heavy one).
pub fn plan<'a>(
    adapters: &[&'a AdapterEntry],
    scenarios: &[&'static Scenario],
    buses: &[&'a BusEntry],
    roles: &RoleSelection,
    done: &HashSet<CellKey>,
) -> Vec<Planned<'a>> {
    let mut plan = Vec::new();
    let groups = std::iter::once(None).chain(buses.iter().map(|b| Some(*b)));
    for bus in groups {
        for (i, s) in scenarios.iter().enumerate() {
            let op = s.ipc_op();
            let is_floor = matches!(op, Some(IpcOp::RawSocket(_)));
            let on_bus = op.is_some() && !is_floor;
            if on_bus != bus.is_some() {
                continue;
            }
            for role in Role::ALL {
                for k in 0..adapters.len() {
                    let a = adapters[(i + k) % adapters.len()];
                    let wanted = match op {
                        None => role.is_same(),
                        Some(_) if is_floor => a.baseline && role.is_same(),
                        Some(_) => !a.baseline && roles.wants(a, &s.id, role),
                    };
                    let key = CellKey {
                        adapter: a.id.clone(),
                        scenario: s.id.clone(),
                        bus: bus.map(|b| b.id.clone()),
                        role,
                    };
                    if wanted && !done.contains(&key) {
                        plan.push(Planned {
                            adapter: a,
                            scenario: s,
                            bus,
                            role,
                        });
                    }
                }
            }
        }
    }
    plan
}

/// The buses IPC cells run on: the matrix's selection, or with `--system-bus`
/// the machine's system bus and p2p (entries owned by `storage`).
pub fn buses<'a>(opts: &'a RunOptions, storage: &'a mut Vec<BusEntry>) -> Result<Vec<&'a BusEntry>> {
    if !opts.system_bus {
        return opts.matrix.select_buses(&opts.buses);
    }
    *storage = [SYSTEM_BUS, "p2p"]
        .map(|id| BusEntry {
            id: id.into(),
            debian: None,
            cargo: None,
            crate_sha256: None,
            nix: None,
            nixos_implementation: None,
        })
        .into();
    Ok(storage.iter().collect())
}

/// Criterion needs warm-up + measurement, plus analysis and the process start.
pub fn default_timeout(p: &Profile) -> Duration {
    // The base covers verification plus the slow-operation path (a few
    // operations that may take seconds each, e.g. a quadratic decoder).
    Duration::from_secs_f64(300.0 + 4.0 * (p.warm_up + p.measurement))
}

/// A new results file's content (no cells yet) and its name without
/// `.json`: the run's start and profile. Nothing is written yet.
pub fn new_results(opts: &RunOptions, profile: &str, placement: &PlacementPolicy) -> Result<(String, ResultsFile)> {
    std::fs::create_dir_all(&opts.out_dir)
        .with_context(|| format!("cannot create the output directory {}", opts.out_dir.display()))?;
    check_writable(&opts.out_dir)?;
    let started = environment::now_rfc3339();
    let stem = format!("{}-{profile}", started.replace(':', ""));
    let repo = opts.matrix.path.parent().unwrap_or(Path::new("."));
    let results = ResultsFile {
        format: FORMAT_NAME.into(),
        schema_version: SCHEMA_VERSION,
        run: RunInfo {
            started_at: started,
            finished_at: None,
            profile: profile.into(),
            revision: environment::revision(repo),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            command: std::env::args().collect(),
            placement: Some(placement.describe()),
            complete: false,
            resumes: Vec::new(),
            runner_revision: Some(environment::BUILT_FROM.into()),
            matrix: Some(opts.matrix.record()),
        },
        plan: None,
        environment: environment::detect(),
        adapters: Vec::new(),
        buses: Vec::new(),
        cells: Vec::new(),
        interop: None,
    };
    Ok((stem, results))
}

/// The selection of a run: as requested and resolved.
pub fn selection(
    opts: &RunOptions,
    adapters: &[&AdapterEntry],
    scenarios: &[&ScenarioEntry],
    buses: &[&BusEntry],
) -> (Selection, Selection) {
    let ids = |v: Vec<&String>| v.into_iter().cloned().collect();
    (
        Selection {
            adapters: opts.adapters.clone(),
            scenarios: opts.scenarios.clone(),
            buses: opts.buses.clone(),
        },
        Selection {
            adapters: ids(adapters.iter().map(|a| &a.id).collect()),
            scenarios: ids(scenarios.iter().map(|s| &s.id).collect()),
            buses: ids(buses.iter().map(|b| &b.id).collect()),
        },
    )
}

fn check_writable(dir: &Path) -> Result<()> {
    let probe = dir.join(format!(".dbus-matrix-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").with_context(|| format!("the output directory {} is not writable", dir.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// Puts the buses and cells in the order of the plan's selection: buses in
/// matrix order; cells without a bus first, then bus by bus; within, scenario
/// by scenario, adapters in matrix order. Workers and rounds start buses and
/// finish cells in another order; readers (the reports' columns and rows)
/// follow the file's.
pub fn sort_in_plan_order(results: &mut ResultsFile) {
    let Some(plan) = &results.plan else { return };
    let index = |list: &[String], id: &str| list.iter().position(|x| x == id).unwrap_or(usize::MAX);
    let sel = &plan.resolved;
    results.buses.sort_by_key(|b| index(&sel.buses, &b.id));
    let key = |c: &harness::results::Cell| {
        let bus = c
            .bus
            .as_deref()
            .map_or(0, |b| 1 + index(&sel.buses, b).min(usize::MAX - 1));
        (
            bus,
            index(&sel.scenarios, &c.scenario),
            c.role,
            index(&sel.adapters, &c.adapter),
        )
    };
    let mut cells = std::mem::take(&mut results.cells);
    cells.sort_by_key(|c| key(c));
    results.cells = cells;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str) -> ScenarioEntry {
        ScenarioEntry {
            id: id.into(),
            profiles: None,
        }
    }

    #[test]
    fn scenarios_are_resolved_once_and_an_unknown_id_is_an_error() {
        let known = [entry("marshal/mixed"), entry("call/void")];
        let resolved = resolve(&known.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(resolved[0].id, "marshal/mixed");
        assert!(resolved[0].ipc_op().is_none());
        assert!(resolved[1].ipc_op().is_some());
        // Not a codec cell by default: the plan refuses it.
        let unknown = [entry("marshal/mixed"), entry("marshal/nope")];
        let e = resolve(&unknown.iter().collect::<Vec<_>>()).unwrap_err();
        assert!(e.to_string().contains("unknown scenario \"marshal/nope\""), "{e}");
    }
}
