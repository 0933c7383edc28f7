//! How applications use a library beyond one call on one connection (issue 31,
//! items 10, 5 and 6): a 16 KiB in-only call to a service the process serves
//! itself, K connections in one process called round-robin (as opposed to
//! K processes, `call/parallel-clients/<k>`), and a proxy built and called
//! once against a server with or without the Properties interface, and
//! start-up over a tree of n objects ([`super::startup`])
//! ([`super::proxied`], served by the harness's [`super::raw_server`]). Each is one variant of
//! [`AppOp`], carried by [`super::IpcOp::App`], so that an adapter without
//! code for them needs one match arm for the whole group.
//!
//! Every one is opt-in ([`super::IpcOp::opt_in`]). The definitions in prose:
//! docs/scenarios.md, "What applications do".

use std::sync::{Arc, Mutex};

use super::proxied::ProxyServer;
use crate::digest::Digest;

/// The well-known name the serving connection of `call/in-only-bytes/<n>` owns
/// and the calling one addresses, under the adapter's service name
/// (`service_name`: `Transport::Bus`'s): the generated bus policy lets method
/// calls through to listed names only, never to a unique name.
pub fn sink_name(service_name: &str) -> String {
    format!("{service_name}.Sink")
}

/// The names a client process of the application families owns beside the
/// adapter's service (`service_name`), each a name the bus policy must let
/// method calls through to: the sink's and the proxied object's.
pub fn served_names(service_name: &str) -> [String; 2] {
    [sink_name(service_name), super::proxied::proxied_name(service_name)]
}

/// The object the process serves itself in `call/in-only-bytes/<n>`.
pub const SINK_PATH: &str = "/io/killing/spark/sink";
/// Its interface: one method, [`SINK_BYTES`].
pub const SINK_INTERFACE: &str = "io.killing.spark.Sink";
/// `SinkBytes(ay)`: takes the bytes, returns nothing (an empty reply).
pub const SINK_BYTES: &str = "SinkBytes";

/// Sizes of `call/in-only-bytes/<n>`: 16 KiB (what an application hands a
/// service in one call, such as a small image or a buffer of samples).
pub const IN_ONLY_SIZES: [usize; 1] = [16384];
/// Connections of `call/connections-in-process/<k>`.
pub const CONNECTION_COUNTS: [usize; 2] = [1, 20];

/// One operation of the application families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppOp {
    /// `call/in-only-bytes/<n>`: connection A of the process serves
    /// [`SINK_BYTES`] at [`SINK_PATH`] (through the library's server API);
    /// connection B calls it through the bus, addressed to the name A owns
    /// ([`sink_name`]),
    /// with [`super::echo_payload`]`(n)` and awaits the empty reply. A tallies
    /// what it received in a [`SinkTally`]; the op's digest is the tally taken
    /// after the reply ([`SinkTally::take`]): the bytes of each call received
    /// since the last op, then their number. A call lost, sent twice,
    /// shortened or not awaited (the tally read before A got it) changes it.
    InOnlyBytes(usize),
    /// `call/connections-in-process/<k>`: k connections of one process to the
    /// benchmark service, each with its proxy; one op is k `InOutInt` calls,
    /// call `i` on connection `i` sending [`super::in_flight_arg`]`(i)`, each
    /// reply awaited before the next call. Checked as a `call/in-flight/<k>`
    /// batch ([`super::in_flight_digest`]): a call skipped or a reply taken
    /// from the wrong call changes the digest.
    Connections(usize),
    /// `proxy/create-call/<server>`: a second connection of the process (the
    /// harness's [`super::raw_server`], the same for every library) serves
    /// [`super::proxied`]'s object with or without the Properties interface;
    /// one op builds a new proxy of the object through the library's proxy API
    /// (where it has one: otherwise the call is built as the library builds
    /// any call), makes one `Void` call through it, and drops it. Checked by
    /// the server's tally: exactly one `Void` per op. What else the library
    /// sends while building the proxy (GetAll, Introspect, AddMatch) shows in
    /// the cell's bus messages per op.
    ProxyCreate(ProxyServer),
    /// `proxy/startup/<n>` (issue 31, item 6): the harness's raw connection
    /// serves [`super::startup`]'s tree of n objects; one op introspects the
    /// root, parses its XML the library's way, and per child introspects it,
    /// parses the XML into the library's introspection structures, builds a
    /// proxy from them and calls `Id`. Checked by [`super::startup::op_digest`]:
    /// the Ids and the server's tally of n + 1 Introspects and n `Id` calls.
    Startup(usize),
}

impl AppOp {
    /// The scenario id without its size, for reasons.
    pub fn family(self) -> &'static str {
        match self {
            AppOp::InOnlyBytes(_) => "call/in-only-bytes",
            AppOp::Connections(_) => "call/connections-in-process",
            AppOp::ProxyCreate(_) => "proxy/create-call",
            AppOp::Startup(_) => "proxy/startup",
        }
    }

    /// The size in the scenario id, if any (the canon's argument).
    pub fn size(self) -> Option<usize> {
        match self {
            AppOp::InOnlyBytes(n) | AppOp::Connections(n) | AppOp::Startup(n) => Some(n),
            AppOp::ProxyCreate(_) => None,
        }
    }

    /// The op's name in the canon (`canon::op_json`).
    pub fn canon_kind(self) -> &'static str {
        match self {
            AppOp::InOnlyBytes(_) => "in-only-bytes",
            AppOp::Connections(_) => "connections-in-process",
            AppOp::ProxyCreate(ProxyServer::Props) => "proxy-create-props",
            AppOp::ProxyCreate(ProxyServer::NoProps) => "proxy-create-no-props",
            AppOp::Startup(_) => "proxy-startup",
        }
    }

    /// Digest of what the client must receive per operation.
    pub fn expected_digest(self) -> u64 {
        match self {
            AppOp::InOnlyBytes(n) => {
                let mut t = SinkTally::default();
                t.receive(&super::echo_payload(n));
                t.take()
            }
            AppOp::Connections(k) => super::in_flight_digest((0..k).map(|i| super::in_flight_arg(i) + 1)),
            AppOp::ProxyCreate(_) => {
                let mut t = SinkTally::default();
                t.receive(&[]);
                t.take()
            }
            AppOp::Startup(n) => super::startup::expected_digest(n),
        }
    }

    /// Why the op cannot run peer to peer, if it cannot.
    pub fn needs_bus(self) -> Option<&'static str> {
        match self {
            AppOp::InOnlyBytes(_) => Some(
                "the in-only call goes through the bus to a service of the same process: peer to peer a \
                 connection reaches only the server at its other end, not a second connection of this process",
            ),
            AppOp::ProxyCreate(_) => Some(
                "the proxied object is served through the bus by a second connection of the client process: \
                 peer to peer a connection reaches only the server at its other end",
            ),
            AppOp::Startup(_) => Some(
                "the objects are served through the bus by a second connection of the client process: \
                 peer to peer a connection reaches only the server at its other end",
            ),
            AppOp::Connections(_) => None,
        }
    }

    /// Bytes carried per operation (the cell's throughput).
    pub fn bytes(self) -> u64 {
        match self {
            AppOp::InOnlyBytes(n) => n as u64,
            AppOp::Connections(_) | AppOp::ProxyCreate(_) | AppOp::Startup(_) => 0,
        }
    }
}

/// What the self-served `SinkBytes` received since the client last took it.
#[derive(Clone, Debug, Default)]
pub struct SinkTally {
    digest: Digest,
    calls: usize,
}

impl SinkTally {
    /// One `SinkBytes` call's argument, as the server got it.
    pub fn receive(&mut self, bytes: &[u8]) {
        self.digest.bytes(bytes);
        self.calls += 1;
    }

    /// The digest of every array received since the last take, then their
    /// number; the tally starts again from nothing.
    pub fn take(&mut self) -> u64 {
        let mut t = std::mem::take(self);
        t.digest.len(t.calls);
        t.digest.finish()
    }
}

/// The tally as the server's handler and the timed client share it.
pub type SharedTally = Arc<Mutex<SinkTally>>;

/// Takes the tally (the client, after the reply came back).
pub fn take_tally(tally: &SharedTally) -> u64 {
    tally.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
}

/// Records one received array (the server's handler).
pub fn record(tally: &SharedTally, bytes: &[u8]) {
    tally
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .receive(bytes);
}
