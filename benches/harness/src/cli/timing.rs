//! `bench` and `repeat`: timing a verified operation with criterion (or one
//! by one when it is slow), counting its allocations, and repeating it inside
//! the region callgrind counts, with the runner's window handshake.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};

use crate::adapter::{AdapterInfo, Codec};
use crate::alloc;
use crate::contract::{Bench, Repeat, GO, WINDOW_BEGIN, WINDOW_END};
use crate::ipc::Ipc;
use crate::results::{AllocCost, Measurement, WallTime};
use crate::scenario::Scenario;

use super::criterion_output::{time_with_criterion, Settings, TempDir};
use super::prepare::prepare;

/// `bench`: verify, count allocations, time, and write the `Measurement` JSON.
pub(super) fn bench<C: Codec, I: Ipc>(
    info: &AdapterInfo,
    codec: &mut C,
    ipc: &mut I,
    scenario: &Scenario,
    b: &Bench,
) -> Result<()> {
    let settings = Settings::from(&b.settings);
    let scratch;
    let dir = match &b.criterion_dir {
        Some(d) => d.as_path(),
        None => {
            scratch = TempDir::new()?;
            scratch.path()
        }
    };
    let mut prepared = prepare(codec, ipc, scenario, b.transport.as_ref(), b.ack_fifo.as_deref())?;
    let notes = std::mem::take(&mut prepared.notes);
    let m = measure(
        &mut prepared.op,
        prepared.throughput_bytes,
        notes,
        info.id,
        scenario,
        &settings,
        dir,
    )?;
    std::fs::write(&b.result, serde_json::to_vec_pretty(&m)?).with_context(|| format!("writing {}", b.result.display()))
}

/// `repeat`: verify, then run the operation `iterations` times in the counted
/// region (once, or once per window).
pub(super) fn repeat<C: Codec, I: Ipc>(codec: &mut C, ipc: &mut I, scenario: &Scenario, r: &Repeat) -> Result<()> {
    let mut prepared = prepare(codec, ipc, scenario, r.transport.as_ref(), r.ack_fifo.as_deref())?;
    repeat_windows(&mut prepared.op, r.iterations, r.windows)
}

fn repeat_windows(op: &mut dyn FnMut(), iterations: u64, windows: u32) -> Result<()> {
    let mut region = || {
        dbus_matrix_measured_region(&mut || {
            for _ in 0..iterations {
                op();
            }
        })
    };
    if windows == 0 {
        region();
    }
    for _ in 0..windows {
        announce_and_wait(WINDOW_BEGIN)?;
        region();
        announce_and_wait(WINDOW_END)?;
    }
    Ok(())
}

/// Prints `what` and waits for the runner's `go`.
fn announce_and_wait(what: &str) -> Result<()> {
    println!("{what}");
    std::io::stdout().flush()?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    ensure!(
        line.trim() == GO,
        "after {what} the runner said {:?}, not {GO:?}",
        line.trim()
    );
    Ok(())
}

fn measure(
    op: &mut dyn FnMut(),
    throughput_bytes: u64,
    notes: Vec<String>,
    adapter_id: &str,
    scenario: &Scenario,
    settings: &Settings,
    dir: &Path,
) -> Result<Measurement> {
    let mut notes = notes;
    // One operation decides: criterion needs at least sample_size x 5.5
    // operations (linear sampling), far beyond the profile's budget for slow ones.
    let start = Instant::now();
    op();
    let first = start.elapsed();
    let (wall, alloc) = if first > settings.measurement {
        let (wall, alloc) = time_single_operations(op, settings.measurement);
        notes.push(format!(
            "slow operation ({:.2} s): timed as {} single operations, not by criterion",
            first.as_secs_f64(),
            wall.samples
        ));
        (wall, alloc)
    } else {
        let alloc = count_allocations(op);
        (time_with_criterion(op, adapter_id, scenario, settings, dir)?, alloc)
    };
    Ok(Measurement {
        wall,
        throughput_bytes,
        alloc: Some(alloc),
        instructions_per_op: None,
        verification_notes: notes,
        floor_ratio: None,
        costs: None,
        cut: None,
    })
}

/// The region callgrind counts (`--toggle-collect=dbus_matrix_measured_region`).
#[no_mangle]
#[inline(never)]
pub extern "Rust" fn dbus_matrix_measured_region(f: &mut dyn FnMut()) {
    f();
}

/// For operations slower than the measurement budget: at least two single
/// operations, timed one by one, until the budget is spent; allocations are
/// counted over the first.
fn time_single_operations(op: &mut dyn FnMut(), budget: Duration) -> (WallTime, AllocCost) {
    let mut samples = Vec::new();
    let mut alloc = None;
    let mut spent = Duration::ZERO;
    while samples.len() < 2 || spent < budget {
        let (a0, b0) = alloc::snapshot();
        let start = Instant::now();
        op();
        let took = start.elapsed();
        let (a1, b1) = alloc::snapshot();
        alloc.get_or_insert(AllocCost {
            allocations_per_op: (a1 - a0) as f64,
            bytes_per_op: (b1 - b0) as f64,
        });
        samples.push(took.as_nanos() as f64);
        spent += took;
    }
    (WallTime::from_samples(&samples), alloc.expect("at least one operation"))
}

fn count_allocations(op: &mut dyn FnMut()) -> AllocCost {
    const OPS: u64 = 16;
    op(); // first-call effects (lazy statics, buffer growth) are not per-op costs
    let (a0, b0) = alloc::snapshot();
    for _ in 0..OPS {
        op();
    }
    let (a1, b1) = alloc::snapshot();
    AllocCost {
        allocations_per_op: (a1 - a0) as f64 / OPS as f64,
        bytes_per_op: (b1 - b0) as f64 / OPS as f64,
    }
}
