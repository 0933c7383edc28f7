//! rustbus 0.19.x through its trait path (`Marshal` / `Unmarshal` / `Signature`),
//! which the crate recommends over its older `params` enums: arguments are pushed
//! with `body.push_param*`, `wire::marshal::marshal` writes the header (the
//! connection writes header and body separately, here they are concatenated), and
//! a received message is parsed with `unmarshal_header` +
//! `unmarshal_dynamic_header` + `unmarshal_next_message`, then read with
//! `body.parser().get::<T>()` into typed values borrowing the body.
//!
//! rustbus maps dicts only to `HashMap`, which would lose insertion order, so
//! the two dicts are small user types implementing the traits ([`typed`],
//! shared with async-rustbus-0.2).

use anyhow::{ensure, Result};
use harness::payload::{self, Body};
use harness::{Codec, Digest, Shape};
use rustbus::message_builder::MarshalledMessage;
// Named here for `typed`, whose source async-rustbus-0.2 (on rustbus 0.17) shares.
use rustbus::wire::errors::{MarshalError, UnmarshalError};
use rustbus::wire::marshal;
use rustbus::wire::unmarshal;
use rustbus::wire::UnixFd;
use rustbus::{ByteOrder, MessageBuilder};
use typed::{digest_test_body, header_capacity, test_signal};

mod apps;
#[path = "../../../adapter-shared/rustbus/fds_server.rs"]
mod fds;
mod ipc;
mod props;
#[path = "../../../adapter-shared/rustbus/standard_reply.rs"]
mod standard_reply;
mod storm;
mod subscriptions;
#[path = "../../../adapter-shared/rustbus/typed.rs"]
mod typed;

harness::adapter_main!(
    id: "rustbus-0.19",
    library: "rustbus",
    runtime: "blocking: the calling thread",
    codec: Rustbus,
    ipc: ipc::RustbusIpc
);

struct Rustbus;

/// The signal of a marshal scenario (also sent by `connect/marshal-send`).
fn build_signal(body: &Body) -> Result<MarshalledMessage> {
    Ok(test_signal!(body)?)
}

fn parse(bytes: &[u8]) -> Result<MarshalledMessage> {
    let (header_len, header) = unmarshal::unmarshal_header(bytes, 0)?;
    let (fields_len, dynheader) = unmarshal::unmarshal_dynamic_header(&header, bytes, header_len)?;
    let (_, msg) = unmarshal::unmarshal_next_message(&header, dynheader, bytes, header_len + fields_len)?;
    Ok(msg)
}

impl Codec for Rustbus {
    type Wire = Vec<u8>;

    fn marshal(&mut self, body: &Body) -> Result<Vec<u8>> {
        let msg = build_signal(body)?;
        let mut wire = Vec::with_capacity(header_capacity(msg.get_sig().len()) + msg.get_buf().len());
        marshal::marshal(&msg, payload::SERIAL, &mut wire)?;
        wire.extend_from_slice(msg.get_buf());
        Ok(wire)
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, d: &mut Digest) -> Result<()> {
        // The body is copied out of `bytes`, as rustbus does from its read buffer.
        let msg = parse(bytes)?;
        let mut p = msg.body.parser();
        digest_test_body!(p, shape, d)?;
        ensure!(p.get_next_sig().is_none(), "the body has more arguments than expected");
        Ok(())
    }
}
