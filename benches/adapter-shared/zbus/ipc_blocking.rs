//! The IPC side of zbus 4 and 5 (compiled by adapter-zbus-4 and -5 through `#[path]`):
//! the service of adapter-shared/zbus/service.rs served by a
//! `blocking::connection::Builder`, the client through the generated blocking proxy
//! (`BenchProxyBlocking`) and the blocking `fdo` proxies. zbus' blocking API wraps the
//! async one in `async_io::block_on`; with the `async-io` feature every connection
//! runs its socket reader and object server on an executor thread of its own (the
//! default `internal_executor`). Where zbus 4 and 5 differ (how the server's name is
//! requested, a peer connection's builder, waiting until a peer has closed, the
//! `Properties.GetAll` argument) comes from the including crate's `crate::compat`.

use std::os::unix::net::{UnixListener, UnixStream};

use anyhow::{bail, Context, Result};
use harness::ipc::props as p;
use harness::ipc::{self as h, subscription as sub, IpcOp, Method, SubscriptionOp, Transport};
use harness::{payload, Digest};
use serde_bytes::Bytes;
use zbus::blocking::{self, fdo as bfdo, MessageIterator};
use zbus::names::InterfaceName;
use zbus::{fdo, Guid, MatchRule};

use crate::codec::UnitsRef;
use crate::compat;
use crate::props::{destination, item_objects, managed_objects_digest, properties_digest, PropsObject};
use crate::service::{
    digest_items, digest_object_ref, digest_relation_set, ping_digest, ping_rule, BenchProxy, BenchProxyBlocking,
    BenchService,
};

pub struct ZbusIpc;

/// Why the adapter's p2p server does not serve them (an adapter choice, not a zbus limit).
pub const NOT_PEER_TO_PEER: &str = "this adapter does not serve property/get-all and objects/get-managed-objects \
     peer to peer yet: zbus's object server is per connection, and registering both families' 2020 objects on \
     every accepted connection (fdo::ObjectManager announcing each child with InterfacesAdded) would make every \
     peer-to-peer connection of this server slower (about 30 ms per connection with zbus 6, measured there), \
     which would change the other p2p cells; objects built only when first asked for are not written yet";

/// A new connection: SASL, then Hello on a bus; SASL only peer to peer. On a
/// socket this connects itself, not through `Builder::address`: zbus does not
/// decode an address's `%XX` escapes (a $TMPDIR with a space named another path).
fn connect(t: &Transport) -> zbus::Result<blocking::Connection> {
    let builder = compat::peer_builder(UnixStream::connect(t.socket())?);
    match t {
        Transport::Bus { .. } => builder.build(),
        Transport::P2p { .. } => builder.p2p().build(),
    }
}

/// A held `connect/idle-connections` connection, closed (`Connection::close`) when dropped.
struct IdleConnection(Option<blocking::Connection>);

impl Drop for IdleConnection {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            let _ = c.close();
        }
    }
}

/// A connection and a proxy on it (the proxy holds the connection).
fn connect_proxy(t: &Transport) -> zbus::Result<BenchProxyBlocking<'static>> {
    let conn = connect(t)?;
    let builder = BenchProxyBlocking::builder(&conn);
    match t {
        Transport::Bus { service_name, .. } => builder.destination(service_name.clone())?.build(),
        Transport::P2p { .. } => builder.build(),
    }
}

/// What adapter-shared/zbus/apps.rs needs of this driver: zbus's executor, a new async
/// connection (a blocking one made async: the same connection and executor thread), and the
/// async `BenchProxy` on a new connection.
pub(crate) mod for_apps {
    use harness::ipc::Transport;

    pub use zbus::block_on;

    pub fn connection(t: &Transport) -> zbus::Result<zbus::Connection> {
        Ok(zbus::Connection::from(super::connect(t)?))
    }

    pub fn proxy(t: &Transport) -> zbus::Result<crate::service::BenchProxy<'static>> {
        super::connect_async_proxy(t)
    }
}

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
        Method::RelationSet => digest_relation_set(&mut d, &proxy.relation_set()?),
    }
    Ok(d.finish())
}

fn emit_ping(conn: &blocking::Connection) -> zbus::Result<()> {
    emit_ping_text(conn, h::SIGNAL_TEXT)
}

fn emit_ping_text(conn: &blocking::Connection, text: &str) -> zbus::Result<()> {
    conn.emit_signal(None::<()>, h::OBJECT_PATH, h::INTERFACE, h::SIGNAL, &text)
}

/// Every object of both property families on `server` (a bus server's one connection): the props
/// objects, then per manager its children and last the manager (which announces them once).
fn serve_all(server: &blocking::ObjectServer) -> zbus::Result<()> {
    for n in p::PROPS_COUNTS {
        server.at(p::props_path(n), PropsObject::new(n))?;
        for (path, item) in item_objects(n) {
            server.at(path, item)?;
        }
        server.at(p::objects_path(n), fdo::ObjectManager)?;
    }
    Ok(())
}

/// `property/get-all/<n>`: the proxy of one `PropertiesProxyBlocking::get_all` per call.
fn get_all_client(conn: &blocking::Connection, t: &Transport, n: usize) -> Result<bfdo::PropertiesProxy<'static>> {
    Ok(bfdo::PropertiesProxy::builder(conn)
        .destination(destination(t))?
        .path(p::props_path(n))?
        .build()?)
}

fn get_all(proxy: &bfdo::PropertiesProxy<'_>) -> Result<u64> {
    let iface = InterfaceName::from_static_str_unchecked(p::PROPS_INTERFACE);
    properties_digest(&compat::properties_get_all(proxy, iface).context("Properties.GetAll")?)
}

/// `objects/get-managed-objects/<n>`: the proxy of one `get_managed_objects` per call.
fn managed_objects_client(
    conn: &blocking::Connection,
    t: &Transport,
    n: usize,
) -> Result<bfdo::ObjectManagerProxy<'static>> {
    Ok(bfdo::ObjectManagerProxy::builder(conn)
        .destination(destination(t))?
        .path(p::objects_path(n))?
        .build()?)
}

fn managed_objects(proxy: &bfdo::ObjectManagerProxy<'_>) -> Result<u64> {
    managed_objects_digest(&proxy.get_managed_objects().context("ObjectManager.GetManagedObjects")?)
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for ZbusIpc {
    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        match transport {
            Transport::Bus {
                socket, service_name, ..
            } => {
                let conn = compat::bus_server(socket, service_name)?;
                // On the bus only: see `NOT_PEER_TO_PEER`.
                serve_all(&conn.object_server()).context("serving the property and object-manager objects")?;
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
                        let conn = compat::peer_builder(stream)
                            .server(guid)
                            .map(|b| b.p2p())
                            .and_then(|b| b.serve_at(h::OBJECT_PATH, BenchService::new("")))
                            .and_then(|b| b.serve_at(h::OBJECT_PATH, crate::fds::FdService))
                            .and_then(|b| b.build());
                        match conn {
                            Ok(conn) => compat::wait_closed(&conn),
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
        // AddMatch on the bus; zbus also filters locally by the same rule.
        let mut messages = MessageIterator::for_match_rule(ping_rule()?, &conn, None)?;
        if extra_rules > 0 {
            let dbus = bfdo::DBusProxy::new(&conn)?;
            for j in 0..extra_rules {
                let rule = h::nonmatching_rule(j);
                dbus.add_match_rule(MatchRule::try_from(rule.as_str())?)?;
            }
        }
        Ok(Box::new(move || {
            let _keep = &conn;
            ping_digest(messages.next())
        }))
    }

    fn unsupported_ipc(&self, op: IpcOp, p2p: bool) -> Option<String> {
        crate::service::unsupported_ipc(op, p2p, NOT_PEER_TO_PEER)
    }

    fn implements(&self, op: IpcOp) -> bool {
        crate::service::implements(op)
    }

    /// A blocking connection (SASL, Hello), closed (`Connection::close`) when dropped.
    fn idle_connection(&mut self, transport: &Transport) -> Result<Box<dyn std::any::Any>> {
        Ok(Box::new(IdleConnection(Some(connect(transport)?))))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        Ok(match op {
            IpcOp::App(a) => crate::apps::client(&t, a)?,
            IpcOp::PropertyGetAll(n) => {
                let proxy = get_all_client(&connect(&t)?, &t, n)?;
                Box::new(move || get_all(&proxy))
            }
            IpcOp::ManagedObjects(n) => {
                let proxy = managed_objects_client(&connect(&t)?, &t, n)?;
                Box::new(move || managed_objects(&proxy))
            }
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
                let mut messages = MessageIterator::for_match_rule(ping_rule()?, &rx, None)?;
                Box::new(move || {
                    emit_ping(&tx)?;
                    ping_digest(messages.next())
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
                connect(&t)?.close()?;
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
                    )?;
                    conn.close()?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::InFlight(n) => {
                let proxy = connect_async_proxy(&t)?;
                Box::new(move || {
                    // The blocking proxy waits for each reply; the async one, joined, sends
                    // every call on its first poll before any reply is awaited.
                    let calls = (0..n).map(|i| proxy.in_out_int(h::in_flight_arg(i)));
                    Ok(h::in_flight_digest(zbus::block_on(
                        futures_util::future::try_join_all(calls),
                    )?))
                })
            }
            IpcOp::Subscription(SubscriptionOp::NameOwnerChurn(scope)) => {
                let names = sub::churn_names();
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                let rule = MatchRule::try_from(sub::name_owner_rule(scope, &names.1).as_str())?.into_owned();
                let mut messages = MessageIterator::for_match_rule(rule, &rx, None)?;
                Box::new(move || {
                    let _keep = &rx;
                    for name in std::iter::repeat_n(&names.0, sub::NAME_CHURNS).chain([&names.1]) {
                        tx.request_name(name.as_str())?;
                        tx.release_name(name.as_str())?;
                    }
                    let mut received = Vec::new();
                    loop {
                        let msg = messages.next().context("the signal stream ended")??;
                        let (name, _, new): (String, String, String) = msg.body().deserialize()?;
                        let end = name == names.1 && new.is_empty();
                        received.push((name, new));
                        if end {
                            break;
                        }
                    }
                    sub::name_churn_digest(&received, scope, &names)
                })
            }
            IpcOp::Subscription(SubscriptionOp::Delivered(scope)) => {
                // The subscription: a MessageIterator for the rule (AddMatch with it on the bus,
                // and zbus filters by the same rule locally).
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                let rule = MatchRule::try_from(sub::delivered_rule(scope).as_str())?.into_owned();
                let mut messages = MessageIterator::for_match_rule(rule, &rx, None)?;
                let texts = sub::delivered_texts();
                Box::new(move || {
                    let _keep = &rx;
                    for text in &texts {
                        emit_ping_text(&tx, text)?;
                    }
                    let mut received = Vec::new();
                    loop {
                        let msg = messages.next().context("the signal stream ended")??;
                        let text: String = msg.body().deserialize()?;
                        let end = text == h::SIGNAL_TEXT;
                        received.push(text);
                        if end {
                            break;
                        }
                    }
                    sub::delivered_digest(&received, scope)
                })
            }
            IpcOp::Subscription(SubscriptionOp::Burst(n)) => {
                // The consumer's iterator is not read while the burst is emitted; zbus's own
                // task keeps reading its socket into the iterator's queue (its default size).
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                let mut messages = MessageIterator::for_match_rule(ping_rule()?, &rx, None)?;
                let texts: Vec<String> = (0..n).map(sub::burst_text).collect();
                Box::new(move || {
                    let _keep = &rx;
                    for text in &texts {
                        emit_ping_text(&tx, text)?;
                    }
                    emit_ping_text(&tx, sub::BURST_END)?;
                    let mut received = Vec::with_capacity(n);
                    loop {
                        let msg = messages.next().context("the signal stream ended")??;
                        let text: String = msg.body().deserialize()?;
                        if text == sub::BURST_END {
                            break;
                        }
                        received.push(text);
                    }
                    sub::burst_digest(&received, n)
                })
            }
            IpcOp::Subscription(SubscriptionOp::PropertyStorm(n)) => crate::storm::client(&t, n)?,
            IpcOp::Subscription(SubscriptionOp::MatchChurn) => {
                // The bus's own AddMatch/RemoveMatch through the blocking DBusProxy, each reply awaited.
                let conn = connect(&t)?;
                let dbus = bfdo::DBusProxy::new(&conn)?;
                let rule = MatchRule::try_from(h::subscription::churn_rule().as_str())?.into_owned();
                Box::new(move || {
                    let _keep = &conn;
                    dbus.add_match_rule(rule.clone())?;
                    dbus.remove_match_rule(rule.clone())?;
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
