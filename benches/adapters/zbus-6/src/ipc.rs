//! The IPC side: the benchmark service as an `#[interface]` object served by a
//! `connection::Builder`, the client as a `#[proxy]` trait. zbus 6 is async only;
//! this synchronous program drives it with `crate::runtime::block_on`: zbus's own
//! runtime (zruntime), which runs on the calling thread while a call is inside it
//! and hands the connections to a helper thread in between (the documented way for
//! sync code, see the zbus README "Synchronous programs"), or a Tokio runtime, on
//! which zbus' `tokio` feature puts every connection built inside it.

use std::os::unix::net::UnixListener;

use anyhow::{bail, Context, Result};
use futures_util::StreamExt;
use harness::ipc::{self as h, IpcOp, Method, Transport};
use harness::{payload, Digest};
use serde::{Deserialize, Serialize};
use serde_bytes::{ByteBuf, Bytes};
use zbus::object_server::SignalEmitter;
use zbus::{connection, fdo, interface, proxy, Connection, Guid, MatchRule, MessageStream, Type};

use crate::runtime::block_on;
use crate::UnitsRef;

pub struct ZbusIpc;

/// `(so)`: a bus name and an object path (`ObjectRef`, the elements of `RelationSet`).
#[derive(Clone, Serialize, Deserialize, Type)]
struct ObjectRef {
    name: String,
    path: zbus::OwnedObjectPath,
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
#[interface(name = "io.killing.spark.Bench")]
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

    #[zbus(property)]
    fn items(&self) -> Vec<(String, String)> {
        self.items.clone()
    }

    /// Emitted by clients (any connection can emit it through a `SignalEmitter`).
    #[zbus(signal)]
    async fn ping(emitter: &SignalEmitter<'_>, text: &str) -> zbus::Result<()>;
}

// On p2p the destination is not used by the peer; the default is the interface name.
#[proxy(
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
    /// the signal) without a message, only converting the cached variant.
    #[zbus(property)]
    fn items(&self) -> zbus::Result<Vec<(String, String)>>;
}

/// A new connection: SASL, then Hello on a bus; SASL only peer to peer.
async fn connect(t: &Transport) -> zbus::Result<Connection> {
    match t {
        Transport::Bus { address, .. } => connection::Builder::address(address.as_str()).build().await,
        Transport::P2p { .. } => connection::Builder::address(t.address().as_str()).p2p().build().await,
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

/// A connection and a proxy on it (the proxy holds the connection).
async fn connect_proxy(t: &Transport) -> zbus::Result<BenchProxy<'static>> {
    proxy(&connect(t).await?, t).await
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
        Method::RelationSet => {
            let set = proxy.relation_set().await?;
            for r in &set {
                digest_object_ref(&mut d, r);
            }
            d.len(set.len());
        }
    }
    Ok(d.finish())
}

fn ping_rule() -> Result<MatchRule<'static>> {
    Ok(MatchRule::try_from(h::ping_rule().as_str())?.into_owned())
}

async fn emit_ping(emitter: &SignalEmitter<'_>) -> zbus::Result<()> {
    BenchService::ping(emitter, h::SIGNAL_TEXT).await
}

/// The digest of a received `Ping`: its text.
fn ping_digest(msg: Option<zbus::Result<zbus::Message>>) -> Result<u64> {
    let msg = msg.context("the signal stream ended")??;
    let mut d = Digest::new();
    d.str(msg.body().deserialize::<&str>()?);
    Ok(d.finish())
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for ZbusIpc {
    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        match transport {
            Transport::Bus {
                address, service_name, ..
            } => block_on(async {
                // zbus 6 requests names with ALLOW_REPLACEMENT | REPLACE_EXISTING | DO_NOT_QUEUE by
                // default: a second server would take the name over. DO_NOT_QUEUE alone fails
                // (zbus::Error::NameTaken) when the name is owned.
                let _conn = connection::Builder::address(address.as_str())
                    .name(service_name.as_str())
                    .allow_name_replacements(false)
                    .replace_existing_names(false)
                    .serve_at(h::OBJECT_PATH, BenchService::new(service_name))
                    .serve_at(h::OBJECT_PATH, crate::fds::FdService)
                    .build()
                    .await
                    .with_context(|| format!("connecting the server to the bus and requesting {service_name}"))?;
                crate::props::serve_all(_conn.object_server())
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
                            // Not the property/object-manager objects: see `props::NOT_PEER_TO_PEER`.
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
        (p2p && matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_)))
            .then(|| crate::props::NOT_PEER_TO_PEER.to_owned())
    }

    fn implements(&self, op: IpcOp) -> bool {
        !op.opt_in()
            || matches!(op, IpcOp::InFlight(_) | IpcOp::IdleConnections(_) | IpcOp::FdPassing(_))
            || matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_))
    }

    fn idle_connection(&mut self, transport: &Transport) -> Result<Box<dyn std::any::Any>> {
        Ok(Box::new(IdleConnection(Some(block_on(connect(transport))?))))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        Ok(match op {
            IpcOp::PropertyGetAll(n) => {
                let proxy = block_on(async { crate::props::get_all_client(&connect(&t).await?, &t, n).await })?;
                Box::new(move || block_on(crate::props::get_all(&proxy)))
            }
            IpcOp::ManagedObjects(n) => {
                let proxy = block_on(async { crate::props::managed_objects_client(&connect(&t).await?, &t, n).await })?;
                Box::new(move || block_on(crate::props::managed_objects(&proxy)))
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
