//! `bench` and `repeat`: timing a verified operation with criterion (or one
//! by one when it is slow), counting its allocations, and repeating it inside
//! the region callgrind counts, with the runner's window handshake.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};

use crate::adapter::{AdapterInfo, Codec};
use crate::alloc;
use crate::contract::{Bench, Repeat, Timer, GO, WINDOW_BEGIN, WINDOW_END};
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
    let settings = Settings::try_from(&b.settings)?;
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
    let mut m = measure(
        &mut prepared.op,
        prepared.first,
        prepared.throughput_bytes,
        notes,
        info.id,
        scenario,
        &settings,
        dir,
    )?;
    // Floods into a subscriber of this process (issue 31): its peak memory, read before exiting.
    if let Some(note) = scenario.ipc_op().and_then(crate::ipc::storm::peak_memory_note) {
        m.verification_notes.push(note);
    }
    std::fs::write(&b.result, serde_json::to_vec_pretty(&m)?).with_context(|| format!("writing {}", b.result.display()))
}

/// `repeat`: verify, then run the operation `iterations` times in the counted
/// region (once, or once per window).
pub(super) fn repeat<C: Codec, I: Ipc>(codec: &mut C, ipc: &mut I, scenario: &Scenario, r: &Repeat) -> Result<()> {
    let mut prepared = prepare(codec, ipc, scenario, r.transport.as_ref(), r.ack_fifo.as_deref())?;
    repeat_windows(
        &mut prepared.op,
        prepared.release.as_deref_mut(),
        r.iterations,
        r.windows,
    )
}

/// `release` runs before each window: a window starts with nothing held
/// (the runner reads memory at both ends of it).
fn repeat_windows(
    op: &mut dyn FnMut(),
    mut release: Option<&mut (dyn FnMut() + '_)>,
    iterations: u64,
    windows: u32,
) -> Result<()> {
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
        if let Some(release) = release.as_deref_mut() {
            release();
        }
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

#[allow(clippy::too_many_arguments)]
fn measure(
    op: &mut dyn FnMut(),
    verified: Duration,
    throughput_bytes: u64,
    notes: Vec<String>,
    adapter_id: &str,
    scenario: &Scenario,
    settings: &Settings,
    dir: &Path,
) -> Result<Measurement> {
    let mut notes = notes;
    if let Some(budget) = settings.budget.filter(|b| verified > *b) {
        // Over the cell budget: the verified operation is the figure; no
        // other to time or to count allocations on (each would cost as much again).
        let cut = format!(
            "the verified operation took {:.2} s, over the profile's cell budget of {} s: timed once",
            verified.as_secs_f64(),
            budget.as_secs_f64()
        );
        return Ok(Measurement {
            wall: WallTime::from_samples(&[verified.as_nanos() as f64]),
            throughput_bytes,
            alloc: None,
            alloc_unavailable: None,
            instructions_per_op: None,
            verification_notes: notes,
            floor_ratio: None,
            costs: None,
            ipc_instructions: None,
            cut: Some(cut),
            placement: None,
            connection_memory: None,
        });
    }
    // One operation decides: criterion needs at least sample_size x 5.5
    // operations (linear sampling), far beyond the profile's budget for slow ones.
    let start = Instant::now();
    op();
    let first = start.elapsed();
    let (wall, alloc) = if first > settings.measurement {
        let alloc = count_allocations(op, 1, false); // warmed up by `first`
        let wall = time_single_operations(op, settings.measurement);
        notes.push(format!(
            "slow operation ({:.2} s): timed as {} single operations, not by criterion",
            first.as_secs_f64(),
            wall.samples
        ));
        (wall, Some(alloc))
    } else {
        let alloc = count_allocations(op, 16, true);
        let wall = match settings.timer {
            Timer::Criterion => time_with_criterion(op, adapter_id, scenario, settings, dir)?,
            Timer::Direct => time_directly(op, first, settings),
        };
        (wall, Some(alloc))
    };
    Ok(Measurement {
        wall,
        throughput_bytes,
        alloc,
        alloc_unavailable: None,
        instructions_per_op: None,
        verification_notes: notes,
        floor_ratio: None,
        costs: None,
        ipc_instructions: None,
        cut: None,
        placement: None,
        connection_memory: None,
    })
}

/// The region callgrind counts (`--toggle-collect=dbus_matrix_measured_region`).
#[no_mangle]
#[inline(never)]
pub extern "Rust" fn dbus_matrix_measured_region(f: &mut dyn FnMut()) {
    f();
}

/// For operations slower than the measurement budget: at least two single
/// operations, timed one by one, until the budget is spent.
fn time_single_operations(op: &mut dyn FnMut(), budget: Duration) -> WallTime {
    let mut samples = Vec::new();
    let mut spent = Duration::ZERO;
    while samples.len() < 2 || spent < budget {
        let start = Instant::now();
        op();
        let took = start.elapsed();
        samples.push(took.as_nanos() as f64);
        spent += took;
    }
    WallTime::from_samples(&samples)
}

/// The direct timer: `sample_size` samples of one iteration count, sized
/// from the first operation so that they fill the measurement time; no
/// warm-up beyond verification and the first operation, no analysis.
fn time_directly(op: &mut dyn FnMut(), first: Duration, settings: &Settings) -> WallTime {
    let per_sample = settings.measurement.as_secs_f64() / settings.sample_size as f64;
    let iterations = (per_sample / first.as_secs_f64().max(1e-9)).clamp(1.0, 1e6) as u64;
    let samples: Vec<f64> = (0..settings.sample_size)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iterations {
                op();
            }
            start.elapsed().as_nanos() as f64 / iterations as f64
        })
        .collect();
    WallTime {
        iterations: iterations * samples.len() as u64,
        ..WallTime::from_samples(&samples)
    }
}

/// Allocations per operation over `ops` operations (after one warm-up
/// operation if `warm_up`), with the counter on only here: no timed
/// operation runs with it.
fn count_allocations(op: &mut dyn FnMut(), ops: u64, warm_up: bool) -> AllocCost {
    if warm_up {
        op(); // first-call effects (lazy statics, buffer growth) are not per-op costs
    }
    let ((), (allocations, bytes)) = alloc::count(|| {
        for _ in 0..ops {
            op();
        }
    });
    AllocCost {
        allocations_per_op: allocations as f64 / ops as f64,
        bytes_per_op: bytes as f64 / ops as f64,
    }
}
