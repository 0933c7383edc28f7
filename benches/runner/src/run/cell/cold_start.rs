//! `property/cold-start`: the one IPC cell the runner times itself, from
//! outside, as whole `cold-start` processes (connect, read, exit). In the
//! cell's first round on a bus, one more cold start runs while a bus monitor
//! watches: the messages one whole process costs the bus (Hello, AddMatch,
//! Introspect, Get...), which is where libraries differ most for a CLI.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use bus::monitor::BusMonitor;
use harness::contract::Command;
use harness::ipc::{self, Transport};
use harness::results::{IpcCosts, Measurement, WallTime};

use crate::process::adapter;

const PROCESS_TIMEOUT: Duration = Duration::from_secs(30);

/// `property/cold-start`: times `samples` whole `cold-start` processes from
/// outside, checking each one printed the property; with `monitored_bus` (the
/// bus socket, in the first round), counts the messages of one more.
pub fn measure(
    bin: &Path,
    transport: &Transport,
    samples: usize,
    monitored_bus: Option<&Path>,
    scratch: &Path,
    interrupted: &AtomicBool,
) -> Result<Measurement, String> {
    let command = Command::ColdStart {
        transport: transport.clone(),
    };
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let start = Instant::now();
        cold_start(bin, &command, scratch, interrupted)?;
        times.push(start.elapsed().as_nanos() as f64);
    }
    let costs = match monitored_bus {
        None => None,
        Some(socket) => Some(match monitored(bin, &command, socket, scratch, interrupted)? {
            Ok(costs) => costs,
            Err(why) => IpcCosts {
                operations: 1,
                processes: Vec::new(),
                bus_messages_per_op: None,
                bus_bytes_per_op: None,
                bus_messages_by_kind: BTreeMap::new(),
                notes: vec![format!("bus messages not counted: {why}")],
            },
        }),
    };
    Ok(Measurement {
        wall: WallTime::from_samples(&times),
        throughput_bytes: 0,
        alloc: None,
        alloc_unavailable: Some("timed from outside as whole processes: allocations are not counted".into()),
        instructions_per_op: None,
        verification_notes: vec!["timed from outside: process start to exit, including exec".into()],
        floor_ratio: None,
        costs,
        ipc_instructions: None,
        cut: None,
        placement: None,
        connection_memory: None,
    })
}

/// One checked `cold-start` process.
fn cold_start(bin: &Path, command: &Command, scratch: &Path, interrupted: &AtomicBool) -> Result<(), String> {
    let expected: String = ipc::items().iter().map(|(a, b)| format!("{a}\t{b}\n")).collect();
    let out =
        adapter::run(bin, command, None, scratch, PROCESS_TIMEOUT, interrupted, None).map_err(|e| format!("{e:#}"))?;
    if !out.success() {
        return Err(format!("cold-start failed: {}", out.describe()));
    }
    if String::from_utf8_lossy(&out.stdout) != expected {
        return Err("cold-start printed something other than the Items property".into());
    }
    Ok(())
}

/// One more cold start between two monitor markers: what the bus routed for
/// it, by kind. The outer `Err` fails the cell (the process failed); the
/// inner one is why the monitor could not count (a note).
fn monitored(
    bin: &Path,
    command: &Command,
    socket: &Path,
    scratch: &Path,
    interrupted: &AtomicBool,
) -> Result<Result<IpcCosts, String>, String> {
    let window = BusMonitor::connect(socket).and_then(|mut m| m.begin_recorded().map(|id| (m, id)));
    cold_start(bin, command, scratch, interrupted)?;
    let counted = window.and_then(|(mut m, id)| m.end_recorded(id));
    Ok(counted.map_err(|e| format!("{e:#}")).map(|(traffic, kinds)| IpcCosts {
        operations: 1,
        processes: Vec::new(),
        bus_messages_per_op: Some(traffic.messages as f64),
        bus_bytes_per_op: Some(traffic.bytes as f64),
        bus_messages_by_kind: kinds.into_iter().map(|(k, n)| (k, n as f64)).collect(),
        notes: vec![
            "bus messages of one more cold-start process, under a bus monitor (the timed ones are not monitored)"
                .into(),
        ],
    }))
}
