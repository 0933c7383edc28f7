//! tokio-dbus 0.2.x, a pure-Rust D-Bus stack for Tokio with a borrowed,
//! hand-driven API: bodies are written into a `BodyBuf` through its typed
//! writers (`store`, `store_struct::<(..)>`, `store_array::<ty::..>`), messages
//! into a `SendBuf`, and a `Connection` moves bytes between those buffers, a
//! `RecvBuf` and the socket; received bodies are read with `Body::load`/`read`/
//! `load_array`/`load_struct`, borrowing the receive buffer.
//!
//! The codec scenarios are unsupported: tokio-dbus has no public way to turn a
//! message into bytes or bytes into a message without a connection
//! ([`NO_CODEC`]). The typed body writer is still used, for the
//! `connect/marshal-send` signal ([`body`]).

use anyhow::{bail, Result};
use harness::payload::Body;
use harness::scenario::{Kind, Scenario};
use harness::{Codec, Digest, Shape};

mod body;
mod ipc;

harness::adapter_main!(
    id: "tokio-dbus-0.2",
    library: "tokio-dbus",
    runtime: "tokio 1.43 current-thread runtime (block_on on the calling thread), one per client, subscriber and server",
    codec: TokioDbus,
    ipc: ipc::TokioDbusIpc::default()
);

/// Why the codec cells are unsupported (the library's API, as of 0.2.2).
const NO_CODEC: &str = "tokio-dbus 0.2.2 marshals a message only into a SendBuf, whose bytes are crate-private \
     (SendBuf::buf is pub(crate); only Connection::flush writes them to a socket), and parses one only out of a \
     RecvBuf that a Connection filled from its socket (RecvBuf has no public constructor from bytes): no wire bytes \
     without a connection, and no message from given bytes";

struct TokioDbus;

impl Codec for TokioDbus {
    type Wire = Vec<u8>;

    fn marshal(&mut self, _body: &Body) -> Result<Vec<u8>> {
        bail!("{NO_CODEC}")
    }

    fn demarshal(&mut self, _bytes: &[u8], _shape: Shape, _digest: &mut Digest) -> Result<()> {
        bail!("{NO_CODEC}")
    }

    fn unsupported(&self, scenario: &Scenario) -> Option<String> {
        matches!(scenario.kind, Kind::Marshal | Kind::Demarshal).then(|| NO_CODEC.to_string())
    }
}
