//! The long-running and whole-process sides of IPC: `serve`, `subscribe`,
//! `cold-start`.

use std::io::Write;

use anyhow::{bail, ensure, Context, Result};

use crate::contract::{Subscribe, READY};
use crate::ipc::{Ipc, IpcOp, Transport};

fn print_ready() {
    println!("{READY}");
    let _ = std::io::stdout().flush();
}

/// `serve`: the benchmark service, until killed.
pub(super) fn serve(ipc: &mut impl Ipc, transport: &Transport) -> Result<()> {
    ipc.serve(transport, &mut print_ready)
}

/// `subscribe`: `connections` subscribers (the first with the extra rules);
/// one byte to the ack FIFO each time every one got a Ping with the right text.
pub(super) fn subscribe(ipc: &mut impl Ipc, s: &Subscribe) -> Result<()> {
    if s.transport.is_p2p() {
        bail!("subscribers need a bus (match rules)");
    }
    let mut fifo = std::fs::OpenOptions::new()
        .read(true) // O_RDWR: opening does not wait for the reader
        .write(true)
        .open(&s.ack_fifo)
        .with_context(|| format!("opening the ack FIFO {}", s.ack_fifo.display()))?;
    let mut subscribers = Vec::with_capacity(s.connections);
    for i in 0..s.connections {
        let extra_rules = if i == 0 { s.extra_rules } else { 0 };
        subscribers.push(
            ipc.subscriber(&s.transport, extra_rules)
                .with_context(|| format!("subscriber {i}"))?,
        );
    }
    print_ready();
    let expected = IpcOp::EmitReceive.expected_digest("");
    loop {
        for receive in &mut subscribers {
            ensure!(
                receive()? == expected,
                "a subscriber received a Ping with the wrong text"
            );
        }
        fifo.write_all(b"!").context("writing to the ack FIFO")?;
    }
}

/// `cold-start`: the Items property, one `id\tname` line per pair.
pub(super) fn cold_start(ipc: &mut impl Ipc, transport: &Transport) -> Result<()> {
    for (id, name) in ipc.cold_start(transport)? {
        println!("{id}\t{name}");
    }
    Ok(())
}
