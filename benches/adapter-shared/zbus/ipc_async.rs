//! The IPC side of zbus 6 (compiled by adapter-zbus-6 and -6-tokio through `#[path]`):
//! the service of adapter-shared/zbus/service.rs served by a `connection::Builder`, the
//! client through the generated async proxy and the `fdo` proxies. zbus 6 is async only;
//! this synchronous program drives it with `crate::runtime::block_on`: zbus's own
//! runtime (zruntime), which runs on the calling thread while a call is inside it
//! and hands the connections to a helper thread in between (the documented way for
//! sync code, see the zbus README "Synchronous programs"), or a Tokio runtime, on
//! which zbus' `tokio` feature puts every connection built inside it.

use std::os::unix::net::UnixListener;

use anyhow::{bail, Context, Result};
use futures_util::StreamExt;
use harness::ipc::props as p;
use harness::ipc::{self as h, subscription as sub, IpcOp, Method, SubscriptionOp, Transport};
use harness::{payload, Digest};
use serde_bytes::Bytes;
use zbus::names::InterfaceName;
use zbus::object_server::SignalEmitter;
use zbus::{connection, fdo, Connection, Guid, MatchRule, MessageStream, ObjectServer};

use crate::builders::to_socket;
use crate::codec::UnitsRef;
use crate::props::{destination, item_objects, managed_objects_digest, properties_digest, PropsObject};
use crate::runtime::block_on;
use crate::service::{
    digest_items, digest_object_ref, digest_relation_set, ping_digest, ping_rule, BenchProxy, BenchService,
};

pub struct ZbusIpc;

/// A new connection: SASL, then Hello on a bus; SASL only peer to peer (on a
/// socket this connects: crate::builders::to_socket says why).
async fn connect(t: &Transport) -> zbus::Result<Connection> {
    let builder = to_socket(t.socket())?;
    match t {
        Transport::Bus { .. } => builder.build().await,
        Transport::P2p { .. } => builder.p2p().build().await,
    }
}

async fn proxy(conn: &Connection, t: &Transport) -> zbus::Result<BenchProxy<'static>> {
    let builder = BenchProxy::builder(conn);
    match t {
        Transport::Bus { service_name, .. } => builder.destination(service_name.clone()).build().await,
        Transport::P2p { .. } => builder.build().await,
    }
}

/// A held `connect/idle-connections` connection, closed (`Connection::close`) when dropped.
struct IdleConnection(Option<Connection>);

impl Drop for IdleConnection {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            let _ = block_on(c.close());
        }
    }
}

/// What adapter-shared/zbus/apps.rs needs of this driver: the executor, a new connection
/// and the async `BenchProxy` on a new connection, each made inside `block_on`.
pub(crate) mod for_apps {
    use harness::ipc::Transport;

    pub use crate::runtime::block_on;

    pub fn connection(t: &Transport) -> zbus::Result<zbus::Connection> {
        block_on(super::connect(t))
    }

    pub fn proxy(t: &Transport) -> zbus::Result<crate::service::BenchProxy<'static>> {
        block_on(super::connect_proxy(t))
    }
}

/// A connection and a proxy on it (the proxy holds the connection).
async fn connect_proxy(t: &Transport) -> zbus::Result<BenchProxy<'static>> {
    proxy(&connect(t).await?, t).await
}

async fn call(proxy: &BenchProxy<'_>, m: Method) -> zbus::Result<u64> {
    let mut d = Digest::new();
    match m {
        Method::Void => proxy.void().await?,
        Method::InInt => proxy.in_int(h::IN_INT).await?,
        Method::OutInt => d.i32(proxy.out_int().await?),
        Method::InOutInt => d.i32(proxy.in_out_int(h::IN_INT).await?),
        Method::InString => proxy.in_string(h::IN_STRING).await?,
        Method::OutString => d.str(&proxy.out_string().await?),
        Method::InOutString => d.str(&proxy.in_out_string(h::OUT_STRING).await?),
        Method::ObjectRef => digest_object_ref(&mut d, &proxy.object_ref().await?),
        Method::RelationSet => digest_relation_set(&mut d, &proxy.relation_set().await?),
    }
    Ok(d.finish())
}

async fn emit_ping(emitter: &SignalEmitter<'_>) -> zbus::Result<()> {
    BenchService::ping(emitter, h::SIGNAL_TEXT).await
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for ZbusIpc {
    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        match transport {
            Transport::Bus {
                socket, service_name, ..
            } => block_on(async {
                // zbus 6 requests names with ALLOW_REPLACEMENT | REPLACE_EXISTING | DO_NOT_QUEUE by
                // default: a second server would take the name over. DO_NOT_QUEUE alone fails
                // (zbus::Error::NameTaken) when the name is owned.
                let _conn = to_socket(socket)?
                    .name(service_name.as_str())
                    .allow_name_replacements(false)
                    .replace_existing_names(false)
                    .serve_at(h::OBJECT_PATH, BenchService::new(service_name))
                    .serve_at(h::OBJECT_PATH, crate::fds::FdService)
                    .build()
                    .await
                    .with_context(|| format!("connecting the server to the bus and requesting {service_name}"))?;
                serve_all(_conn.object_server())
                    .await
                    .context("serving the property and object-manager objects")?;
                ready();
                std::future::pending::<()>().await;
                Ok(())
            }),
            Transport::P2p { socket } => {
                // A stale socket file from an earlier server would make bind fail.
                let _ = std::fs::remove_file(socket);
                let listener = UnixListener::bind(socket).with_context(|| format!("binding {}", socket.display()))?;
                let guid = Guid::generate();
                ready();
                // One server connection per client, each on a thread of its own whose
                // `block_on` drives it until the client closes it.
                for stream in listener.incoming() {
                    let stream = stream.context("accepting a peer")?;
                    let guid = guid.clone();
                    std::thread::spawn(move || {
                        let served = block_on(async {
                            // Not the property/object-manager objects: see `NOT_PEER_TO_PEER`.
                            let conn = connection::Builder::unix_stream(stream)
                                .server(guid)
                                .p2p()
                                .serve_at(h::OBJECT_PATH, BenchService::new(""))
                                .serve_at(h::OBJECT_PATH, crate::fds::FdService)
                                .build()
                                .await?;
                            conn.closed().await;
                            zbus::Result::Ok(())
                        });
                        if let Err(e) = served {
                            eprintln!("a peer connection failed: {e}");
                        }
                    });
                }
                Ok(())
            }
        }
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
        let (conn, mut stream) = block_on(async {
            let conn = connect(transport).await?;
            // AddMatch on the bus; zbus also filters locally by the same rule.
            let stream = MessageStream::for_match_rule(ping_rule()?, &conn, None).await?;
            if extra_rules > 0 {
                let dbus = fdo::DBusProxy::new(&conn).await?;
                for j in 0..extra_rules {
                    let rule = h::nonmatching_rule(j);
                    dbus.add_match_rule(MatchRule::try_from(rule.as_str())?).await?;
                }
            }
            anyhow::Ok((conn, stream))
        })?;
        Ok(Box::new(move || {
            let _keep = &conn;
            ping_digest(block_on(stream.next()))
        }))
    }

    fn unsupported_ipc(&self, op: IpcOp, p2p: bool) -> Option<String> {
        crate::service::unsupported_ipc(op, p2p, NOT_PEER_TO_PEER)
    }

    fn implements(&self, op: IpcOp) -> bool {
        crate::service::implements(op)
    }

    fn idle_connection(&mut self, transport: &Transport) -> Result<Box<dyn std::any::Any>> {
        Ok(Box::new(IdleConnection(Some(block_on(connect(transport))?))))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        Ok(match op {
            IpcOp::App(a) => crate::apps::client(&t, a)?,
            IpcOp::PropertyGetAll(n) => {
                let proxy = block_on(async { get_all_client(&connect(&t).await?, &t, n).await })?;
                Box::new(move || block_on(get_all(&proxy)))
            }
            IpcOp::ManagedObjects(n) => {
                let proxy = block_on(async { managed_objects_client(&connect(&t).await?, &t, n).await })?;
                Box::new(move || block_on(managed_objects(&proxy)))
            }
            IpcOp::FdPassing(n) => {
                let conn = block_on(connect(&t))?;
                Box::new(crate::fds::client(
                    conn,
                    Some(t.service_name()).filter(|s| !s.is_empty()),
                    n,
                )?)
            }
            IpcOp::Call(m) => {
                let proxy = block_on(connect_proxy(&t))?;
                Box::new(move || Ok(block_on(call(&proxy, m))?))
            }
            IpcOp::EchoBytes(n) => {
                let proxy = block_on(connect_proxy(&t))?;
                let payload = h::echo_payload(n);
                Box::new(move || {
                    let reply = block_on(proxy.echo_bytes(Bytes::new(&payload)))?;
                    let mut d = Digest::new();
                    d.bytes(&reply);
                    Ok(d.finish())
                })
            }
            IpcOp::PropertyGet | IpcOp::PropertyGetX100 => {
                let reads = if op == IpcOp::PropertyGet { 1 } else { 100 };
                let proxy = block_on(connect_proxy(&t))?;
                Box::new(move || {
                    block_on(async {
                        let mut d = Digest::new();
                        for _ in 0..reads {
                            digest_items(&mut d, &proxy.items().await?);
                        }
                        Ok(d.finish())
                    })
                })
            }
            IpcOp::EmitReceive => {
                let (tx, rx, mut stream) = block_on(async {
                    let tx = connect(&t).await?;
                    let rx = connect(&t).await?;
                    let stream = MessageStream::for_match_rule(ping_rule()?, &rx, None).await?;
                    anyhow::Ok((tx, rx, stream))
                })?;
                let emitter = SignalEmitter::new(&tx, h::OBJECT_PATH)?;
                Box::new(move || {
                    let _keep = &rx;
                    block_on(async {
                        emit_ping(&emitter).await?;
                        ping_digest(stream.next().await)
                    })
                })
            }
            IpcOp::Fanout(_) | IpcOp::NonmatchingRules(_) => {
                let conn = block_on(connect(&t))?;
                let emitter = SignalEmitter::new(&conn, h::OBJECT_PATH)?.into_owned();
                Box::new(move || {
                    block_on(emit_ping(&emitter))?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::ConnectHello => Box::new(move || {
                block_on(async { connect(&t).await?.close().await })?;
                Ok(Digest::new().finish())
            }),
            IpcOp::ConnectMarshalSend => {
                let body = payload::mixed();
                Box::new(move || {
                    let units = body.units().expect("marshal/mixed is units");
                    block_on(async {
                        let conn = connect(&t).await?;
                        conn.emit_signal(
                            None::<&str>,
                            payload::PATH,
                            payload::INTERFACE,
                            payload::MEMBER,
                            &UnitsRef(units),
                        )
                        .await?;
                        conn.close().await
                    })?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::InFlight(n) => {
                let proxy = block_on(connect_proxy(&t))?;
                Box::new(move || {
                    // try_join_all polls every call once before any reply is awaited:
                    // the first poll of a proxy call sends it (zbus's own concurrent-calls benchmark).
                    let calls = (0..n).map(|i| proxy.in_out_int(h::in_flight_arg(i)));
                    Ok(h::in_flight_digest(block_on(futures_util::future::try_join_all(
                        calls,
                    ))?))
                })
            }
            IpcOp::Subscription(SubscriptionOp::NameOwnerChurn(scope)) => {
                let names = sub::churn_names();
                let (tx, rx, mut stream) = block_on(async {
                    let tx = connect(&t).await?;
                    let rx = connect(&t).await?;
                    let rule = MatchRule::try_from(sub::name_owner_rule(scope, &names.1).as_str())?.into_owned();
                    let stream = MessageStream::for_match_rule(rule, &rx, None).await?;
                    anyhow::Ok((tx, rx, stream))
                })?;
                Box::new(move || {
                    let _keep = &rx;
                    block_on(async {
                        for name in std::iter::repeat_n(&names.0, sub::NAME_CHURNS).chain([&names.1]) {
                            tx.request_name(name.as_str()).await?;
                            tx.release_name(name.as_str()).await?;
                        }
                        let mut received = Vec::new();
                        loop {
                            let msg = stream.next().await.context("the signal stream ended")??;
                            let (name, _, new): (String, String, String) = msg.body().deserialize()?;
                            let end = name == names.1 && new.is_empty();
                            received.push((name, new));
                            if end {
                                break;
                            }
                        }
                        sub::name_churn_digest(&received, scope, &names)
                    })
                })
            }
            IpcOp::Subscription(SubscriptionOp::Delivered(scope)) => {
                // The subscription: a MessageStream for the rule (AddMatch with it on the bus,
                // and zbus filters by the same rule locally).
                let (tx, rx, mut stream) = block_on(async {
                    let tx = connect(&t).await?;
                    let rx = connect(&t).await?;
                    let rule = MatchRule::try_from(sub::delivered_rule(scope).as_str())?.into_owned();
                    let stream = MessageStream::for_match_rule(rule, &rx, None).await?;
                    anyhow::Ok((tx, rx, stream))
                })?;
                let emitter = SignalEmitter::new(&tx, h::OBJECT_PATH)?.into_owned();
                let texts = sub::delivered_texts();
                Box::new(move || {
                    let _keep = &rx;
                    block_on(async {
                        for text in &texts {
                            BenchService::ping(&emitter, text).await?;
                        }
                        let mut received = Vec::new();
                        loop {
                            let msg = stream.next().await.context("the signal stream ended")??;
                            let text: String = msg.body().deserialize()?;
                            let end = text == h::SIGNAL_TEXT;
                            received.push(text);
                            if end {
                                break;
                            }
                        }
                        sub::delivered_digest(&received, scope)
                    })
                })
            }
            IpcOp::Subscription(SubscriptionOp::Burst(n)) => {
                // The consumer's stream is not polled while the burst is emitted; zbus's own
                // task keeps reading its socket into the stream's queue (its default size).
                let (tx, rx, mut stream) = block_on(async {
                    let tx = connect(&t).await?;
                    let rx = connect(&t).await?;
                    let stream = MessageStream::for_match_rule(ping_rule()?, &rx, None).await?;
                    anyhow::Ok((tx, rx, stream))
                })?;
                let emitter = SignalEmitter::new(&tx, h::OBJECT_PATH)?.into_owned();
                let texts: Vec<String> = (0..n).map(sub::burst_text).collect();
                Box::new(move || {
                    let _keep = &rx;
                    block_on(async {
                        for text in &texts {
                            BenchService::ping(&emitter, text).await?;
                        }
                        BenchService::ping(&emitter, sub::BURST_END).await?;
                        let mut received = Vec::with_capacity(n);
                        loop {
                            let msg = stream.next().await.context("the signal stream ended")??;
                            let text: String = msg.body().deserialize()?;
                            if text == sub::BURST_END {
                                break;
                            }
                            received.push(text);
                        }
                        sub::burst_digest(&received, n)
                    })
                })
            }
            IpcOp::Subscription(SubscriptionOp::PropertyStorm(n)) => crate::storm::client(&t, n)?,
            IpcOp::Subscription(SubscriptionOp::MatchChurn) => {
                // The bus's own AddMatch/RemoveMatch through fdo::DBusProxy, each reply
                // awaited (Connection::add_match counts references and removes lazily).
                let (conn, dbus) = block_on(async {
                    let conn = connect(&t).await?;
                    let dbus = fdo::DBusProxy::new(&conn).await?;
                    anyhow::Ok((conn, dbus))
                })?;
                let rule = MatchRule::try_from(h::subscription::churn_rule().as_str())?.into_owned();
                Box::new(move || {
                    let _keep = &conn;
                    block_on(async {
                        dbus.add_match_rule(rule.clone()).await?;
                        dbus.remove_match_rule(rule.clone()).await
                    })?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::PropertyColdStart | IpcOp::RawSocket(_) | IpcOp::IdleConnections(_) => {
                bail!("{op:?} is not a client operation")
            }
        })
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        block_on(async {
            let conn = connect(transport).await?;
            Ok(proxy(&conn, transport).await?.items().await?)
        })
    }
}

/// Why the adapter's p2p server does not serve them (an adapter choice, not a zbus limit).
pub const NOT_PEER_TO_PEER: &str = "this adapter does not serve property/get-all and objects/get-managed-objects \
     peer to peer yet: zbus's object server is per connection, and registering both families' 2020 objects on \
     every accepted connection (fdo::ObjectManager announcing each child with InterfacesAdded) made every \
     peer-to-peer connection of this server about 30 ms slower (property/cold-start went from about 10-17 ms to \
     37-48 ms here), which would change the other p2p cells; objects built only when first asked for are not \
     written yet";

/// Every object of both families on `server` (a bus server's one connection): the props objects, then per
/// manager its children and last the manager (which announces them once).
async fn serve_all(server: &ObjectServer) -> zbus::Result<()> {
    for n in p::PROPS_COUNTS {
        server.at(p::props_path(n), PropsObject::new(n)).await?;
        for (path, item) in item_objects(n) {
            server.at(path, item).await?;
        }
        server.at(p::objects_path(n), fdo::ObjectManager).await?;
    }
    Ok(())
}

/// `property/get-all/<n>`: one `PropertiesProxy::get_all` per call of the closure.
async fn get_all_client(conn: &Connection, t: &Transport, n: usize) -> Result<fdo::PropertiesProxy<'static>> {
    let proxy = fdo::PropertiesProxy::builder(conn)
        .destination(destination(t))
        .path(p::props_path(n))
        .build()
        .await?;
    Ok(proxy)
}

async fn get_all(proxy: &fdo::PropertiesProxy<'_>) -> Result<u64> {
    let iface = InterfaceName::from_static_str_unchecked(p::PROPS_INTERFACE);
    properties_digest(&proxy.get_all(iface).await.context("Properties.GetAll")?)
}

/// `objects/get-managed-objects/<n>`: one `ObjectManagerProxy::get_managed_objects` per call.
async fn managed_objects_client(
    conn: &Connection,
    t: &Transport,
    n: usize,
) -> Result<fdo::ObjectManagerProxy<'static>> {
    let proxy = fdo::ObjectManagerProxy::builder(conn)
        .destination(destination(t))
        .path(p::objects_path(n))
        .build()
        .await?;
    Ok(proxy)
}

async fn managed_objects(proxy: &fdo::ObjectManagerProxy<'_>) -> Result<u64> {
    let objects = proxy
        .get_managed_objects()
        .await
        .context("ObjectManager.GetManagedObjects")?;
    managed_objects_digest(&objects)
}
