//! IPC scenarios: the benchmark service every adapter serves and calls, over a
//! bus or peer to peer. docs/scenarios.md describes the same in prose.
//!
//! The service (object [`OBJECT_PATH`], interface [`INTERFACE`]):
//!
//! | method | in | out | server returns |
//! |---|---|---|---|
//! | `Void` | | | |
//! | `InInt` | `i` (client sends 7) | | |
//! | `OutInt` | | `i` | 42 |
//! | `InOutInt` | `i` (7) | `i` | the argument + 1 |
//! | `InString` | `s` ("Testtest") | | |
//! | `OutString` | | `s` | "TesttestTestest" |
//! | `InOutString` | `s` ("TesttestTestest") | `s` | the argument |
//! | `ObjectRef` | | `(so)` | (service name, "/io/killing/spark/object/0") |
//! | `RelationSet` | | `a(so)` | 10 x (service name, "/io/killing/spark/object/{i}") |
//! | `EchoBytes` | `ay` | `ay` | the argument |
//!
//! Property `Items` (`a(ss)`, read-only) on the same interface: 10 pairs
//! ("id{i}", "Item number {i}"). Signal `Ping` (`s`, "Testtest") on the same
//! interface and path, emitted by clients in the signal scenarios.
//!
//! `ReadFd` (`h` in, `t` out) is on a second interface of the same object,
//! [`fd_passing::FD_INTERFACE`], served only where an adapter implements
//! `call/fd-passing/<size>` (see [`fd_passing`]).

use std::path::{Path, PathBuf};

use crate::digest::Digest;

pub mod application;
pub mod fd_passing;
pub mod introspect;
pub mod props;
pub mod proxied;
pub mod raw_server;
pub mod standard;
pub mod startup;
pub mod storm;
pub mod stream;
pub mod subscription;

pub use application::AppOp;
pub use subscription::SubscriptionOp;

pub const OBJECT_PATH: &str = "/io/killing/spark";
pub const INTERFACE: &str = "io.killing.spark.Bench";
pub const PROPERTY: &str = "Items";
pub const SIGNAL: &str = "Ping";
pub const SIGNAL_TEXT: &str = "Testtest";
pub const IN_INT: i32 = 7;
pub const OUT_INT: i32 = 42;
pub const IN_STRING: &str = "Testtest";
pub const OUT_STRING: &str = "TesttestTestest";
/// Match rules that never match, installed by `signal/nonmatching-rules/<n>`.
pub fn nonmatching_rule(i: usize) -> String {
    format!("type='signal',interface='{INTERFACE}',member='NoSuchSignal{i}'")
}
/// The rule subscribers install for [`SIGNAL`].
pub fn ping_rule() -> String {
    format!("type='signal',interface='{INTERFACE}',member='{SIGNAL}',path='{OBJECT_PATH}'")
}

pub fn object_path(i: usize) -> String {
    format!("{OBJECT_PATH}/object/{i}")
}

/// The `Items` property value.
pub fn items() -> Vec<(String, String)> {
    (0..10)
        .map(|i| (format!("id{i}"), format!("Item number {i}")))
        .collect()
}

/// The payload of `EchoBytes` of `size` bytes (not all zeros, so a library
/// that dropped bytes would be caught).
pub fn echo_payload(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i % 251) as u8).collect()
}

/// Sizes of `call/echo-bytes/<size>` and `baseline/raw-socket/<size>`.
pub const ECHO_SIZES: [usize; 7] = [1, 64, 1024, 4096, 32768, 131072, 1048576];
/// Large byte arrays (issue 31: zbus#144 took 5 s for 10 MiB): further sizes
/// of `call/echo-bytes/<size>` and its floor, 4 and 16 MiB. Every private
/// bus's configured `max_message_size` is the spec's 128 MiB
/// (`bus::config::LIMITS`), and one array may hold at most 64 MiB (2^26), so
/// none of these reaches a daemon's limit (`runner/tests/message_limit.rs`
/// shows where each daemon stops).
pub const BIG_ECHO_SIZES: [usize; 2] = [4 << 20, 16 << 20];
pub const FANOUT_SIZES: [usize; 3] = [1, 10, 100];
pub const NONMATCHING_RULE_COUNTS: [usize; 4] = [10, 100, 1000, 10000];
/// Client processes of `call/parallel-clients/<k>` (runner-driven: K `repeat`
/// processes of `call/void` against one server).
pub const PARALLEL_CLIENTS: [usize; 4] = [1, 2, 4, 8];
/// Rule counts of `signal/match-rules/<kind>/<n>`: powers of two up to 2^17
/// (profiles choose which; quick stops at 2^14).
pub const MATCH_RULE_COUNTS: [usize; 18] = {
    let mut counts = [0; 18];
    let mut i = 0;
    while i < 18 {
        counts[i] = 1 << i;
        i += 1;
    }
    counts
};

/// The two kinds of never-matching rules of `signal/match-rules/<kind>/<n>`,
/// held by the runner's own connections (the same for every library).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleKind {
    /// `sender='…'` naming a peer that never exists (a bus may index rules by sender).
    Sender,
    /// No sender: the benchmark interface with a member that never occurs
    /// (every emitted signal must be checked against it).
    Wildcard,
}

impl RuleKind {
    pub const ALL: [RuleKind; 2] = [RuleKind::Sender, RuleKind::Wildcard];

    /// The part of the scenario id after `signal/match-rules/`.
    pub fn slug(self) -> &'static str {
        match self {
            RuleKind::Sender => "sender",
            RuleKind::Wildcard => "wildcard",
        }
    }

    /// Rule number `i` of this kind: distinct, valid, and never matching `Ping`.
    pub fn rule(self, i: usize) -> String {
        match self {
            RuleKind::Sender => {
                format!(
                    "type='signal',sender='org.dbusmatrix.NoSuchSender.N{i}',interface='{INTERFACE}',member='{SIGNAL}'"
                )
            }
            RuleKind::Wildcard => nonmatching_rule(i),
        }
    }
}

/// Connections held by `connect/idle-connections/<n>` (10000: the `full` profile's).
pub const IDLE_CONNECTION_COUNTS: [usize; 4] = [10, 100, 1000, 10000];
/// Batch sizes of `call/in-flight/<n>`.
pub const IN_FLIGHT_COUNTS: [usize; 4] = [1, 10, 100, 1000];

/// The argument of the `i`-th `InOutInt` call of a `call/in-flight/<n>` batch:
/// every call of a batch sends a different number, so a reply matched to the
/// wrong call changes the digest.
pub fn in_flight_arg(i: usize) -> i32 {
    i as i32
}

/// Digest of a `call/in-flight/<n>` batch: the replies in the order the calls were sent.
pub fn in_flight_digest(replies: impl IntoIterator<Item = i32>) -> u64 {
    let mut d = Digest::new();
    let mut n = 0;
    for r in replies {
        d.i32(r);
        n += 1;
    }
    d.len(n);
    d.finish()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Void,
    InInt,
    OutInt,
    InOutInt,
    InString,
    OutString,
    InOutString,
    ObjectRef,
    RelationSet,
}

impl Method {
    pub const ALL: [Method; 9] = [
        Method::Void,
        Method::InInt,
        Method::OutInt,
        Method::InOutInt,
        Method::InString,
        Method::OutString,
        Method::InOutString,
        Method::ObjectRef,
        Method::RelationSet,
    ];

    /// The D-Bus member name.
    pub fn member(self) -> &'static str {
        match self {
            Method::Void => "Void",
            Method::InInt => "InInt",
            Method::OutInt => "OutInt",
            Method::InOutInt => "InOutInt",
            Method::InString => "InString",
            Method::OutString => "OutString",
            Method::InOutString => "InOutString",
            Method::ObjectRef => "ObjectRef",
            Method::RelationSet => "RelationSet",
        }
    }

    /// The signature of the arguments the method takes.
    pub fn in_signature(self) -> &'static str {
        match self {
            Method::InInt | Method::InOutInt => "i",
            Method::InString | Method::InOutString => "s",
            _ => "",
        }
    }

    /// The signature of what the method returns.
    pub fn out_signature(self) -> &'static str {
        match self {
            Method::OutInt | Method::InOutInt => "i",
            Method::OutString | Method::InOutString => "s",
            Method::ObjectRef => "(so)",
            Method::RelationSet => "a(so)",
            _ => "",
        }
    }

    /// The part of the scenario id after `call/`.
    pub fn slug(self) -> &'static str {
        match self {
            Method::Void => "void",
            Method::InInt => "in-int",
            Method::OutInt => "out-int",
            Method::InOutInt => "in-out-int",
            Method::InString => "in-string",
            Method::OutString => "out-string",
            Method::InOutString => "in-out-string",
            Method::ObjectRef => "object-ref",
            Method::RelationSet => "relation-set",
        }
    }
}

/// `EchoBytes`, the one method of the interface outside [`Method`] (its
/// cells are `call/echo-bytes/<size>`): `ay` in, the same `ay` out.
pub const ECHO_BYTES: &str = "EchoBytes";

/// Every method of [`INTERFACE`]: (member, in signature, out signature).
/// An array, not a `Vec`: hand-built servers look calls up in it per call.
pub fn interface_methods() -> [(&'static str, &'static str, &'static str); 10] {
    let m = |m: Method| (m.member(), m.in_signature(), m.out_signature());
    [
        m(Method::Void),
        m(Method::InInt),
        m(Method::OutInt),
        m(Method::InOutInt),
        m(Method::InString),
        m(Method::OutString),
        m(Method::InOutString),
        m(Method::ObjectRef),
        m(Method::RelationSet),
        (ECHO_BYTES, "ay", "ay"),
    ]
}

/// What an IPC cell does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpcOp {
    /// One method call and its reply.
    Call(Method),
    /// `EchoBytes` with this many bytes.
    EchoBytes(usize),
    /// `org.freedesktop.DBus.Properties.Get` of `Items`, through the
    /// library's idiomatic property API (proxies may cache: that is the point).
    PropertyGet,
    /// 100 reads of `Items` on one connection, through the same API; one op = 100 reads.
    PropertyGetX100,
    /// `n` `InOutInt` calls on one connection, all sent before the first reply
    /// is awaited (call `i` sends [`in_flight_arg`]`(i)`); one op = the batch.
    InFlight(usize),
    /// `n` connections (SASL, Hello) opened by [`Ipc::idle_connection`] and held
    /// idle; one op = close the previous batch (if any), open `n`. The runner also
    /// reads the bus daemon's memory with the `n` held (`repeat --windows 1`).
    IdleConnections(usize),
    /// One `org.freedesktop.DBus.Properties.GetAll` of the `n` properties of
    /// [`props::PROPS_INTERFACE`] at [`props::props_path`]`(n)`, through the
    /// library's property client API.
    PropertyGetAll(usize),
    /// One `org.freedesktop.DBus.ObjectManager.GetManagedObjects` of the manager
    /// at [`props::objects_path`]`(n)` (`n` children), through the library's
    /// ObjectManager client API where it has one.
    ManagedObjects(usize),
    /// `ReadFd` of [`fd_passing::FD_INTERFACE`] with a memfd of this many bytes
    /// (written once, at setup); one op = the call with the fd and its reply.
    FdPassing(usize),
    /// A whole new process: connect, read `Items`, print it, exit (`cold-start` command).
    PropertyColdStart,
    /// Emit `Ping` on one connection and receive it on a second one of the same process.
    EmitReceive,
    /// Emit `Ping`; `n` subscriber connections (another process) all receive it.
    Fanout(usize),
    /// Emit `Ping` while `n` non-matching rules are installed; one subscriber receives it.
    NonmatchingRules(usize),
    /// Connect: SASL + Hello, then disconnect.
    ConnectHello,
    /// Connect, build and send the `marshal/mixed` signal, disconnect.
    ConnectMarshalSend,
    /// Not D-Bus: `size` bytes written and echoed back over a Unix socket pair.
    RawSocket(usize),
    /// The subscription families of issue 31 ([`subscription`]): one arm for the group.
    Subscription(SubscriptionOp),
    /// How applications use a library (issue 31, [`application`]): one arm for the group.
    App(AppOp),
}

impl IpcOp {
    /// Digest of what the client must receive per operation (see the table above).
    pub fn expected_digest(self, service_name: &str) -> u64 {
        let mut d = Digest::new();
        match self {
            IpcOp::Call(m) => match m {
                Method::OutInt => d.i32(OUT_INT),
                Method::InOutInt => d.i32(IN_INT + 1),
                Method::OutString | Method::InOutString => d.str(OUT_STRING),
                Method::ObjectRef => {
                    d.str(service_name);
                    d.str(&object_path(0));
                }
                Method::RelationSet => {
                    for i in 0..10 {
                        d.str(service_name);
                        d.str(&object_path(i));
                    }
                    d.len(10);
                }
                Method::Void | Method::InInt | Method::InString => {}
            },
            IpcOp::EchoBytes(n) | IpcOp::RawSocket(n) => d.bytes(&echo_payload(n)),
            IpcOp::PropertyGet | IpcOp::PropertyColdStart => digest_items(&mut d),
            IpcOp::PropertyGetX100 => {
                for _ in 0..100 {
                    digest_items(&mut d)
                }
            }
            IpcOp::EmitReceive => d.str(SIGNAL_TEXT),
            IpcOp::InFlight(n) => return in_flight_digest((0..n).map(|i| in_flight_arg(i) + 1)),
            IpcOp::IdleConnections(n) => d.len(n),
            IpcOp::PropertyGetAll(n) => return props::expected_get_all_digest(n),
            IpcOp::ManagedObjects(n) => return props::expected_managed_objects_digest(n),
            IpcOp::FdPassing(n) => return fd_passing::fd_digest(&fd_passing::fd_payload(n)),
            IpcOp::Fanout(_) | IpcOp::NonmatchingRules(_) | IpcOp::ConnectHello | IpcOp::ConnectMarshalSend => {}
            IpcOp::Subscription(s) => return s.expected_digest(),
            IpcOp::App(a) => return a.expected_digest(),
        }
        d.finish()
    }

    /// The ops an adapter implements only where it says so ([`Ipc::implements`]):
    /// those added after the first adapters were written, rolled out adapter by adapter.
    pub fn opt_in(self) -> bool {
        matches!(
            self,
            IpcOp::InFlight(_)
                | IpcOp::IdleConnections(_)
                | IpcOp::PropertyGetAll(_)
                | IpcOp::ManagedObjects(_)
                | IpcOp::FdPassing(_)
                | IpcOp::Subscription(_)
                | IpcOp::App(_)
        )
    }

    /// The scenario id without its size (`call/in-flight`), for reasons.
    pub fn family(self) -> &'static str {
        match self {
            IpcOp::Call(_) => "call",
            IpcOp::EchoBytes(_) => "call/echo-bytes",
            IpcOp::InFlight(_) => "call/in-flight",
            IpcOp::FdPassing(_) => "call/fd-passing",
            IpcOp::PropertyGet => "property/get",
            IpcOp::PropertyGetX100 => "property/get-x100",
            IpcOp::PropertyColdStart => "property/cold-start",
            IpcOp::PropertyGetAll(_) => "property/get-all",
            IpcOp::ManagedObjects(_) => "objects/get-managed-objects",
            IpcOp::EmitReceive => "signal/emit-receive",
            IpcOp::Fanout(_) => "signal/fanout",
            IpcOp::NonmatchingRules(_) => "signal/nonmatching-rules",
            IpcOp::ConnectHello => "connect/hello",
            IpcOp::ConnectMarshalSend => "connect/marshal-send",
            IpcOp::IdleConnections(_) => "connect/idle-connections",
            IpcOp::RawSocket(_) => "baseline/raw-socket",
            IpcOp::Subscription(s) => s.family(),
            IpcOp::App(a) => a.family(),
        }
    }

    /// Whether the op needs a subscriber process (and an acknowledgement per emit).
    pub fn subscribers(self) -> Option<(usize, usize)> {
        match self {
            IpcOp::Fanout(n) => Some((n, 0)),
            IpcOp::NonmatchingRules(n) => Some((1, n)),
            _ => None,
        }
    }
}

/// How `Items` is digested: each (id, name), then the count.
pub fn digest_items(d: &mut Digest) {
    let items = items();
    for (a, b) in &items {
        d.str(a);
        d.str(b);
    }
    d.len(items.len());
}

/// Why an adapter without code for `op` cannot run it: the adapter's gap,
/// never the library's (the library may well do it).
pub fn not_implemented(op: IpcOp) -> String {
    format!("this adapter does not implement {} yet", op.family())
}

/// Where the service is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A bus at `address` (`unix:path=…`, whose socket is `socket`); the
    /// service owns `service_name` on it.
    Bus {
        address: String,
        socket: PathBuf,
        service_name: String,
    },
    /// No bus: the server listens on the Unix socket `socket` and speaks D-Bus
    /// peer to peer (no Hello, no names, no match rules).
    P2p { socket: PathBuf },
}

impl Transport {
    pub fn is_p2p(&self) -> bool {
        matches!(self, Transport::P2p { .. })
    }

    /// The name clients address calls to, and that `ObjectRef` returns:
    /// the well-known name on a bus, empty peer to peer (no destination).
    pub fn service_name(&self) -> &str {
        match self {
            Transport::Bus { service_name, .. } => service_name,
            Transport::P2p { .. } => "",
        }
    }

    /// The Unix socket to connect to, unescaped: for the libraries that take a
    /// connected socket rather than parse an address (zbus does not decode an
    /// address's `%XX` escapes, so a $TMPDIR with a space would name another path).
    pub fn socket(&self) -> &Path {
        match self {
            Transport::Bus { socket, .. } | Transport::P2p { socket } => socket,
        }
    }

    /// `unix:path=…` for both kinds, escaped as the specification says ([`crate::address`]).
    pub fn address(&self) -> String {
        match self {
            Transport::Bus { address, .. } => address.clone(),
            Transport::P2p { socket } => crate::address::unix_path(socket),
        }
    }
}

/// A subscriber connection: each call receives one `Ping` and returns its digest.
pub type Subscriber = Box<dyn FnMut() -> anyhow::Result<u64>>;

/// Why `op` cannot run peer to peer, whatever the library: it needs a bus
/// (to say Hello to, to route a signal, to hold match rules).
pub fn needs_bus(op: IpcOp) -> Option<&'static str> {
    match op {
        IpcOp::ConnectHello => Some("peer to peer there is no bus to say Hello to: a p2p connection is SASL only"),
        IpcOp::EmitReceive => Some(
            "needs a bus to route the signal: peer to peer, a signal emitted on one connection \
             reaches only the server at the other end, never a second client connection",
        ),
        IpcOp::Fanout(_) => Some(
            "fan-out needs a bus: peer to peer there are no match rules and nothing routes \
             one signal to other connections",
        ),
        IpcOp::NonmatchingRules(_) => Some(
            "match rules are installed on a bus (AddMatch); peer to peer there is no bus to \
             hold them",
        ),
        IpcOp::IdleConnections(_) => Some(
            "idle connections are what each costs the bus daemon (Hello, memory); peer to peer \
             there is no daemon, only the server at the other end",
        ),
        IpcOp::Subscription(s) => Some(s.needs_bus()),
        IpcOp::App(a) => a.needs_bus(),
        _ => None,
    }
}

/// The IPC side of an adapter. Every method may return an error; a library
/// that cannot do an op on a transport says so in [`Ipc::unsupported_ipc`].
pub trait Ipc {
    /// `Some(reason)` when this library cannot do `op` over this kind of
    /// transport. Only library facts: an op the library can do on a bus but
    /// that needs a bus is answered peer to peer by the harness ([`needs_bus`]).
    fn unsupported_ipc(&self, _op: IpcOp, _p2p: bool) -> Option<String> {
        None
    }

    /// Whether this adapter has code for `op`. Ops that are [`IpcOp::opt_in`]
    /// are off until the adapter says so; the harness then answers
    /// [`not_implemented`] for it (after the library's own reasons).
    fn implements(&self, op: IpcOp) -> bool {
        !op.opt_in()
    }

    /// Serve the benchmark service on `transport` (own the service name on a
    /// bus; accept connections on the socket peer to peer, each served until
    /// it closes). Call `ready` once, when calls can be answered. Does not return.
    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> anyhow::Result<()>;

    /// One subscriber of the signal scenarios: connect to the bus, install
    /// the match rule for `Ping` ([`ping_rule`]) and `extra_rules` rules that
    /// never match ([`nonmatching_rule`]). Each call of the returned closure
    /// waits for the next `Ping` and returns the digest of its text. The
    /// harness opens as many as asked, on a bus only, and runs the loop.
    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> anyhow::Result<Subscriber>;

    /// Connect as a client and return the operation to time. Each call of the
    /// returned closure performs one `op` and returns the digest of what it
    /// received (see [`IpcOp::expected_digest`]); for `Fanout` and
    /// `NonmatchingRules` it only emits `Ping` (the harness waits for the
    /// subscribers' acknowledgement).
    fn client<'a>(
        &'a mut self,
        transport: &Transport,
        op: IpcOp,
    ) -> anyhow::Result<Box<dyn FnMut() -> anyhow::Result<u64> + 'a>>;

    /// `connect/idle-connections/<n>`: one new connection (SASL, and Hello on a
    /// bus), returned to be held idle; dropping it closes it. The harness opens
    /// and holds `n` of them ([`IpcOp::IdleConnections`]).
    fn idle_connection(&mut self, _transport: &Transport) -> anyhow::Result<Box<dyn std::any::Any>> {
        Err(anyhow::anyhow!(not_implemented(IpcOp::IdleConnections(0))))
    }

    /// `property/cold-start`: connect, read `Items`, return it (printed by the harness).
    fn cold_start(&mut self, transport: &Transport) -> anyhow::Result<Vec<(String, String)>>;
}

/// An adapter with no transport (encode/decode only).
pub struct NoTransport(pub &'static str);

impl NoTransport {
    fn err(&self) -> anyhow::Error {
        anyhow::anyhow!("{}", self.0)
    }
}

impl Ipc for NoTransport {
    fn unsupported_ipc(&self, _op: IpcOp, _p2p: bool) -> Option<String> {
        Some(self.0.to_string())
    }
    fn serve(&mut self, _t: &Transport, _ready: &mut dyn FnMut()) -> anyhow::Result<()> {
        Err(self.err())
    }
    fn subscriber(&mut self, _t: &Transport, _e: usize) -> anyhow::Result<Subscriber> {
        Err(self.err())
    }
    fn client<'a>(
        &'a mut self,
        _t: &Transport,
        _op: IpcOp,
    ) -> anyhow::Result<Box<dyn FnMut() -> anyhow::Result<u64> + 'a>> {
        Err(self.err())
    }
    fn cold_start(&mut self, _t: &Transport) -> anyhow::Result<Vec<(String, String)>> {
        Err(self.err())
    }
}
