//! One cell: what its adapter's listing decides without running ([`decided`]);
//! one round ([`round`]): for IPC, its server and subscribers on the bus
//! session, the adapter's `bench`, its measurement, and in the first round
//! the IPC costs; and the finished cell ([`finish`]), with codec
//! instructions counted once when `--instructions` asks.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Result;
use harness::contract::{self, CriterionSettings};
use harness::ipc::{IpcOp, Transport};
use harness::results::{BenchResult, Cell, CellKey, Measurement, Outcome, Role};
use harness::scenario::{Driver, Scenario};

use super::bus_session::BusSession;
use super::cold_start;
use super::held_memory;
use super::parallel_clients::{self, Parallel};
use super::plan::Planned;
use super::roster::RunAdapter;
use crate::matrix::{AdapterEntry, Profile};
use crate::process::adapter::{self, Running};
use crate::{analyze::verify, measure::costs, measure::instructions};

/// What every cell of a run shares.
pub struct CellContext<'a> {
    pub profile: &'a Profile,
    /// A cell's adapter process is killed after this long.
    pub timeout: Duration,
    pub scratch: &'a Path,
    pub interrupted: &'a AtomicBool,
    /// `--pin client=N`.
    pub client_cpu: Option<usize>,
    /// `--instructions`: also count codec cells under callgrind.
    pub instructions: bool,
    /// The reference adapter of the client and server roles (when the run has them).
    pub reference: Option<Side<'a>>,
    /// Where IPC cells' processes run (`Placement::describe`), recorded on each.
    pub placement: String,
}

/// One side of an IPC cell: the adapter serving or calling, and its binary.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub entry: &'a AdapterEntry,
    pub adapter: &'a RunAdapter,
}

/// The client and the server of a cell: the cell's adapter on both sides
/// (`same`), or the reference on the other side.
fn sides<'a>(
    ctx: &CellContext<'a>,
    cell: &Planned<'a>,
    adapter: &'a RunAdapter,
) -> Result<(Side<'a>, Side<'a>), String> {
    let own = Side {
        entry: cell.adapter,
        adapter,
    };
    let reference = || {
        ctx.reference
            .ok_or_else(|| format!("role {} without a reference adapter", cell.role))
    };
    Ok(match cell.role {
        Role::Same => (own, own),
        Role::Client => (own, reference()?),
        Role::Server => (reference()?, own),
    })
}

/// An IPC cell's bus session, or why there is none.
pub type Session<'s> = Result<&'s mut BusSession, String>;

/// A cell the listing decides without running anything: `Some` with its
/// finished cell.
pub fn decided<'a>(
    ctx: &CellContext<'a>,
    cell: &Planned<'a>,
    adapter: &'a RunAdapter,
    session: Option<&Session>,
) -> Option<Cell> {
    let outcome = match sides(ctx, cell, adapter) {
        Err(reason) => Some(Outcome::Failed { reason }),
        Ok((client, _)) if cell.role.is_same() => listed_outcome(cell, client.adapter, session),
        // Either side's listing decides; the reason says whose it is.
        Ok((client, server)) => [("client", client), ("server", server)]
            .into_iter()
            .find_map(|(side, s)| {
                listed_outcome(cell, s.adapter, session).map(|o| match o {
                    Outcome::Unsupported { reason } => Outcome::Unsupported {
                        reason: format!("the {side} ({}): {reason}", s.entry.id),
                    },
                    Outcome::Failed { reason } => Outcome::Failed {
                        reason: format!("the {side} ({}): {reason}", s.entry.id),
                    },
                    ok => ok,
                })
            }),
    };
    outcome.map(|o| to_cell(cell, o, Duration::ZERO))
}

/// The finished cell from its combined outcome: instructions are counted
/// once, after timing, when the run asks for them.
pub fn finish(ctx: &CellContext, cell: &Planned, adapter: &RunAdapter, outcome: Outcome, elapsed: Duration) -> Cell {
    let outcome = match outcome {
        Outcome::Ok(m) if ctx.instructions => count_instructions(ctx, cell, &adapter.bin, m),
        other => other,
    };
    to_cell(cell, outcome, elapsed)
}

/// The outcome an adapter's listing decides without running anything: it
/// could not be asked, or it says the scenario is unsupported (here).
fn listed_outcome(cell: &Planned, adapter: &RunAdapter, session: Option<&Session>) -> Option<Outcome> {
    let d = match &adapter.described {
        Ok(d) => d,
        Err(e) => return Some(Outcome::Failed { reason: e.clone() }),
    };
    let p2p = matches!(session, Some(Ok(s)) if s.is_p2p());
    let unsupported = if p2p { &d.unsupported_p2p } else { &d.unsupported };
    unsupported
        .get(&cell.scenario)
        .map(|reason| Outcome::Unsupported { reason: reason.clone() })
}

fn to_cell(cell: &Planned, outcome: Outcome, elapsed: Duration) -> Cell {
    let key = CellKey {
        adapter: cell.adapter.id.clone(),
        scenario: cell.scenario.clone(),
        bus: cell.bus.map(|b| b.id.clone()),
        role: cell.role,
    };
    Cell {
        elapsed_s: elapsed.as_secs_f64(),
        ..Cell::new(key, outcome)
    }
}

/// The processes an IPC cell's client talks to, alive while the cell runs.
struct IpcSetup {
    /// Where the adapter's server is.
    transport: Transport,
    /// Signal fan-out: the subscribers and the FIFO they acknowledge through.
    subscribers: Option<(Running, PathBuf)>,
}

impl IpcSetup {
    fn ack_fifo(&self) -> Option<&Path> {
        self.subscribers.as_ref().map(|(_, fifo)| fifo.as_path())
    }
}

/// What an IPC cell's preparation on its session leads to.
enum Prepared {
    /// Run the adapter's `bench` while these processes are alive.
    Bench(IpcSetup),
    /// Measured by the runner itself (cold starts).
    Measured(Box<Measurement>),
}

/// Starts what an IPC cell needs on its session, or measures it right away
/// (cold starts are timed by the runner, from outside; in the `first` round
/// one more under a bus monitor).
fn prepare_ipc(
    ctx: &CellContext,
    cell: &Planned,
    (client, server): (Side, Side),
    session: &mut BusSession,
    first: bool,
) -> Result<Prepared, String> {
    let scenario = scenario_of(cell);
    let op = scenario.ipc_op().expect("bus cells are IPC cells");
    let bin = client.adapter.bin.as_path();
    let server_bin = server.adapter.bin.as_path();
    let transport = session.server(server.entry, server_bin)?;
    let rules = match scenario.driver {
        Driver::MatchRules(kind, n) => Some((kind, n)),
        _ => None,
    };
    session.hold_rules(rules)?;
    if let Driver::ParallelClients(clients) = scenario.driver {
        let mut others = Vec::new();
        if let Some(pid) = session.server_pid(&server.entry.id) {
            others.push(costs::Participant {
                role: "server",
                pids: vec![pid],
            });
        }
        let bus = session.bus_pids();
        if !bus.is_empty() {
            others.push(costs::Participant { role: "bus", pids: bus });
        }
        let parallel = Parallel {
            bin,
            transport: &transport,
            clients,
            samples: ctx.profile.sample_size,
            measurement: Duration::from_secs_f64(ctx.profile.measurement),
            others,
            timeout: ctx.timeout,
        };
        return parallel_clients::measure(&parallel, ctx.interrupted).map(|m| Prepared::Measured(Box::new(m)));
    }
    if op == IpcOp::PropertyColdStart {
        let monitored = session.bus_socket().filter(|_| first);
        return cold_start::measure(
            bin,
            &transport,
            ctx.profile.sample_size,
            monitored,
            ctx.scratch,
            ctx.interrupted,
        )
        .map(|m| Prepared::Measured(Box::new(m)));
    }
    let subscribers = session.subscribers(server.entry, server_bin, op)?;
    Ok(Prepared::Bench(IpcSetup { transport, subscribers }))
}

/// One round of a cell: the adapter's `bench` (after the IPC setup, if on a
/// bus; or one cold-start series), then, in the `first` round only, the
/// costs of an IPC cell. `Err` only for what ends the run (the scratch
/// directory failing).
pub fn round<'a>(
    ctx: &CellContext<'a>,
    cell: &Planned<'a>,
    adapter: &'a RunAdapter,
    session: Option<Session>,
    first: bool,
) -> Result<Outcome> {
    let (client, server) = match sides(ctx, cell, adapter) {
        Ok(s) => s,
        Err(reason) => return Ok(Outcome::Failed { reason }),
    };
    // The process timed is the client's: the cell's adapter but in the server role.
    let bin = client.adapter.bin.as_path();
    let mut session = match session {
        None => None,
        Some(Err(reason)) => return Ok(Outcome::Failed { reason }),
        Some(Ok(s)) => Some(s),
    };
    let ipc = match session
        .as_deref_mut()
        .map(|s| prepare_ipc(ctx, cell, (client, server), s, first))
    {
        None => None,
        Some(Ok(Prepared::Bench(setup))) => Some(setup),
        Some(Ok(Prepared::Measured(mut m))) => {
            m.placement = Some(placement_of(ctx, cell));
            if m.costs.is_some() && !ctx.profile.costs.counts(&cell.scenario) {
                // Counted with the timing (parallel clients), kept only where the profile asks.
                m.costs = None;
                m.verification_notes.push(SKIPPED_COSTS.into());
            }
            return Ok(Outcome::Ok(m));
        }
        Some(Err(reason)) => return Ok(Outcome::Failed { reason }),
    };
    let mut runner_verified = Vec::new();
    if first && cell.adapter.is_program() && ipc.is_none() {
        // A program cannot call the harness's reference decoder: the runner
        // checks its `emit` bytes and `demarshal` digests before its first round.
        match verify::check(&cell.adapter.id, bin, &cell.scenario, ctx.scratch, ctx.interrupted).verdict {
            verify::Verdict::Passed(notes) => runner_verified = notes,
            verify::Verdict::Unsupported(reason) => return Ok(Outcome::Unsupported { reason }),
            verify::Verdict::Failed(reason) => {
                return Ok(Outcome::Failed {
                    reason: format!("the runner's verification failed: {reason}"),
                })
            }
        }
    }
    let result_file = ctx.scratch.join("measurement.json");
    let _ = std::fs::remove_file(&result_file);
    let bench = contract::Command::Bench(contract::Bench {
        scenario: scenario_of(cell).adapter_scenario().to_string(),
        result: result_file.clone(),
        criterion_dir: Some(ctx.scratch.join("criterion")),
        settings: CriterionSettings {
            sample_size: ctx.profile.sample_size,
            warm_up: ctx.profile.warm_up,
            measurement: ctx.profile.measurement,
            nresamples: ctx.profile.nresamples,
            timer: ctx.profile.timer,
            budget: ctx.profile.cell_budget,
        },
        transport: ipc.as_ref().map(|s| s.transport.clone()),
        ack_fifo: ipc.as_ref().and_then(IpcSetup::ack_fifo).map(Path::to_path_buf),
    });
    let _ = std::fs::remove_dir_all(ctx.scratch.join("criterion"));
    let out = adapter::run(
        bin,
        &bench,
        None,
        ctx.scratch,
        ctx.timeout,
        ctx.interrupted,
        ctx.client_cpu,
    )?;
    if let Some(reason) = out.unsupported_reason() {
        return Ok(Outcome::Unsupported { reason });
    }
    if !out.success() {
        // Say what broke when the bus or the server went away under the cell.
        let cause = session.as_deref_mut().and_then(|s| s.health(server.entry).err());
        let reason = match cause {
            Some(cause) => format!("{cause}; the client: {}", out.describe()),
            None => out.describe(),
        };
        return Ok(Outcome::Failed { reason });
    }
    let mut m = match std::fs::read(&result_file)
        .map_err(anyhow::Error::from)
        .and_then(|b| BenchResult::from_json(&b, ctx.profile.nresamples).map_err(Into::into))
    {
        Ok(m) => m,
        Err(e) => {
            return Ok(Outcome::Failed {
                reason: format!("the adapter exited 0 but its result is unreadable: {e}"),
            })
        }
    };
    m.verification_notes.extend(runner_verified);
    if let Driver::MatchRules(kind, n) = scenario_of(cell).driver {
        m.verification_notes.push(format!(
            "the runner held {n} {} match rules (every AddMatch answered)",
            kind.slug()
        ));
    }
    // Every IPC scenario, the raw-socket floor too (no session, no setup).
    let is_ipc = scenario_of(cell).ipc_op().is_some();
    if is_ipc {
        m.placement = Some(placement_of(ctx, cell));
    }
    // Costs are counted once, in a cell's first round.
    let count_costs = is_ipc && first;
    if count_costs && !ctx.profile.costs.counts(&cell.scenario) {
        m.verification_notes.push(SKIPPED_COSTS.into());
    } else if count_costs {
        let counted = Counted {
            bin,
            scenario: scenario_of(cell).adapter_scenario(),
            adapter_id: &server.entry.id,
            ipc: ipc.as_ref(),
            session: session.as_deref(),
        };
        if let Err(why) = add_costs(ctx, &mut m, counted) {
            return Ok(Outcome::Failed { reason: why }); // interrupted: the cell is missing, not done
        }
    }
    if let (true, Some(bus)) = (first && ipc.is_some(), cell.bus) {
        if let Err(why) = add_connection_memory(ctx, &mut m, &cell.scenario, bin, &bus.id) {
            return Ok(Outcome::Failed { reason: why });
        }
    }
    Ok(Outcome::Ok(Box::new(m)))
}

const SKIPPED_COSTS: &str = "costs not counted: the profile counts them for other scenarios only (matrix.toml `costs`)";

/// The harness's scenario of a planned cell (the plan holds known ids only).
fn scenario_of(cell: &Planned) -> &'static Scenario {
    harness::scenario::find(&cell.scenario).expect("planned cells have known scenarios")
}

/// Where an IPC cell's processes ran: the run's placement, except that
/// parallel clients are never pinned (K clients on one CPU would measure it).
fn placement_of(ctx: &CellContext, cell: &Planned) -> String {
    match scenario_of(cell).driver {
        Driver::ParallelClients(_) if ctx.placement != "none" => format!("{} (the clients unpinned)", ctx.placement),
        _ => ctx.placement.clone(),
    }
}

/// An IPC cell whose costs are to be counted, and the processes it involves
/// (the floor has no session and no setup: only its client is counted).
struct Counted<'a> {
    bin: &'a Path,
    scenario: &'a str,
    /// The adapter whose server the cell calls.
    adapter_id: &'a str,
    ipc: Option<&'a IpcSetup>,
    session: Option<&'a BusSession>,
}

/// Adds the per-operation costs of client, server, subscribers and bus to an
/// IPC cell. Costs that cannot be counted leave a note, not a failed cell
/// (the timing stands); `Err` only when the run was interrupted.
fn add_costs(ctx: &CellContext, m: &mut Measurement, cell: Counted) -> Result<(), String> {
    let median = m.wall.median_ns.point;
    if median > costs::MAX_NATIVE_NS {
        m.verification_notes.push(format!(
            "costs not counted: {:.1} s per operation (limit {:.0} s)",
            median / 1e9,
            costs::MAX_NATIVE_NS / 1e9
        ));
        return Ok(());
    }
    let mut others = Vec::new();
    if let Some(pid) = cell.session.and_then(|s| s.server_pid(cell.adapter_id)) {
        others.push(costs::Participant {
            role: "server",
            pids: vec![pid],
        });
    }
    if let Some((subscribers, _)) = cell.ipc.and_then(|i| i.subscribers.as_ref()) {
        others.push(costs::Participant {
            role: "subscribers",
            pids: vec![subscribers.pid()],
        });
    }
    let bus = cell.session.map(BusSession::bus_pids).unwrap_or_default();
    if !bus.is_empty() {
        others.push(costs::Participant { role: "bus", pids: bus });
    }
    let budget = Duration::from_secs_f64(ctx.profile.measurement * costs::WINDOW_SHARE);
    let window = costs::Window {
        bin: cell.bin,
        scenario: cell.scenario,
        transport: cell.ipc.map(|i| &i.transport),
        ack_fifo: cell.ipc.and_then(IpcSetup::ack_fifo),
        iterations: costs::iterations(median, budget),
        others,
        bus_socket: cell.session.and_then(BusSession::bus_socket),
        client_cpu: ctx.client_cpu,
        timeout: ctx.timeout,
    };
    match costs::count(&window, ctx.interrupted) {
        Ok(c) => m.costs = Some(c),
        Err(_) if ctx.interrupted.load(Ordering::SeqCst) => return Err("interrupted".into()),
        Err(why) => m.verification_notes.push(format!("costs not counted: {why}")),
    }
    Ok(())
}

/// `connect/idle-connections/<n>` (first round): the memory of a fresh bus
/// daemon of the cell's kind and of the client with the n connections held. Missing memory is a note
/// (the timing stands); `Err` only when the run was interrupted.
fn add_connection_memory(
    ctx: &CellContext,
    m: &mut Measurement,
    scenario: &str,
    bin: &Path,
    bus_id: &str,
) -> Result<(), String> {
    let Some(IpcOp::IdleConnections(n)) = harness::scenario::find(scenario).and_then(|s| s.ipc_op()) else {
        return Ok(());
    };
    let Ok(kind) = bus_id.parse::<bus::BusKind>() else {
        m.verification_notes.push(format!(
            "connection memory not read: {bus_id} is not a daemon the runner starts"
        ));
        return Ok(());
    };
    let held = held_memory::Held {
        bin,
        scenario,
        connections: n,
        bus: kind,
        client_cpu: ctx.client_cpu,
        timeout: ctx.timeout,
    };
    match held_memory::measure(&held, ctx.interrupted) {
        Ok(mem) => m.connection_memory = Some(mem),
        Err(_) if ctx.interrupted.load(Ordering::SeqCst) => return Err("interrupted".into()),
        Err(why) => m.verification_notes.push(format!("connection memory not read: {why}")),
    }
    Ok(())
}

/// Adds instructions per operation to a measured codec cell (IPC cells
/// involve other processes, which callgrind does not follow); a failure to
/// count fails the cell, since the run was asked for instructions.
fn count_instructions(ctx: &CellContext, cell: &Planned, bin: &Path, mut m: Box<Measurement>) -> Outcome {
    let is_codec = harness::scenario::find(&cell.scenario).is_some_and(|s| s.ipc_op().is_none());
    if !is_codec {
        return Outcome::Ok(m);
    }
    if m.wall.median_ns.point > instructions::MAX_NATIVE_NS {
        m.verification_notes.push(format!(
            "instructions not counted: {:.0} ms per operation is too slow for callgrind (limit {:.0} ms)",
            m.wall.median_ns.point / 1e6,
            instructions::MAX_NATIVE_NS / 1e6
        ));
        return Outcome::Ok(m);
    }
    match instructions::count(bin, &cell.scenario, ctx.scratch, ctx.timeout, ctx.interrupted) {
        Ok(n) => {
            m.instructions_per_op = Some(n);
            Outcome::Ok(m)
        }
        Err(reason) => Outcome::Failed {
            reason: format!("counting instructions: {reason:#}"),
        },
    }
}
