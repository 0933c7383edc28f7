//! `connect/idle-connections/<n>`: what the held connections cost in memory.
//! The runner reads the bus daemon's VmRSS before the client starts, then
//! runs the adapter's `repeat --iterations 1 --windows 1`: it verifies (opens
//! and closes a batch), lets go of it before the window and opens the n
//! connections inside it, then waits at WINDOW-END, where the runner reads
//! the daemon's VmRSS again (n held) and the client's VmRSS and VmHWM.
//! "Before" is read before the client's first connection because a daemon's
//! heap does not shrink when connections close: read at WINDOW-BEGIN, after
//! the verified batch, it already held their memory.
//!
//! On a fresh daemon of the cell's kind, started for this reading and
//! stopped after it: the cell's own daemon has had batches of connections
//! opened and closed while the cell was timed, and a daemon's heap does not
//! shrink when they close (measured: 0 bytes per connection on all three
//! daemons when read on the session's bus after timing).
//!
//! With the connections held, the runner also reads the client's threads
//! and, for the smallest count, what idling costs (issue 31, "threads and
//! idle cost", [`crate::measure::idle`]): over a quiet window, the client
//! holding its connections, the cell's server holding its own on the cell's
//! bus (idle since the cell was timed), and the fresh daemon holding the
//! client's.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bus::BusKind;
use harness::contract::{Command, Repeat, GO, WINDOW_BEGIN, WINDOW_END};
use harness::ipc::IpcOp;
use harness::ipc::Transport;
use harness::results::{ConnectionMemory, IdleCost, Measurement};
use harness::scenario::Scenario;

use super::CellContext;
use crate::measure::idle;
use crate::process::adapter::Running;

/// The client, and the kind of daemon it connects to.
pub struct Held<'a> {
    pub bin: &'a Path,
    pub scenario: &'a str,
    pub connections: usize,
    pub bus: BusKind,
    pub client_cpu: Option<usize>,
    pub timeout: Duration,
    /// The cell's server, counted over the quiet window beside the client and the daemon.
    pub server_pid: Option<u32>,
    /// The quiet window, when this cell counts idle costs.
    pub quiet: Option<Duration>,
}

/// One holding window; `Err` is why the memory is missing (a note of the cell).
pub fn measure(h: &Held, interrupted: &AtomicBool) -> Result<ConnectionMemory, String> {
    let daemon = bus::start(h.bus, &bus::BusOptions::default())
        .map_err(|e| format!("starting a fresh {} to read: {e}", h.bus.id()))?;
    let transport = Transport::Bus {
        address: daemon.address().to_string(),
        socket: daemon.socket_path().to_path_buf(),
        service_name: String::new(),
    };
    let read = hold_and_read(h, &transport, &daemon.pids(), interrupted);
    let stopped = daemon
        .stop()
        .map_err(|e| format!("stopping the fresh {}: {e}", h.bus.id()));
    let mem = read?;
    stopped?;
    Ok(mem)
}

fn hold_and_read(
    h: &Held,
    transport: &Transport,
    bus_pids: &[u32],
    interrupted: &AtomicBool,
) -> Result<ConnectionMemory, String> {
    let repeat = Command::Repeat(Repeat {
        scenario: h.scenario.to_string(),
        iterations: 1,
        windows: 1,
        transport: Some(transport.clone()),
        ack_fifo: None,
    });
    let before = bus_rss(bus_pids)?;
    let mut client = Running::start(h.bin, &repeat, h.client_cpu, "the holding client".into(), true)?;
    client.expect(WINDOW_BEGIN, h.timeout, interrupted)?;
    client.send(GO)?;
    client.expect(WINDOW_END, h.timeout, interrupted)?;
    let held = bus_rss(bus_pids)?;
    let client_rss = status_bytes(client.pid(), "VmRSS:")?;
    let client_hwm = status_bytes(client.pid(), "VmHWM:")?;
    let client_threads = idle::threads(client.pid())?;
    let idle = match h.quiet {
        None => None,
        Some(window) => {
            let mut roles = vec![("client", vec![client.pid()])];
            roles.extend(h.server_pid.map(|pid| ("server", vec![pid])));
            roles.push(("bus", bus_pids.to_vec()));
            match idle::count(&roles, window, interrupted) {
                Ok(c) => Some(c),
                Err(why) if interrupted.load(Ordering::SeqCst) => return Err(why),
                // The memory stands; the idle costs are missing, and say why.
                Err(why) => Some(IdleCost {
                    window_s: 0.0,
                    processes: Vec::new(),
                    notes: vec![format!("idle costs not counted: {why}")],
                }),
            }
        }
    };
    client.send(GO)?;
    client.finish(interrupted)?;
    Ok(ConnectionMemory {
        connections: h.connections as u64,
        bus_rss_before_bytes: before,
        bus_rss_held_bytes: held,
        bus_bytes_per_connection: (held as f64 - before as f64) / h.connections.max(1) as f64,
        client_rss_bytes: client_rss,
        client_hwm_bytes: client_hwm,
        client_threads: Some(client_threads),
        idle,
    })
}

/// VmRSS of every process of the bus (dbus-broker is a launcher and a broker).
fn bus_rss(pids: &[u32]) -> Result<u64, String> {
    pids.iter().map(|&pid| status_bytes(pid, "VmRSS:")).sum()
}

/// A `kB` line of `/proc/PID/status`, in bytes.
fn status_bytes(pid: u32, key: &str) -> Result<u64, String> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
    parse_status_kb(&status, key).ok_or_else(|| format!("{path} has no {key} line"))
}

fn parse_status_kb(status: &str, key: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line[key.len()..].trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kb * 1024)
}

/// `connect/idle-connections/<n>` (first round): the memory of a fresh bus
/// daemon of the cell's kind and of the client with the n connections held. Missing memory is a note
/// (the timing stands); `Err` only when the run was interrupted.
pub(super) fn add_connection_memory(
    ctx: &CellContext,
    m: &mut Measurement,
    scenario: &'static Scenario,
    bin: &Path,
    bus_id: &str,
    server_pid: Option<u32>,
) -> Result<(), String> {
    let Some(IpcOp::IdleConnections(n)) = scenario.ipc_op() else {
        return Ok(());
    };
    let Ok(kind) = bus_id.parse::<bus::BusKind>() else {
        m.verification_notes.push(format!(
            "connection memory not read: {bus_id} is not a daemon the runner starts"
        ));
        return Ok(());
    };
    let held = Held {
        bin,
        scenario: &scenario.id,
        connections: n,
        bus: kind,
        client_cpu: ctx.client_cpu,
        timeout: ctx.timeout,
        server_pid,
        // Idle costs on the smallest count only: a quiet window is wall time.
        quiet: (n == harness::ipc::IDLE_CONNECTION_COUNTS[0]).then(|| idle::window_of(ctx.profile.measurement)),
    };
    match measure(&held, ctx.interrupted) {
        Ok(mem) => m.connection_memory = Some(mem),
        Err(_) if ctx.interrupted.load(Ordering::SeqCst) => return Err("interrupted".into()),
        Err(why) => m.verification_notes.push(format!("connection memory not read: {why}")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_kb_lines_as_bytes() {
        let status = "Name:\tx\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\n";
        assert_eq!(parse_status_kb(status, "VmRSS:"), Some(1024 * 1024));
        assert_eq!(parse_status_kb(status, "VmHWM:"), Some(2048 * 1024));
        assert_eq!(parse_status_kb(status, "VmSwap:"), None);
        assert_eq!(parse_status_kb("VmRSS:\tlots\n", "VmRSS:"), None);
    }

    #[test]
    fn reads_this_process() {
        let rss = status_bytes(std::process::id(), "VmRSS:").unwrap();
        assert!(rss > 0);
        assert!(status_bytes(std::process::id(), "VmHWM:").unwrap() >= rss);
    }
}
