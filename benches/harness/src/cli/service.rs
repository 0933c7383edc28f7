//! The long-running and whole-process sides of IPC: `serve`, `subscribe`,
//! `cold-start`.

use std::io::Write;

use anyhow::{Context, Result};

use crate::contract::{Subscribe, READY};
use crate::ipc::{Ipc, Transport};

fn print_ready() {
    println!("{READY}");
    let _ = std::io::stdout().flush();
}

/// `serve`: the benchmark service, until killed.
pub(super) fn serve(ipc: &mut impl Ipc, transport: &Transport) -> Result<()> {
    ipc.serve(transport, &mut print_ready)
}

/// `subscribe`: one byte to the ack FIFO each time every connection got a Ping.
pub(super) fn subscribe(ipc: &mut impl Ipc, s: &Subscribe) -> Result<()> {
    let mut fifo = std::fs::OpenOptions::new()
        .read(true) // O_RDWR: opening does not wait for the reader
        .write(true)
        .open(&s.ack_fifo)
        .with_context(|| format!("opening the ack FIFO {}", s.ack_fifo.display()))?;
    let mut ack = || {
        fifo.write_all(b"!").expect("writing to the ack FIFO");
    };
    ipc.subscribe(&s.transport, s.connections, s.extra_rules, &mut print_ready, &mut ack)
}

/// `cold-start`: the Items property, one `id\tname` line per pair.
pub(super) fn cold_start(ipc: &mut impl Ipc, transport: &Transport) -> Result<()> {
    for (id, name) in ipc.cold_start(transport)? {
        println!("{id}\t{name}");
    }
    Ok(())
}
