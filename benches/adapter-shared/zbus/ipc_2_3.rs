//! The IPC side: the benchmark service as a `#[dbus_interface]` object served by a
//! `blocking::ConnectionBuilder`, the client as a `#[dbus_proxy]` trait used
//! through its generated blocking proxy (`BenchProxyBlocking`). zbus 3's blocking
//! API wraps the async one in `async_io::block_on`; with the `async-io` feature
//! every connection runs its socket reader and object server on an executor thread
//! of its own (the default `internal_executor`).
//!
//! adapter-zbus-3 and adapter-zbus-2 compile this file through `#[path]`: zbus 2 has the same API but for match rules and
//! name requests, which both adapters keep in their own `bus_rules` module.

use std::os::unix::net::{UnixListener, UnixStream};

use anyhow::{bail, Context, Result};
use harness::ipc::{self as h, subscription as sub, AppOp, IpcOp, Method, SubscriptionOp, Transport};
use harness::{payload, Digest};
use serde::{Deserialize, Serialize};
use serde_bytes::{ByteBuf, Bytes};
use zbus::blocking::{self, fdo, ConnectionBuilder};
use zbus::zvariant::{OwnedObjectPath, Type};
use zbus::{dbus_interface, dbus_proxy, Guid, SignalContext};

use crate::bus_rules::{self, PingMessage};

#[path = "apps_2_3.rs"]
mod apps;
#[path = "props_2_3.rs"]
mod props;
#[path = "storm_2_3.rs"]
mod storm;
use crate::UnitsRef;

pub struct ZbusIpc;

/// `(so)`: a bus name and an object path (`ObjectRef`, the elements of `RelationSet`).
#[derive(Clone, Serialize, Deserialize, Type)]
struct ObjectRef {
    name: String,
    path: OwnedObjectPath,
}

fn object_ref(service_name: &str, i: usize) -> ObjectRef {
    ObjectRef {
        name: service_name.to_owned(),
        path: h::object_path(i).try_into().expect("a valid object path"),
    }
}

/// The served object (`harness::ipc`'s table).
struct BenchService {
    object_ref: ObjectRef,
    relation_set: Vec<ObjectRef>,
    items: Vec<(String, String)>,
}

impl BenchService {
    fn new(service_name: &str) -> Self {
        BenchService {
            object_ref: object_ref(service_name, 0),
            relation_set: (0..10).map(|i| object_ref(service_name, i)).collect(),
            items: h::items(),
        }
    }
}

// Member names are the PascalCase of the Rust names (`in_out_int` -> `InOutInt`).
#[dbus_interface(name = "io.killing.spark.Bench")]
impl BenchService {
    fn void(&self) {}

    fn in_int(&self, value: i32) {
        let _ = value;
    }

    fn out_int(&self) -> i32 {
        h::OUT_INT
    }

    fn in_out_int(&self, value: i32) -> i32 {
        value + 1
    }

    fn in_string(&self, value: &str) {
        let _ = value;
    }

    fn out_string(&self) -> &str {
        h::OUT_STRING
    }

    fn in_out_string(&self, value: String) -> String {
        value
    }

    // A single struct is returned as a 1-tuple: a bare struct would be spread into out-args `so`.
    fn object_ref(&self) -> (ObjectRef,) {
        (self.object_ref.clone(),)
    }

    fn relation_set(&self) -> Vec<ObjectRef> {
        self.relation_set.clone()
    }

    /// `ay` through serde_bytes: one slice, not a sequence of 1-byte elements.
    fn echo_bytes(&self, data: ByteBuf) -> ByteBuf {
        data
    }

    #[dbus_interface(property)]
    fn items(&self) -> Vec<(String, String)> {
        self.items.clone()
    }

    /// Emitted by clients.
    #[dbus_interface(signal)]
    async fn ping(ctxt: &SignalContext<'_>, text: &str) -> zbus::Result<()>;
}

// On p2p the destination is not used by the peer; the default is the interface name.
#[dbus_proxy(
    interface = "io.killing.spark.Bench",
    default_service = "io.killing.spark.Bench",
    default_path = "/io/killing/spark"
)]
trait Bench {
    fn void(&self) -> zbus::Result<()>;
    fn in_int(&self, value: i32) -> zbus::Result<()>;
    fn out_int(&self) -> zbus::Result<i32>;
    fn in_out_int(&self, value: i32) -> zbus::Result<i32>;
    fn in_string(&self, value: &str) -> zbus::Result<()>;
    fn out_string(&self) -> zbus::Result<String>;
    fn in_out_string(&self, value: &str) -> zbus::Result<String>;
    fn object_ref(&self) -> zbus::Result<ObjectRef>;
    fn relation_set(&self) -> zbus::Result<Vec<ObjectRef>>;
    fn echo_bytes(&self, data: &Bytes) -> zbus::Result<ByteBuf>;

    /// The default `CacheProperties::Lazily`: the first read subscribes to
    /// `PropertiesChanged` (an AddMatch on a bus) and fetches every property with
    /// `GetAll`; every later read is answered from that cache (kept up to date by
    /// the signal) without a message, only converting the cached value.
    #[dbus_proxy(property)]
    fn items(&self) -> zbus::Result<Vec<(String, String)>>;
}

/// What adapter-shared/zbus/startup_1_3.rs (`apps::startup`) builds on: the blocking API.
pub(crate) mod startup_api {
    pub(crate) use super::connect;
    pub(crate) use zbus::blocking::{Connection, Proxy};
}

/// A builder on a new connection to the transport's socket. Not
/// `ConnectionBuilder::address`: zbus does not decode an address's `%XX` escapes,
/// so in a $TMPDIR with a space or a non-ASCII letter it named another path.
pub(crate) fn to_socket(t: &Transport) -> zbus::Result<ConnectionBuilder<'static>> {
    Ok(ConnectionBuilder::unix_stream(UnixStream::connect(t.socket())?))
}

/// A new connection: SASL, then Hello on a bus; SASL only peer to peer.
pub(crate) fn connect(t: &Transport) -> zbus::Result<blocking::Connection> {
    match t {
        Transport::Bus { .. } => to_socket(t)?.build(),
        Transport::P2p { .. } => to_socket(t)?.p2p().build(),
    }
}

/// A connection and a proxy on it (the proxy holds the connection).
/// The async proxy on a new connection (`call/in-flight`: calls joined, not one after another).
fn connect_async_proxy(t: &Transport) -> zbus::Result<BenchProxy<'static>> {
    let conn = zbus::Connection::from(connect(t)?);
    zbus::block_on(async {
        let builder = BenchProxy::builder(&conn);
        match t {
            Transport::Bus { service_name, .. } => builder.destination(service_name.clone())?.build().await,
            Transport::P2p { .. } => builder.build().await,
        }
    })
}

fn connect_proxy(t: &Transport) -> zbus::Result<BenchProxyBlocking<'static>> {
    let conn = connect(t)?;
    let builder = BenchProxyBlocking::builder(&conn);
    match t {
        Transport::Bus { service_name, .. } => builder.destination(service_name.clone())?.build(),
        Transport::P2p { .. } => builder.build(),
    }
}

fn digest_object_ref(d: &mut Digest, r: &ObjectRef) {
    d.str(&r.name);
    d.str(r.path.as_str());
}

fn digest_items(d: &mut Digest, items: &[(String, String)]) {
    for (a, b) in items {
        d.str(a);
        d.str(b);
    }
    d.len(items.len());
}

fn call(proxy: &BenchProxyBlocking<'_>, m: Method) -> zbus::Result<u64> {
    let mut d = Digest::new();
    match m {
        Method::Void => proxy.void()?,
        Method::InInt => proxy.in_int(h::IN_INT)?,
        Method::OutInt => d.i32(proxy.out_int()?),
        Method::InOutInt => d.i32(proxy.in_out_int(h::IN_INT)?),
        Method::InString => proxy.in_string(h::IN_STRING)?,
        Method::OutString => d.str(&proxy.out_string()?),
        Method::InOutString => d.str(&proxy.in_out_string(h::OUT_STRING)?),
        Method::ObjectRef => digest_object_ref(&mut d, &proxy.object_ref()?),
        Method::RelationSet => {
            let set = proxy.relation_set()?;
            for r in &set {
                digest_object_ref(&mut d, r);
            }
            d.len(set.len());
        }
    }
    Ok(d.finish())
}

fn emit_ping(conn: &blocking::Connection) -> zbus::Result<()> {
    emit_ping_text(conn, h::SIGNAL_TEXT)
}

fn emit_ping_text(conn: &blocking::Connection, text: &str) -> zbus::Result<()> {
    conn.emit_signal(None::<()>, h::OBJECT_PATH, h::INTERFACE, h::SIGNAL, &text)
}

/// The digest of a received `Ping`: its text.
fn ping_digest(msg: Option<zbus::Result<PingMessage>>) -> Result<u64> {
    let msg = msg.context("the signal stream ended")??;
    let mut d = Digest::new();
    d.str(msg.body::<&str>()?);
    Ok(d.finish())
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for ZbusIpc {
    fn unsupported_ipc(&self, op: IpcOp, p2p: bool) -> Option<String> {
        let fds_p2p = matches!(op, IpcOp::FdPassing(_)).then_some(crate::fds::NO_P2P_FDS);
        let props_p2p =
            matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_)).then_some(props::NOT_PEER_TO_PEER);
        bus_rules::P2P_UNSUPPORTED
            .or(fds_p2p)
            .or(props_p2p)
            .filter(|_| p2p)
            .map(str::to_owned)
    }

    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        match transport {
            Transport::Bus { service_name, .. } => {
                let conn = to_socket(transport)?
                    .serve_at(h::OBJECT_PATH, BenchService::new(service_name))?
                    .serve_at(h::OBJECT_PATH, crate::fds::FdService)?
                    .build()
                    .context("connecting the server to the bus")?;
                props::serve_all(&conn).context("serving the property objects")?;
                // Not the builder's `name`: it requests with REPLACE_EXISTING, which would take
                // the name from an owner that allows replacement.
                bus_rules::request_name(&conn, service_name).with_context(|| format!("requesting {service_name}"))?;
                ready();
                loop {
                    std::thread::park();
                }
            }
            Transport::P2p { socket } => {
                // A stale socket file from an earlier server would make bind fail.
                let _ = std::fs::remove_file(socket);
                let listener = UnixListener::bind(socket).with_context(|| format!("binding {}", socket.display()))?;
                let guid = Guid::generate();
                ready();
                // One server connection per client, each kept by a thread until the client
                // closes it (the connection's own executor thread serves it).
                for stream in listener.incoming() {
                    let stream = stream.context("accepting a peer")?;
                    let guid = guid.clone();
                    std::thread::spawn(move || {
                        let conn = ConnectionBuilder::unix_stream(stream)
                            .server(&guid)
                            .p2p()
                            .serve_at(h::OBJECT_PATH, BenchService::new(""))
                            .and_then(|b| b.serve_at(h::OBJECT_PATH, crate::fds::FdService))
                            .and_then(|b| b.build());
                        match conn {
                            Ok(conn) => bus_rules::wait_closed(&conn),
                            Err(e) => eprintln!("a peer connection failed: {e}"),
                        }
                    });
                }
                Ok(())
            }
        }
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
        let conn = connect(transport)?;
        // The other rules first: zbus 2's message iterator takes every message the
        // connection reads, and its queue fills with AddMatch replies nobody reads.
        if extra_rules > 0 {
            let dbus = fdo::DBusProxy::new(&conn)?;
            for j in 0..extra_rules {
                bus_rules::add_rule(&dbus, &h::nonmatching_rule(j))?;
            }
        }
        let mut messages = bus_rules::ping_messages(&conn)?;
        Ok(Box::new(move || {
            let _keep = &conn;
            ping_digest(bus_rules::next_ping(&mut messages))
        }))
    }

    fn implements(&self, op: IpcOp) -> bool {
        !op.opt_in()
            || matches!(op, IpcOp::InFlight(_) | IpcOp::IdleConnections(_) | IpcOp::FdPassing(_))
            || matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_))
            || matches!(
                op,
                IpcOp::App(AppOp::InOnlyBytes(_) | AppOp::Connections(_) | AppOp::ProxyCreate(_) | AppOp::Startup(_))
            )
            || matches!(
                op,
                IpcOp::Subscription(
                    SubscriptionOp::MatchChurn
                        | SubscriptionOp::Burst(_)
                        | SubscriptionOp::Delivered(_)
                        | SubscriptionOp::NameOwnerChurn(_)
                        | SubscriptionOp::PropertyStorm(_)
                )
            )
    }

    /// A blocking connection (SASL, Hello); zbus 2 and 3 have no `close()`:
    /// dropping the last handle closes the socket.
    fn idle_connection(&mut self, transport: &Transport) -> Result<Box<dyn std::any::Any>> {
        Ok(Box::new(connect(transport)?))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        Ok(match op {
            // Issue 31's application families (`apps_2_3.rs`).
            IpcOp::App(a) => apps::client(&t, a)?,
            IpcOp::PropertyGetAll(n) => props::get_all_client(connect(&t)?, &t, n)?,
            IpcOp::ManagedObjects(n) => props::managed_objects_client(connect(&t)?, &t, n)?,
            IpcOp::FdPassing(n) => {
                let conn = connect(&t)?;
                Box::new(crate::fds::client(
                    &conn,
                    Some(t.service_name()).filter(|s| !s.is_empty()),
                    n,
                )?)
            }
            IpcOp::Call(m) => {
                let proxy = connect_proxy(&t)?;
                Box::new(move || Ok(call(&proxy, m)?))
            }
            IpcOp::EchoBytes(n) => {
                let proxy = connect_proxy(&t)?;
                let payload = h::echo_payload(n);
                Box::new(move || {
                    let reply = proxy.echo_bytes(Bytes::new(&payload))?;
                    let mut d = Digest::new();
                    d.bytes(&reply);
                    Ok(d.finish())
                })
            }
            IpcOp::PropertyGet | IpcOp::PropertyGetX100 => {
                let reads = if op == IpcOp::PropertyGet { 1 } else { 100 };
                let proxy = connect_proxy(&t)?;
                Box::new(move || {
                    let mut d = Digest::new();
                    for _ in 0..reads {
                        digest_items(&mut d, &proxy.items()?);
                    }
                    Ok(d.finish())
                })
            }
            IpcOp::EmitReceive => {
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                let mut messages = bus_rules::ping_messages(&rx)?;
                Box::new(move || {
                    emit_ping(&tx)?;
                    ping_digest(bus_rules::next_ping(&mut messages))
                })
            }
            IpcOp::Fanout(_) | IpcOp::NonmatchingRules(_) => {
                let conn = connect(&t)?;
                Box::new(move || {
                    emit_ping(&conn)?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::ConnectHello => Box::new(move || {
                // zbus 2 and 3 have no `close()`: dropping the last handle closes the socket.
                drop(connect(&t)?);
                Ok(Digest::new().finish())
            }),
            IpcOp::ConnectMarshalSend => {
                let body = payload::mixed();
                Box::new(move || {
                    let units = body.units().expect("marshal/mixed is units");
                    let conn = connect(&t)?;
                    conn.emit_signal(
                        None::<()>,
                        payload::PATH,
                        payload::INTERFACE,
                        payload::MEMBER,
                        &UnitsRef(units),
                    )?; // flushed to the socket before it returns
                    drop(conn);
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::InFlight(n) => {
                let proxy = connect_async_proxy(&t)?;
                Box::new(move || {
                    // The blocking proxy waits for each reply; the async one, joined, sends
                    // every call on its first poll before any reply is awaited.
                    let calls = (0..n).map(|i| proxy.in_out_int(h::in_flight_arg(i)));
                    let replies = zbus::block_on(futures_util::future::try_join_all(calls))?;
                    Ok(h::in_flight_digest(replies))
                })
            }
            IpcOp::Subscription(SubscriptionOp::PropertyStorm(n)) => storm::client(&t, n)?,
            IpcOp::Subscription(SubscriptionOp::Delivered(scope)) => {
                // The scope's rule on the bus; the messages read up to the matching Ping.
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                const PING: (&str, &str) = (h::INTERFACE, h::SIGNAL);
                let mut messages = bus_rules::signal_messages(&rx, &sub::delivered_rule(scope), PING)?;
                let texts = sub::delivered_texts();
                Box::new(move || {
                    let _keep = &rx;
                    for text in &texts {
                        emit_ping_text(&tx, text)?;
                    }
                    let mut received = Vec::new();
                    loop {
                        let msg = bus_rules::next_signal(&mut messages, PING).context("the signal stream ended")??;
                        let text: String = msg.body()?;
                        let end = text == h::SIGNAL_TEXT;
                        received.push(text);
                        if end {
                            break;
                        }
                    }
                    sub::delivered_digest(&received, scope)
                })
            }
            IpcOp::Subscription(SubscriptionOp::NameOwnerChurn(scope)) => {
                // A name requested and released, then the sentinel, into the scope's
                // NameOwnerChanged rule; read up to the sentinel's release.
                let names = sub::churn_names();
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                const CHANGED: (&str, &str) = ("org.freedesktop.DBus", "NameOwnerChanged");
                let rule = sub::name_owner_rule(scope, &names.1);
                let mut messages = bus_rules::signal_messages(&rx, &rule, CHANGED)?;
                Box::new(move || {
                    let _keep = &rx;
                    for name in std::iter::repeat_n(&names.0, sub::NAME_CHURNS).chain([&names.1]) {
                        bus_rules::request_name(&tx, name).context("RequestName")?;
                        bus_rules::release_name(&tx, name).context("ReleaseName")?;
                    }
                    let mut received = Vec::new();
                    loop {
                        let msg =
                            bus_rules::next_signal(&mut messages, CHANGED).context("the signal stream ended")??;
                        let (name, _old, new): (String, String, String) = msg.body()?;
                        let end = name == names.1 && new.is_empty();
                        received.push((name, new));
                        if end {
                            break;
                        }
                    }
                    sub::name_churn_digest(&received, scope, &names)
                })
            }
            IpcOp::Subscription(SubscriptionOp::Burst(n)) => {
                // The consumer's iterator is not read while the burst is emitted.
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                let mut messages = bus_rules::ping_messages(&rx)?;
                let texts: Vec<String> = (0..n).map(sub::burst_text).collect();
                Box::new(move || {
                    let _keep = &rx;
                    for text in &texts {
                        emit_ping_text(&tx, text)?;
                    }
                    emit_ping_text(&tx, sub::BURST_END)?;
                    let mut received = Vec::with_capacity(n);
                    loop {
                        let msg = bus_rules::next_ping(&mut messages).context("the signal stream ended")??;
                        let text: String = msg.body()?;
                        if text == sub::BURST_END {
                            break;
                        }
                        received.push(text);
                    }
                    sub::burst_digest(&received, n)
                })
            }
            IpcOp::Subscription(SubscriptionOp::MatchChurn) => {
                // The bus's own AddMatch/RemoveMatch through the blocking DBusProxy, each reply awaited.
                let conn = connect(&t)?;
                let dbus = fdo::DBusProxy::new(&conn)?;
                let rule = h::subscription::churn_rule();
                Box::new(move || {
                    let _keep = &conn;
                    bus_rules::add_rule(&dbus, &rule)?;
                    bus_rules::remove_rule(&dbus, &rule)?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::PropertyColdStart | IpcOp::RawSocket(_) | IpcOp::IdleConnections(_) => {
                bail!("{op:?} is not a client operation")
            }
        })
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        Ok(connect_proxy(transport)?.items()?)
    }
}
