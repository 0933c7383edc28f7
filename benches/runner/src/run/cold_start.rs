//! `property/cold-start`: the one IPC cell the runner times itself, from
//! outside, as whole `cold-start` processes (connect, read, exit).

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use harness::contract::Command;
use harness::ipc::{self, Transport};
use harness::results::{Measurement, WallTime};

use crate::adapter;

/// `property/cold-start`: times `samples` whole `cold-start` processes from
/// outside, checking each one printed the property.
pub fn measure(
    bin: &Path,
    transport: &Transport,
    samples: usize,
    scratch: &Path,
    interrupted: &AtomicBool,
) -> Result<Measurement, String> {
    let expected: String = ipc::items().iter().map(|(a, b)| format!("{a}\t{b}\n")).collect();
    let mut times = Vec::with_capacity(samples);
    let command = Command::ColdStart {
        transport: transport.clone(),
    };
    for _ in 0..samples {
        let start = Instant::now();
        let out = adapter::run(bin, &command, None, scratch, Duration::from_secs(30), interrupted, None)
            .map_err(|e| format!("{e:#}"))?;
        let ns = start.elapsed().as_nanos() as f64;
        if !out.success() {
            return Err(format!("cold-start failed: {}", out.describe()));
        }
        if String::from_utf8_lossy(&out.stdout) != expected {
            return Err("cold-start printed something other than the Items property".into());
        }
        times.push(ns);
    }
    Ok(Measurement {
        wall: WallTime::from_samples(&times),
        throughput_bytes: 0,
        alloc: None,
        alloc_unavailable: Some("timed from outside as whole processes: allocations are not counted".into()),
        instructions_per_op: None,
        verification_notes: vec!["timed from outside: process start to exit, including exec".into()],
        floor_ratio: None,
        costs: None,
        cut: None,
        connection_memory: None,
    })
}
