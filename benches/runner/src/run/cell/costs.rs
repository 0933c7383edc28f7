//! The IPC costs a cell's first round adds beside its timing: client,
//! server, subscribers and bus daemon counted per operation
//! ([`crate::measure::costs`]).

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use harness::results::Measurement;

use super::{CellContext, IpcSetup};
use crate::measure::costs;
use crate::run::bus_session::BusSession;

/// An IPC cell whose costs are to be counted, and the processes it involves
/// (the floor has no session and no setup: only its client is counted).
pub(super) struct Counted<'a> {
    pub bin: &'a Path,
    pub scenario: &'a str,
    /// The adapter whose server the cell calls.
    pub adapter_id: &'a str,
    pub ipc: Option<&'a IpcSetup>,
    pub session: Option<&'a BusSession>,
}

/// Adds the per-operation costs of client, server, subscribers and bus to an
/// IPC cell. Costs that cannot be counted leave a note, not a failed cell
/// (the timing stands); `Err` only when the run was interrupted.
pub(super) fn add_costs(ctx: &CellContext, m: &mut Measurement, cell: Counted) -> Result<(), String> {
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
