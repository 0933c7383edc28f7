//! Runs the plan: its cells in groups (the codec cells and the floor, then
//! one group per bus), each group by one worker with its own bus session;
//! `jobs` workers take groups at once. With more than one worker each group
//! is cut into `jobs` parts by adapter and the parts go longest first
//! ([`groups`]): three buses on two workers would otherwise leave one
//! worker measuring a whole bus alone at the end. Inside a group every timed cell gets
//! its rounds interleaved with the other cells' (round 1 of every cell, then
//! round 2, ...), and extra rounds go to the cells still wider than the
//! profile's target ([`rounds`]). A cell is recorded, and the results file
//! rewritten, the moment it is finished.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use harness::results::{Cell, CellStatus, Measurement, Outcome, ResultsFile};
use indicatif::ProgressBar;

use super::bus_session::{CurrentBus, SYSTEM_BUS};
use super::cell::{self, CellContext};
use super::plan::Planned;
use super::roster::RunAdapter;
use super::rounds;
use crate::matrix::{AdapterEntry, BusEntry, Profile};
use crate::placement::{Placement, PlacementPolicy};
use crate::{measure::costs, store};

/// What every worker shares.
pub struct Shared<'a> {
    pub profile: &'a Profile,
    pub timeout: Duration,
    pub interrupted: &'a AtomicBool,
    pub placement: PlacementPolicy,
    pub instructions: bool,
    /// Every adapter a cell involves: the selected ones and the reference.
    pub adapters: &'a [&'a AdapterEntry],
    /// The reference adapter of the client and server roles, if the run has them.
    pub reference: Option<&'a str>,
    pub roster: &'a HashMap<String, RunAdapter>,
    pub scratch: &'a Path,
    pub bar: &'a ProgressBar,
    pub path: &'a Path,
    pub results: &'a Mutex<ResultsFile>,
}

/// The cells of one bus (or of none: codec cells and the floor).
pub struct Group<'a> {
    bus: Option<&'a BusEntry>,
    cells: Vec<Planned<'a>>,
}

/// The plan cut where its bus changes (the plan is bus-major); with `jobs`
/// above 1, each of those cut again into `jobs` parts by adapter (an
/// adapter's cells stay together, in plan order; each part has a bus
/// session of its own), the parts longest first by [`cell_estimate`].
pub fn groups<'a>(plan: Vec<Planned<'a>>, profile: &Profile) -> Vec<Group<'a>> {
    let mut groups: Vec<Group> = Vec::new();
    for cell in plan {
        let bus_id = cell.bus.map(|b| &b.id);
        match groups.last_mut() {
            Some(g) if g.bus.map(|b| &b.id) == bus_id => g.cells.push(cell),
            _ => groups.push(Group {
                bus: cell.bus,
                cells: vec![cell],
            }),
        }
    }
    let jobs = profile.jobs as usize;
    if jobs <= 1 {
        return groups;
    }
    let mut parts: Vec<(f64, Group)> = groups
        .into_iter()
        .flat_map(|g| split(g, jobs, profile))
        .map(|g| (g.cells.iter().map(|c| cell_estimate(profile, c)).sum(), g))
        .collect();
    parts.sort_by(|a, b| b.0.total_cmp(&a.0)); // stable: equal parts keep plan order
    parts.into_iter().map(|(_, g)| g).collect()
}

/// A group cut into at most `parts` groups of whole adapters, balanced by
/// estimate (each adapter, heaviest first, to the lightest part so far).
fn split<'a>(group: Group<'a>, parts: usize, profile: &Profile) -> Vec<Group<'a>> {
    if group.bus.is_some_and(|b| b.id == SYSTEM_BUS) {
        // One bus both workers would share: servers own well-known names on
        // it, so two halves at once would refuse each other's reference server.
        return vec![group];
    }
    let mut adapters: Vec<(&str, f64)> = Vec::new();
    for c in &group.cells {
        let e = cell_estimate(profile, c);
        match adapters.iter_mut().find(|(id, _)| *id == c.adapter.id) {
            Some(a) => a.1 += e,
            None => adapters.push((&c.adapter.id, e)),
        }
    }
    if adapters.len() < 2 {
        return vec![group];
    }
    let mut by_weight = adapters.clone();
    by_weight.sort_by(|a, b| b.1.total_cmp(&a.1));
    let n = parts.min(adapters.len());
    let mut load = vec![0.0_f64; n];
    let mut part_of: HashMap<String, usize> = HashMap::new();
    for (id, weight) in by_weight {
        let lightest = (0..n).min_by(|&i, &j| load[i].total_cmp(&load[j])).expect("n >= 2");
        load[lightest] += weight;
        part_of.insert(id.to_string(), lightest);
    }
    let mut out: Vec<Group> = (0..n)
        .map(|_| Group {
            bus: group.bus,
            cells: Vec::new(),
        })
        .collect();
    for c in group.cells {
        out[part_of[&c.adapter.id]].cells.push(c);
    }
    out
}

/// Seconds one round of a cell is expected to take (the progress bar's
/// unit, so its ETA is sound from the first cells on).
pub fn round_estimate(profile: &Profile, cell: &Planned) -> f64 {
    let overhead = 0.05;
    let timing = match profile.timer {
        harness::contract::Timer::Criterion => profile.warm_up + profile.measurement + 0.05,
        harness::contract::Timer::Direct => profile.measurement,
    };
    timing + overhead + if cell.bus.is_some() { 0.02 } else { 0.0 }
}

/// The cost windows of a cell's first round, in seconds.
fn costs_estimate(profile: &Profile, cell: &Planned) -> f64 {
    let ipc = cell.scenario.ipc_op().is_some();
    match ipc && profile.costs.counts(&cell.scenario.id) {
        true => 2.0 * costs::WINDOW_SHARE * profile.measurement + 0.2,
        false => 0.0,
    }
}

/// A cell's whole expected time: its rounds and costs.
pub fn cell_estimate(profile: &Profile, cell: &Planned) -> f64 {
    profile.rounds as f64 * round_estimate(profile, cell) + costs_estimate(profile, cell)
}

/// Runs every group; `Ok(true)` when a signal stopped the run before its last cell.
pub fn run(shared: &Shared, groups: Vec<Group>) -> Result<bool> {
    let jobs = (shared.profile.jobs as usize).clamp(1, groups.len().max(1));
    let queue = Mutex::new(VecDeque::from(groups));
    let failed = AtomicBool::new(false); // a worker's error stops the others
    let stopped = AtomicBool::new(false); // a worker left cells unmeasured
    let errors = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|i| {
                let (queue, failed, stopped) = (&queue, &failed, &stopped);
                scope.spawn(move || -> Result<()> {
                    let scratch = shared.scratch.join(format!("worker-{i}"));
                    std::fs::create_dir_all(&scratch)
                        .with_context(|| format!("cannot create {}", scratch.display()))?;
                    loop {
                        // Not `while let … = queue.lock()…`: that would hold the
                        // lock for the whole group and serialise the workers.
                        let next = queue.lock().expect("queue").pop_front();
                        let Some(group) = next else { break };
                        if failed.load(Ordering::SeqCst) {
                            break;
                        }
                        match (Worker {
                            shared,
                            scratch: &scratch,
                            stop: failed,
                            placement: shared.placement.for_worker(i),
                        })
                        .group(group)
                        {
                            Ok(true) => {}
                            Ok(false) => stopped.store(true, Ordering::SeqCst),
                            Err(e) => {
                                failed.store(true, Ordering::SeqCst);
                                return Err(e);
                            }
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        workers
            .into_iter()
            .filter_map(|w| w.join().expect("a worker panicked").err())
            .collect::<Vec<_>>()
    });
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    let left = !queue.lock().expect("queue").is_empty();
    Ok(stopped.load(Ordering::SeqCst) || left)
}

/// A timed cell on its way through its rounds.
struct Pending<'p, 'a> {
    cell: &'p Planned<'a>,
    rounds: Vec<Measurement>,
    elapsed: Duration,
    /// Seconds of its estimate the progress bar has shown done.
    credited: f64,
    done: bool,
}

struct Worker<'w> {
    shared: &'w Shared<'w>,
    scratch: &'w Path,
    /// Another worker failed: stop as if interrupted.
    stop: &'w AtomicBool,
    /// The CPUs of this worker's cells.
    placement: Placement,
}

impl Worker<'_> {
    fn stopping(&self) -> bool {
        self.shared.interrupted.load(Ordering::SeqCst) || self.stop.load(Ordering::SeqCst)
    }

    /// The session of a cell's bus (started on its first cell, recorded in
    /// the results file); `None` for cells without a bus.
    fn session<'b>(&self, bus: &'b mut CurrentBus, cell: &Planned) -> Option<cell::Session<'b>> {
        let s = self.shared;
        cell.bus.map(|b| {
            bus.session(b, s.adapters, self.scratch, self.placement, s.bar, |record| {
                let mut results = s.results.lock().expect("results");
                results.buses.retain(|r| r.id != record.id);
                results.buses.push(record);
            })
        })
    }

    /// Measures a group; `Ok(false)` when it stopped before its last cell.
    fn group(&self, group: Group) -> Result<bool> {
        let s = self.shared;
        let ctx = CellContext {
            profile: s.profile,
            timeout: s.timeout,
            scratch: self.scratch,
            interrupted: s.interrupted,
            client_cpu: self.placement.client,
            instructions: s.instructions,
            reference: s.reference.and_then(|id| {
                let entry = s.adapters.iter().find(|a| a.id == id)?;
                Some(cell::Side {
                    entry,
                    adapter: s.roster.get(id)?,
                })
            }),
            placement: self.placement.describe(),
        };
        let mut bus = CurrentBus::default();
        let mut pending = Vec::new();
        for cell in &group.cells {
            if self.stopping() {
                return Ok(false);
            }
            let adapter = &s.roster[&cell.adapter.id];
            match cell::decided(&ctx, cell, adapter, self.session(&mut bus, cell).as_ref()) {
                Some(decided) => self.record(decided, cell_estimate(s.profile, cell))?,
                None => pending.push(Pending {
                    cell,
                    rounds: Vec::new(),
                    elapsed: Duration::ZERO,
                    credited: 0.0,
                    done: false,
                }),
            }
        }
        for round in 0..s.profile.max_rounds() {
            let mut any = false;
            for p in pending.iter_mut().filter(|p| !p.done) {
                if self.stopping() {
                    return Ok(false);
                }
                any = true;
                let on = p.cell.bus.map(|b| format!(" on {}", b.id)).unwrap_or_default();
                s.bar.set_message(format!(
                    "{} {}{on}{} (round {})",
                    p.cell.adapter.id,
                    p.cell.scenario.id,
                    p.cell.role.label_suffix(),
                    round + 1
                ));
                let adapter = &s.roster[&p.cell.adapter.id];
                let started = Instant::now();
                let session = self.session(&mut bus, p.cell);
                let outcome = cell::round(&ctx, p.cell, adapter, session, round == 0)?;
                p.elapsed += started.elapsed();
                let finished = match outcome {
                    Outcome::Ok(m) => {
                        p.rounds.push(*m);
                        rounds::finished(&p.rounds, s.profile)
                            .then(|| Outcome::Ok(Box::new(rounds::combine(std::mem::take(&mut p.rounds)))))
                    }
                    Outcome::Failed { .. } if self.shared.interrupted.load(Ordering::SeqCst) => {
                        return Ok(false); // missing, not failed: --resume runs it again
                    }
                    other => Some(other),
                };
                // The bar advances by the estimate of what was done, at most the cell's.
                let expected = cell_estimate(s.profile, p.cell);
                match finished {
                    Some(outcome) => {
                        p.done = true;
                        let c = cell::finish(&ctx, p.cell, adapter, outcome, p.elapsed);
                        // Counting instructions (after the timing) was interrupted:
                        // missing, not failed, so --resume measures it again.
                        if c.status() == CellStatus::Failed && self.shared.interrupted.load(Ordering::SeqCst) {
                            return Ok(false);
                        }
                        self.record(c, expected - p.credited)?;
                    }
                    None => {
                        let step = round_estimate(s.profile, p.cell)
                            + if round == 0 {
                                costs_estimate(s.profile, p.cell)
                            } else {
                                0.0
                            };
                        let step = step.min(expected - p.credited).max(0.0);
                        p.credited += step;
                        s.bar.inc(to_ms(step));
                    }
                }
            }
            if !any {
                break;
            }
        }
        Ok(true)
    }

    /// Adds a finished cell to the results file (rewritten at once: a kill
    /// loses no finished cell) and advances the bar by its remaining estimate.
    fn record(&self, cell: Cell, remaining_estimate: f64) -> Result<()> {
        let remaining_estimate = remaining_estimate.max(0.0);
        let s = self.shared;
        if cell.status() == CellStatus::Failed {
            s.bar.println(format!(
                "failed: {} {}{}: {}",
                cell.adapter,
                cell.scenario,
                cell.role.label_suffix(),
                cell.reason().unwrap_or("")
            ));
        }
        let mut results = s.results.lock().expect("results");
        results.cells.push(cell);
        store::write_atomic(s.path, &results)?;
        drop(results);
        s.bar.inc(to_ms(remaining_estimate));
        Ok(())
    }
}

pub fn to_ms(seconds: f64) -> u64 {
    (seconds * 1000.0).round() as u64
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::matrix::Matrix;
    use harness::results::Role;

    fn repo_matrix() -> Matrix {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
        let path = Path::new(&dir).join("../../matrix.toml");
        Matrix::parse(&std::fs::read_to_string(&path).unwrap(), &path).unwrap()
    }

    /// Codec cells of every adapter, then call/void and call/relation-set of
    /// every adapter on each bus: the plan's bus-major order.
    fn plan(m: &Matrix) -> Vec<Planned<'_>> {
        let mut plan = Vec::new();
        let cell = |a, s, bus| Planned {
            adapter: a,
            scenario: harness::scenario::find(s).unwrap(),
            bus,
            role: Role::Same,
        };
        for a in &m.adapters {
            plan.push(cell(a, "marshal/mixed", None));
        }
        for bus in m.buses.iter().take(3) {
            for a in &m.adapters {
                plan.push(cell(a, "call/void", Some(bus)));
                plan.push(cell(a, "call/relation-set", Some(bus)));
            }
        }
        plan
    }

    fn keys(groups: &[Group]) -> Vec<(Option<String>, String, String)> {
        let mut k: Vec<_> = groups
            .iter()
            .flat_map(|g| {
                g.cells
                    .iter()
                    .map(|c| (c.bus.map(|b| b.id.clone()), c.adapter.id.clone(), c.scenario.id.clone()))
            })
            .collect();
        k.sort();
        k
    }

    #[test]
    fn one_worker_keeps_one_group_per_bus_in_plan_order() {
        let m = repo_matrix();
        let quick = m.profile("standard").unwrap().clone();
        assert_eq!(quick.jobs, 1);
        let g = groups(plan(&m), &quick);
        assert_eq!(g.len(), 4, "codec and three buses");
        assert!(g[0].bus.is_none());
        assert_eq!(g[1].bus.unwrap().id, m.buses[0].id);
    }

    #[test]
    fn the_system_bus_is_not_cut_in_two() {
        let m = repo_matrix();
        let mut profile = m.profile("quick").unwrap().clone();
        profile.jobs = 2;
        let system = crate::matrix::BusEntry {
            id: SYSTEM_BUS.into(),
            debian: None,
            cargo: None,
            crate_sha256: None,
            nix: None,
            nixos_implementation: None,
        };
        let plan: Vec<_> = m
            .adapters
            .iter()
            .map(|a| Planned {
                adapter: a,
                scenario: harness::scenario::find("call/void").unwrap(),
                bus: Some(&system),
                role: Role::Same,
            })
            .collect();
        let n = plan.len();
        let g = groups(plan, &profile);
        assert_eq!(g.len(), 1, "one group on the shared system bus");
        assert_eq!(g[0].cells.len(), n);
    }

    #[test]
    fn two_workers_get_each_bus_in_two_halves_of_whole_adapters_longest_first() {
        let m = repo_matrix();
        let mut profile = m.profile("quick").unwrap().clone();
        profile.jobs = 2;
        let whole = groups(plan(&m), &m.profile("standard").unwrap().clone());
        let parts = groups(plan(&m), &profile);
        assert_eq!(parts.len(), 8, "codec and three buses, each in two parts");
        assert_eq!(keys(&parts), keys(&whole), "every cell once, none added");
        for bus in m.buses.iter().take(3) {
            let halves: Vec<_> = parts.iter().filter(|g| g.bus.is_some_and(|b| b.id == bus.id)).collect();
            assert_eq!(halves.len(), 2);
            let ids = |g: &Group| g.cells.iter().map(|c| c.adapter.id.clone()).collect::<HashSet<_>>();
            assert!(
                ids(halves[0]).is_disjoint(&ids(halves[1])),
                "an adapter's cells stay in one part"
            );
            let n = |g: &Group| g.cells.len() as i64;
            assert!((n(halves[0]) - n(halves[1])).abs() <= 2, "balanced by estimate");
        }
        let estimate = |g: &Group| g.cells.iter().map(|c| cell_estimate(&profile, c)).sum::<f64>();
        assert!(
            parts.windows(2).all(|w| estimate(&w[0]) >= estimate(&w[1])),
            "longest first"
        );
        // Within a part, the plan's order: relation-set after void, per adapter.
        for g in &parts {
            for w in g.cells.windows(2) {
                if w[0].adapter.id == w[1].adapter.id && w[0].bus.is_some() {
                    assert_eq!(
                        (w[0].scenario.id.as_str(), w[1].scenario.id.as_str()),
                        ("call/void", "call/relation-set")
                    );
                }
            }
        }
    }
}
