//! One round of a cell ([`round`]): its IPC setup on the bus session (or a
//! cell the runner times itself: parallel clients, cold starts), the
//! adapter's `bench`, its measurement, and in the first round its costs
//! and held connections' memory.

use std::path::Path;

use anyhow::Result;
use harness::contract::{self, CriterionSettings};
use harness::ipc::IpcOp;
use harness::results::{BenchResult, Measurement, Outcome};
use harness::scenario::Driver;

use super::parallel_clients;
use super::{cold_start, costs, flood_watch, held_memory, placement_of, sides, CellContext, IpcSetup, Session, Side};
use crate::analyze::verify;
use crate::process::adapter;
use crate::run::bus_session::BusSession;
use crate::run::plan::Planned;
use crate::run::roster::RunAdapter;

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
    let scenario = cell.scenario;
    let op = scenario.ipc_op().expect("bus cells are IPC cells");
    let bin = client.adapter.bin.as_path();
    let server_bin = server.adapter.bin.as_path();
    let transport = session.server(server.entry, server_bin)?;
    let rules = match scenario.driver {
        Driver::MatchRules(kind, n) => Some((kind, n)),
        _ => None,
    };
    session.hold_rules(rules)?;
    // The cells the runner times itself; every other runs the adapter's `bench`.
    let measured = match (scenario.driver, op) {
        (Driver::ParallelClients(clients), _) => {
            parallel_clients::measure_on(ctx, session, &server.entry.id, bin, &transport, clients)
        }
        (_, IpcOp::PropertyColdStart) => {
            let monitored = session.bus_socket().filter(|_| first);
            cold_start::measure(
                bin,
                &transport,
                ctx.profile.sample_size,
                monitored,
                ctx.scratch,
                ctx.interrupted,
            )
        }
        _ => {
            let subscribers = session.subscribers(server.entry, server_bin, op)?;
            return Ok(Prepared::Bench(IpcSetup { transport, subscribers }));
        }
    };
    measured.map(|m| Prepared::Measured(Box::new(m)))
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
            if m.costs.is_some() && !ctx.profile.costs.counts(&cell.scenario.id) {
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
        match verify::check(&cell.adapter.id, bin, &cell.scenario.id, ctx.scratch, ctx.interrupted).verdict {
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
        scenario: cell.scenario.adapter_scenario().to_string(),
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
    let log_mark = session.as_deref().map(BusSession::log_len);
    // Floods (issue 31): the bus's peak memory and log over the whole first round.
    let flood = match (first, session.as_deref(), cell.scenario.ipc_op()) {
        (true, Some(s), Some(op)) if harness::ipc::storm::is_flood(op) => flood_watch::start(s),
        _ => None,
    };
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
        let mut reason = match cause {
            Some(cause) => format!("{cause}; the client: {}", out.describe()),
            None => out.describe(),
        };
        // What the daemon said meanwhile (issue 31: a bus that cuts a peer off says so in its log).
        let said = session.as_deref().zip(log_mark).map(|(s, mark)| s.log_since(mark));
        if let Some(said) = said.filter(|s| !s.is_empty()) {
            reason = format!("{reason}; the bus logged: {said}");
        }
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
    if let Driver::MatchRules(kind, n) = cell.scenario.driver {
        m.verification_notes.push(format!(
            "the runner held {n} {} match rules (every AddMatch answered)",
            kind.slug()
        ));
    }
    // Every IPC scenario, the raw-socket floor too (no session, no setup).
    let is_ipc = cell.scenario.ipc_op().is_some();
    if is_ipc {
        m.placement = Some(placement_of(ctx, cell));
    }
    // Costs are counted once, in a cell's first round.
    let count_costs = is_ipc && first;
    if count_costs && !ctx.profile.costs.counts(&cell.scenario.id) {
        m.verification_notes.push(SKIPPED_COSTS.into());
    } else if count_costs {
        let counted = costs::Counted {
            bin,
            scenario: cell.scenario.adapter_scenario(),
            adapter_id: &server.entry.id,
            ipc: ipc.as_ref(),
            session: session.as_deref(),
        };
        if let Err(why) = costs::add_costs(ctx, &mut m, counted) {
            return Ok(Outcome::Failed { reason: why }); // interrupted: the cell is missing, not done
        }
    }
    if let (true, Some(bus)) = (first && ipc.is_some(), cell.bus) {
        let server_pid = session.as_deref().and_then(|s| s.server_pid(&server.entry.id));
        if let Err(why) = held_memory::add_connection_memory(ctx, &mut m, cell.scenario, bin, &bus.id, server_pid) {
            return Ok(Outcome::Failed { reason: why });
        }
    }
    if let (Some(w), Some(s)) = (&flood, session.as_deref()) {
        let n = match cell.scenario.ipc_op() {
            Some(IpcOp::Subscription(op)) => op.size(),
            _ => None,
        };
        flood_watch::finish(w, s, n, &mut m);
    }
    Ok(Outcome::Ok(Box::new(m)))
}

const SKIPPED_COSTS: &str = "costs not counted: the profile counts them for other scenarios only (matrix.toml `costs`)";
