//! `call/parallel-clients/<K>`: K client processes of one library calling
//! `Void` on that library's one server over the bus, released together and
//! timed by the runner until the last is done. Each client is the adapter's
//! own `repeat` of `call/void` (it verifies the reply before its first
//! window), so no adapter has code for this cell. The figure is ns per call
//! over all clients (calls/s in the reports); the costs (CPU of the clients,
//! the server and the bus daemon per call, their memory) are counted over
//! the same timed windows.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use harness::contract::{Command, Repeat, GO, WINDOW_BEGIN, WINDOW_END};
use harness::ipc::Transport;
use harness::results::{IpcCosts, Measurement, WallTime};

use super::CellContext;
use crate::measure::costs::{self, Participant, Snapshot};
use crate::process::adapter::Running;
use crate::run::bus_session::BusSession;

/// The adapter scenario every client repeats.
const CALL: &str = "call/void";
/// Calls of the calibrating client (one window, before the timed ones).
const CALIBRATION_CALLS: u64 = 20;

/// What a parallel-clients cell needs from its round.
pub struct Parallel<'a> {
    pub bin: &'a Path,
    pub transport: &'a Transport,
    /// K, the number of client processes.
    pub clients: usize,
    /// Timed windows (samples), after one warm-up window.
    pub samples: usize,
    /// About how long all timed windows together take.
    pub measurement: Duration,
    /// The server and the bus daemon, counted with the clients.
    pub others: Vec<Participant>,
    pub timeout: Duration,
}

/// Calls per client per window: a window of one client lasts about
/// `window`, at least 5 calls, at most 100 000.
pub fn calls_per_window(call_ns: f64, window: Duration) -> u64 {
    ((window.as_nanos() as f64 / call_ns.max(1.0)) as u64).clamp(5, 100_000)
}

/// Times `p.samples` windows of K clients, each window one sample of ns per call.
pub fn measure(p: &Parallel, interrupted: &AtomicBool) -> Result<Measurement, String> {
    let call_ns = calibrate(p, interrupted)?;
    let window = p.measurement / p.samples.max(1) as u32;
    let iterations = calls_per_window(call_ns, window);
    let windows = 1 + p.samples;
    let mut clients = (0..p.clients)
        .map(|i| {
            let repeat = repeat(p.transport, iterations, windows as u32);
            // Unpinned: K clients squeezed onto one CPU would measure that CPU.
            Running::start(p.bin, &repeat, None, format!("parallel client {}", i + 1), true)
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Every client connected and verified its reply: all at their first window.
    for c in &mut clients {
        c.expect(WINDOW_BEGIN, p.timeout, interrupted)?;
    }
    release(&mut clients, p, interrupted)?; // warm-up window
    let pids: Vec<u32> = clients.iter().map(Running::pid).collect();
    let mut notes = vec![format!(
        "counted over the timed windows ({} clients x {iterations} calls x {} windows); bus messages are not \
         counted for this cell",
        p.clients, p.samples
    )];
    let participants: Vec<(&str, &[u32])> = std::iter::once(("client", pids.as_slice()))
        .chain(p.others.iter().map(|o| (o.role, o.pids.as_slice())))
        .collect();
    let snapshot = Snapshot::take(&participants, costs::syscall_event(&mut notes)).map_err(|e| format!("{e:#}"))?;
    let calls = iterations * p.clients as u64;
    let mut samples = Vec::with_capacity(p.samples);
    for _ in 0..p.samples {
        next_window(&mut clients, p, interrupted)?;
        let elapsed = release(&mut clients, p, interrupted)?;
        samples.push(elapsed.as_nanos() as f64 / calls as f64);
    }
    let operations = calls * p.samples as u64;
    let processes = snapshot.close(operations, &mut notes)?;
    for c in &mut clients {
        c.send(GO)?;
    }
    for c in &mut clients {
        c.finish(interrupted)?;
    }
    Ok(Measurement {
        wall: WallTime::from_samples(&samples),
        throughput_bytes: 0,
        alloc: None,
        alloc_unavailable: Some(format!(
            "{} client processes timed from outside: allocations are not counted",
            p.clients
        )),
        instructions_per_op: None,
        verification_notes: vec![format!(
            "timed from outside: {} `repeat` processes of call/void (each verified Void's reply first) released \
             together, until the last finished its {iterations} calls; one sample = that time / all calls",
            p.clients
        )],
        floor_ratio: None,
        ipc_instructions: None,
        costs: Some(IpcCosts {
            operations,
            processes,
            bus_messages_per_op: None,
            bus_bytes_per_op: None,
            bus_messages_by_kind: Default::default(),
            notes,
        }),
        cut: None,
        placement: None,
        connection_memory: None,
    })
}

fn repeat(transport: &Transport, iterations: u64, windows: u32) -> Command {
    Command::Repeat(Repeat {
        scenario: CALL.into(),
        iterations,
        windows,
        transport: Some(transport.clone()),
        ack_fifo: None,
    })
}

/// Every client, waiting after its `WINDOW-END`, is told `go` and reaches
/// its next `WINDOW-BEGIN`.
fn next_window(clients: &mut [Running], p: &Parallel, interrupted: &AtomicBool) -> Result<(), String> {
    for c in clients.iter_mut() {
        c.send(GO)?;
    }
    for c in clients.iter_mut() {
        c.expect(WINDOW_BEGIN, p.timeout, interrupted)?;
    }
    Ok(())
}

/// One window: every client (at `WINDOW-BEGIN`) is told `go`; the time until
/// the last `WINDOW-END`. Leaves each waiting for the `go` after that.
fn release(clients: &mut [Running], p: &Parallel, interrupted: &AtomicBool) -> Result<Duration, String> {
    let start = Instant::now();
    for c in clients.iter_mut() {
        c.send(GO)?;
    }
    for c in clients.iter_mut() {
        c.expect(WINDOW_END, p.timeout, interrupted)?;
    }
    let elapsed = start.elapsed();
    Ok(elapsed)
}

/// ns per call of one client alone, to size the windows.
fn calibrate(p: &Parallel, interrupted: &AtomicBool) -> Result<f64, String> {
    let mut one = Running::start(
        p.bin,
        &repeat(p.transport, CALIBRATION_CALLS, 1),
        None,
        "the calibrating client".into(),
        true,
    )?;
    one.expect(WINDOW_BEGIN, p.timeout, interrupted)?;
    let elapsed = release(std::slice::from_mut(&mut one), p, interrupted)?;
    one.send(GO)?;
    one.finish(interrupted)?;
    Ok(elapsed.as_nanos() as f64 / CALIBRATION_CALLS as f64)
}

/// A parallel-clients cell on its bus session: the server's and the bus
/// daemon's processes counted beside the clients.
pub(super) fn measure_on(
    ctx: &CellContext,
    session: &BusSession,
    server_id: &str,
    bin: &Path,
    transport: &Transport,
    clients: usize,
) -> Result<Measurement, String> {
    let mut others = Vec::new();
    if let Some(pid) = session.server_pid(server_id) {
        others.push(Participant {
            role: "server",
            pids: vec![pid],
        });
    }
    let bus = session.bus_pids();
    if !bus.is_empty() {
        others.push(Participant { role: "bus", pids: bus });
    }
    let parallel = Parallel {
        bin,
        transport,
        clients,
        samples: ctx.profile.sample_size,
        measurement: Duration::from_secs_f64(ctx.profile.measurement),
        others,
        timeout: ctx.timeout,
    };
    measure(&parallel, ctx.interrupted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_sized_by_the_calibrated_call() {
        assert_eq!(calls_per_window(50_000.0, Duration::from_millis(5)), 100);
        assert_eq!(calls_per_window(1e9, Duration::from_millis(5)), 5);
        assert_eq!(calls_per_window(1.0, Duration::from_secs(1)), 100_000);
    }
}
