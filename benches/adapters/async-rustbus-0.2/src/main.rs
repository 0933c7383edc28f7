//! async-rustbus 0.2.x. Its message layer is its own (`rustbus_core::
//! message_builder`: `MessageBuilder`, `MarshalledMessage`, `DynamicHeader`)
//! over rustbus 0.17's `Marshal`/`Unmarshal`/`Signature` traits, so the codec
//! runs that layer, as its connection does: arguments pushed with
//! `body.push_param*`, `MarshalledMessage::marshal_header` writes the header
//! (the connection writes header and body separately, here they are
//! concatenated); a received message is parsed as its receive loop does
//! (`unmarshal_header`, `DynamicHeader::unmarshal`, the body copied out and
//! wrapped with `MarshalledMessageBody::from_parts`), then read with
//! `body.parser().get::<T>()` into typed values borrowing the body.
//!
//! The insertion-ordered dicts and string variants, the push and digest of a
//! test body (`typed`) and the server's answer to any call
//! (`standard_reply`) are adapter-shared/rustbus/'s, which rustbus-0.19 compiles
//! too: the same source, compiled against rustbus 0.17 and async-rustbus's
//! message types here.

use std::num::NonZeroU32;

use anyhow::{anyhow, ensure, Context, Result};
use async_rustbus::rustbus_core::message_builder::{
    DynamicHeader, MarshalledMessage, MarshalledMessageBody, MessageBuilder,
};
use async_rustbus::rustbus_core::wire::unmarshal::traits::Unmarshal;
use async_rustbus::rustbus_core::wire::unmarshal::{self, UnmarshalContext};
use async_rustbus::rustbus_core::ByteOrder;
use harness::payload::{self, Body};
use harness::{Codec, Digest, Shape};
use rustbus::wire::marshal::traits::SignatureBuffer;
// Named here for `typed` (rustbus 0.17's error types; 0.19 has `wire::errors`).
use rustbus::wire::unmarshal::Error as UnmarshalError;
use rustbus::Error as MarshalError;
use typed::{digest_test_body, header_capacity, test_signal};

mod apps;
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
    id: "async-rustbus-0.2",
    library: "async-rustbus",
    runtime: "tokio 1.43 current-thread runtime (block_on on the calling thread), one per client, subscriber and server",
    codec: AsyncRustbus,
    ipc: ipc::AsyncRustbusIpc::default()
);

struct AsyncRustbus;

/// rustbus 0.17's errors (`rustbus::Error`, `unmarshal::Error`) do not
/// implement `std::error::Error`: `.wire()?` turns them into anyhow errors.
trait WireResult<T> {
    fn wire(self) -> Result<T>;
}

impl<T, E: std::fmt::Debug> WireResult<T> for std::result::Result<T, E> {
    fn wire(self) -> Result<T> {
        self.map_err(|e| anyhow!("{e:?}"))
    }
}

const SERIAL: NonZeroU32 = NonZeroU32::new(payload::SERIAL).unwrap();

/// The signal of a marshal scenario (also sent by `connect/marshal-send`).
fn build_signal(body: &Body) -> Result<MarshalledMessage> {
    test_signal!(body).wire()
}

/// As async-rustbus's receive loop (`RecvState::try_get_msg` + `mm_from_raw`) builds a message.
fn parse(bytes: &[u8]) -> Result<MarshalledMessage> {
    let (header_len, header) = unmarshal::unmarshal_header(bytes, 0).wire()?;
    let mut ctx = UnmarshalContext {
        byteorder: header.byteorder,
        offset: header_len,
        buf: bytes,
        fds: &[],
    };
    let (fields_len, mut dynheader) = DynamicHeader::unmarshal(&mut ctx).wire()?;
    dynheader.serial = NonZeroU32::new(header.serial);
    // The body starts 8-aligned after the header fields.
    let start = (header_len + fields_len).next_multiple_of(8);
    let body = bytes
        .get(start..start + header.body_len as usize)
        .context("the message is shorter than its header says")?
        .to_vec();
    let signature = SignatureBuffer::from_string(dynheader.signature.as_deref().unwrap_or("").to_string());
    Ok(MarshalledMessage {
        typ: header.typ,
        flags: header.flags,
        body: MarshalledMessageBody::from_parts(body, Vec::new(), signature, header.byteorder),
        dynheader,
    })
}

impl Codec for AsyncRustbus {
    type Wire = Vec<u8>;

    fn marshal(&mut self, body: &Body) -> Result<Vec<u8>> {
        let msg = build_signal(body)?;
        let mut wire = Vec::with_capacity(header_capacity(msg.get_sig().len()) + msg.get_buf().len());
        msg.marshal_header(SERIAL, &mut wire).wire()?;
        wire.extend_from_slice(msg.get_buf());
        Ok(wire)
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, d: &mut Digest) -> Result<()> {
        // The body is copied out of `bytes`, as async-rustbus does from its read buffer.
        let msg = parse(bytes)?;
        let mut p = msg.body.parser();
        digest_test_body!(p, shape, d).wire()?;
        ensure!(p.get_next_sig().is_none(), "the body has more arguments than expected");
        Ok(())
    }
}
