//! `run --instructions` on an IPC cell: after its timing, the cell once more
//! with every process under callgrind, on a bus session of its own (a
//! private dbus-daemon or busd under callgrind too, or peer to peer), and
//! instructions per operation of each process recorded
//! ([`crate::measure::ipc_instructions`]). A cell that cannot be counted
//! ([`super::count_decision`]) keeps its timing and gets a note saying why.

use std::sync::atomic::Ordering;

use harness::results::Measurement;

use super::{count_decision, sides, CellContext};
use crate::measure::costs::Participant;
use crate::measure::ipc_instructions::{self, Callgrind, IpcWindow};
use crate::placement::Placement;
use crate::run::bus_session::BusSession;
use crate::run::plan::Planned;
use crate::run::roster::RunAdapter;

/// Counts the instructions of every process of an IPC cell into
/// `m.ipc_instructions`, or notes why not; `Err` only when interrupted.
pub(super) fn add(ctx: &CellContext, cell: &Planned, adapter: &RunAdapter, m: &mut Measurement) -> Result<(), String> {
    if let Err(why) = count_decision::decide(cell, m.wall.median_ns.point) {
        m.verification_notes.push(format!("instructions not counted: {why}"));
        return Ok(());
    }
    match counted(ctx, cell, adapter) {
        Ok(i) => m.ipc_instructions = Some(i),
        Err(_) if ctx.interrupted.load(Ordering::SeqCst) => return Err("interrupted".into()),
        Err(why) => m.verification_notes.push(format!("instructions not counted: {why}")),
    }
    Ok(())
}

fn counted(
    ctx: &CellContext,
    cell: &Planned,
    adapter: &RunAdapter,
) -> Result<harness::results::IpcInstructions, String> {
    let (client, server) = sides(ctx, cell, adapter)?;
    let op = cell.scenario.ipc_op().ok_or("not an IPC cell")?;
    let dir = ctx.scratch.join("callgrind-ipc");
    let cg = Callgrind::new(&dir).map_err(|e| format!("{e:#}"))?;
    let placement = Placement::parse(&ctx.placement).unwrap_or_default();
    let result = (|| {
        let mut session = match cell.bus {
            None => None,
            Some(bus) => Some(
                BusSession::start_under(bus, &[server.entry], &dir, placement, cg.wrapper())
                    .map_err(|e| format!("the bus under callgrind: {e:#}"))?,
            ),
        };
        let server_bin = server.adapter.bin.as_path();
        let (transport, subscribers) = match session.as_mut() {
            None => (None, None),
            Some(s) => {
                let transport = s.server(server.entry, server_bin)?;
                (Some(transport), s.subscribers(server.entry, server_bin, op)?)
            }
        };
        let mut others = Vec::new();
        if let Some(pid) = session.as_ref().and_then(|s| s.server_pid(&server.entry.id)) {
            others.push(Participant {
                role: "server",
                pids: vec![pid],
            });
        }
        if let Some((s, _)) = &subscribers {
            others.push(Participant {
                role: "subscribers",
                pids: vec![s.pid()],
            });
        }
        let bus = session.as_ref().map(BusSession::bus_pids).unwrap_or_default();
        if !bus.is_empty() {
            others.push(Participant { role: "bus", pids: bus });
        }
        let window = IpcWindow {
            bin: client.adapter.bin.as_path(),
            scenario: cell.scenario.adapter_scenario(),
            transport: transport.as_ref(),
            ack_fifo: subscribers.as_ref().map(|(_, fifo)| fifo.as_path()),
            others,
            client_cpu: ctx.client_cpu,
            timeout: ctx.timeout,
        };
        ipc_instructions::count(&cg, &window, ctx.interrupted)
        // The session and the subscribers stop here, before the directory goes.
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
