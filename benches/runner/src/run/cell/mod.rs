//! One cell: what its adapter's listing decides without running ([`decided`]);
//! one round ([`round`]): for IPC, its server and subscribers on the bus
//! session, the adapter's `bench`, its measurement, and in the first round
//! the IPC costs; and the finished cell ([`finish`]), with codec
//! instructions counted once when `--instructions` asks.
//!
//! The kinds of cell each have a file: [`bench`] (the adapter's `bench`, with
//! its IPC setup), [`parallel_clients`] and [`cold_start`] (timed by the
//! runner), [`held_memory`] (idle connections' memory), [`costs`] (what a
//! first round counts beside timing), [`ipc_instructions`] and
//! [`count_decision`] (`run --instructions` on IPC cells, and which it counts),
//! [`flood_watch`] (the bus under a flood).

mod bench;
mod cold_start;
mod costs;
mod count_decision;
mod flood_watch;
mod held_memory;
mod ipc_instructions;
mod parallel_clients;

pub use bench::round;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Result;
use harness::ipc::Transport;
use harness::results::{Cell, CellKey, Measurement, Outcome, Role};
use harness::scenario::Driver;

use super::bus_session::BusSession;
use super::plan::Planned;
use super::roster::RunAdapter;
use crate::matrix::{AdapterEntry, Profile};
use crate::measure::instructions;
use crate::process::adapter::Running;

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
        Outcome::Ok(m) if ctx.instructions => count_instructions(ctx, cell, adapter, m),
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
        .get(&cell.scenario.id)
        .map(|reason| Outcome::Unsupported { reason: reason.clone() })
}

fn to_cell(cell: &Planned, outcome: Outcome, elapsed: Duration) -> Cell {
    let key = CellKey {
        adapter: cell.adapter.id.clone(),
        scenario: cell.scenario.id.clone(),
        bus: cell.bus.map(|b| b.id.clone()),
        role: cell.role,
    };
    Cell {
        elapsed_s: elapsed.as_secs_f64(),
        ..Cell::new(key, outcome)
    }
}

/// The processes an IPC cell's client talks to, alive while the cell runs.
pub(super) struct IpcSetup {
    /// Where the adapter's server is.
    transport: Transport,
    /// Signal fan-out: the subscribers and the FIFO they acknowledge through.
    subscribers: Option<(Running, PathBuf)>,
}

impl IpcSetup {
    pub(super) fn ack_fifo(&self) -> Option<&Path> {
        self.subscribers.as_ref().map(|(_, fifo)| fifo.as_path())
    }
}

/// Where an IPC cell's processes ran: the run's placement, except that
/// parallel clients are never pinned (K clients on one CPU would measure it).
fn placement_of(ctx: &CellContext, cell: &Planned) -> String {
    match cell.scenario.driver {
        Driver::ParallelClients(_) if ctx.placement != "none" => format!("{} (the clients unpinned)", ctx.placement),
        _ => ctx.placement.clone(),
    }
}

/// Adds instructions per operation to a measured codec cell (a failure to
/// count fails the cell, since the run was asked for instructions), or to
/// every process of an IPC cell ([`ipc_instructions`]: a note where not).
fn count_instructions(ctx: &CellContext, cell: &Planned, adapter: &RunAdapter, mut m: Box<Measurement>) -> Outcome {
    let bin = adapter.bin.as_path();
    let is_codec = cell.scenario.ipc_op().is_none();
    if !is_codec {
        return match ipc_instructions::add(ctx, cell, adapter, &mut m) {
            Ok(()) => Outcome::Ok(m),
            Err(reason) => Outcome::Failed { reason },
        };
    }
    if m.wall.median_ns.point > instructions::MAX_NATIVE_NS {
        m.verification_notes.push(format!(
            "instructions not counted: {:.0} ms per operation is too slow for callgrind (limit {:.0} ms)",
            m.wall.median_ns.point / 1e6,
            instructions::MAX_NATIVE_NS / 1e6
        ));
        return Outcome::Ok(m);
    }
    match instructions::count(bin, &cell.scenario.id, ctx.scratch, ctx.timeout, ctx.interrupted) {
        Ok(n) => {
            m.instructions_per_op = Some(n);
            Outcome::Ok(m)
        }
        Err(reason) => Outcome::Failed {
            reason: format!("counting instructions: {reason:#}"),
        },
    }
}
