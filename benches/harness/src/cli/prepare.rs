//! Building a cell's operation and checking its result against the canonical
//! one before anything is timed: nothing is measured unless this passes.

use std::hint::black_box;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};

use crate::adapter::Codec;
use crate::digest::Digest;
use crate::ipc::{Ipc, IpcOp, Transport};
use crate::scenario::{Kind, Scenario};
use crate::{verify, wire};

use super::{floor, idle};

/// A verified operation, ready to be timed or repeated.
pub(super) struct Prepared<'a> {
    pub op: Box<dyn FnMut() + 'a>,
    pub throughput_bytes: u64,
    /// What verification noticed (accepted deviations from the canonical bytes).
    pub notes: Vec<String>,
    /// How long the verified first operation took (the call alone, not its check).
    pub first: Duration,
    /// Lets go of what the operation holds (`connect/idle-connections`: the
    /// connections), so a `repeat` window starts with nothing held.
    pub release: Option<Box<dyn FnMut() + 'a>>,
}

/// The verified operation of `scenario`: a codec call, or an IPC client
/// operation on `transport` (acknowledged through `ack_fifo` for fan-out).
pub(super) fn prepare<'a, C: Codec, I: Ipc>(
    codec: &'a mut C,
    ipc: &'a mut I,
    scenario: &Scenario,
    transport: Option<&Transport>,
    ack_fifo: Option<&Path>,
) -> Result<Prepared<'a>> {
    match scenario.kind {
        Kind::Marshal => prepare_marshal(codec, scenario),
        Kind::Demarshal => prepare_demarshal(codec, scenario),
        Kind::Ipc(op) => prepare_ipc(ipc, op, transport, ack_fifo),
    }
}

// The timed codec operations were verified first, so a failure in them is a
// library fault worth a panic (the runner reports it as a failed cell).

fn prepare_marshal<'a, C: Codec>(codec: &'a mut C, scenario: &Scenario) -> Result<Prepared<'a>> {
    let body = scenario.body();
    let started = Instant::now();
    let wire = codec.marshal(&body).context("marshal failed")?;
    let first = started.elapsed();
    let bytes = wire.as_ref();
    let verdict =
        verify::verify_signal(bytes, &body).with_context(|| format!("verification of {} failed", scenario.id))?;
    let throughput_bytes = bytes.len() as u64;
    Ok(Prepared {
        op: Box::new(move || {
            black_box(
                codec
                    .marshal(black_box(&body))
                    .expect("marshal failed after verification"),
            );
        }),
        throughput_bytes,
        notes: verdict.notes,
        first,
        release: None,
    })
}

fn prepare_demarshal<'a, C: Codec>(codec: &'a mut C, scenario: &Scenario) -> Result<Prepared<'a>> {
    let body = scenario.body();
    let shape = scenario.shape();
    let bytes = wire::canonical_signal(&body);
    let mut digest = Digest::new();
    let started = Instant::now();
    codec
        .demarshal(&bytes, shape, &mut digest)
        .context("demarshal failed")?;
    let first = started.elapsed();
    verify::verify_digest(digest.finish(), &body).with_context(|| format!("verification of {} failed", scenario.id))?;
    Ok(Prepared {
        throughput_bytes: bytes.len() as u64,
        op: Box::new(move || {
            let mut digest = Digest::new();
            codec
                .demarshal(black_box(&bytes), shape, &mut digest)
                .expect("demarshal failed after verification");
            black_box(digest.finish());
        }),
        notes: Vec::new(),
        first,
        release: None,
    })
}

/// Connects, performs the op once and checks what came back (and, for
/// fan-out, that every subscriber acknowledged) before anything is timed.
fn prepare_ipc<'a, I: Ipc>(
    ipc: &'a mut I,
    op: IpcOp,
    transport: Option<&Transport>,
    ack_fifo: Option<&Path>,
) -> Result<Prepared<'a>> {
    let throughput_bytes = match op {
        IpcOp::EchoBytes(n) | IpcOp::RawSocket(n) | IpcOp::FdPassing(n) => n as u64,
        IpcOp::App(a) => a.bytes(),
        _ => 0,
    };
    let mut release = None;
    let mut client: Box<dyn FnMut() -> Result<u64> + 'a> = match op {
        IpcOp::RawSocket(n) => Box::new(floor::raw_socket_ping_pong(n)?),
        IpcOp::IdleConnections(n) => {
            let t = transport.context("IPC scenarios need a transport")?;
            let (hold, let_go) = idle::holder(ipc, t.clone(), n);
            release = Some(let_go);
            hold
        }
        IpcOp::PropertyColdStart => bail!("property/cold-start is timed by the runner (whole processes)"),
        _ => {
            let t = transport.context("IPC scenarios need a transport")?;
            ipc.client(t, op).context("connecting the client")?
        }
    };
    let expected = op.expected_digest(transport.map_or("", Transport::service_name));
    let mut ack = match op.subscribers() {
        Some(_) => {
            let path = ack_fifo.context("signal fan-out needs --ack-fifo")?;
            Some(std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?)
        }
        None => None,
    };
    let started = Instant::now();
    let got = client().context("the first operation failed")?;
    ensure!(
        got == expected,
        "verification failed: received digest {got:016x}, expected {expected:016x}"
    );
    if let Some(f) = &mut ack {
        wait_ack(f).context("the subscribers did not acknowledge the first Ping")?;
    }
    let first = started.elapsed(); // with the digest check: nanoseconds beside a round trip
                                   // What a property storm's subscriber saw (received, announced, held), for the cell's notes.
    let notes = crate::ipc::storm::take_note().into_iter().collect();
    let op = move || {
        let d = client().expect("IPC operation failed after verification");
        if let Some(f) = &mut ack {
            wait_ack(f).expect("subscribers stopped acknowledging");
        }
        black_box(d);
    };
    Ok(Prepared {
        op: Box::new(op),
        throughput_bytes,
        notes,
        first,
        release,
    })
}

fn wait_ack(f: &mut std::fs::File) -> Result<()> {
    let mut b = [0u8; 1];
    f.read_exact(&mut b)
        .context("the ack FIFO closed: a subscriber process died")
}
