//! The IPC side with async-rustbus 0.2's `RpcConn` (SASL EXTERNAL and Hello on
//! connect). Clients send `MessageBuilder` calls with `send_msg_w_rsp` and
//! await the reply future; properties are read with a hand-built
//! `org.freedesktop.DBus.Properties.Get` (no proxy and no property cache:
//! every read is a round trip). Signals are `MessageBuilder::signal`s sent
//! with `send_msg_wo_rsp`; receivers register a `MatchRule` with
//! `insert_sig_match` (which also sends the bus its AddMatch) and take
//! signals with `get_signal`.
//!
//! The server registers `/` with `CallAction::Queue`, so every call on every
//! path lands in one queue (`get_call`): the library's own fallbacks are not
//! used (its `Intro` handler unwraps the INTERFACE field, and its
//! "UnknownInterface" error name is invalid). async-rustbus has no object,
//! property or introspection layer, so `harness::ipc::standard` says what a
//! call is: a benchmark method with the right argument signature (answered
//! with async-rustbus, as is `Properties.Get` of `Items`, and GetAll and
//! GetManagedObjects of `property/get-all`'s and `objects/…`'s objects: props.rs), a standard interface
//! (Introspect, Peer, GetAll, answered with the harness's encoding) or an
//! error. Unlike rustbus 0.19, async-rustbus writes the ERROR_NAME field of an
//! error reply (`MarshalledMessage::marshal_header` is its own), so error
//! replies come from `DynamicHeader::make_error_response`.
//!
//! Every connection is made to the socket the transport names
//! (`RpcConn::connect_to_path`); `get_session_bus_addr` reads only
//! DBUS_SESSION_BUS_ADDRESS and `get_system_bus_addr` is a fixed path.
//! Each client, subscriber and server owns a current-thread Tokio runtime
//! and runs every operation with `block_on` on the calling thread.

use std::path::Path;
use std::rc::Rc;

use anyhow::{anyhow, bail, ensure, Context, Result};
use async_rustbus::rustbus_core::message_builder::{MarshalledMessage, MarshalledMessageBody, MessageBuilder};
use async_rustbus::rustbus_core::message_builder::{MessageBodyParser, MessageType};
use async_rustbus::rustbus_core::path::{ObjectPath, ObjectPathBuf};
use async_rustbus::rustbus_core::signature::{Base, Type};
use async_rustbus::rustbus_core::wire::unmarshal::traits::Variant;
use async_rustbus::rustbus_core::ByteOrder;
use async_rustbus::{CallAction, MatchRule, RpcConn};
use harness::ipc::{self as h, AppOp, IpcOp, Method, SubscriptionOp, Transport};
use harness::{payload, Digest};
use rustbus::wire::marshal::traits::SignatureBuffer;
use tokio::runtime::Runtime;

use crate::standard_reply::standard_reply;
use crate::WireResult;

/// The runtime of the held `connect/idle-connections` connections (made on
/// first use): an `RpcConn` is registered with the reactor of the runtime it
/// was made in, which must outlive it.
#[derive(Default)]
pub struct AsyncRustbusIpc {
    idle_runtime: Option<Rc<Runtime>>,
}

/// A held idle connection and the runtime it is registered with (dropped after it).
struct IdleConnection {
    _conn: RpcConn,
    _runtime: Rc<Runtime>,
}

const PROPERTIES: &str = "org.freedesktop.DBus.Properties";

/// Why nothing runs peer to peer: the service cannot be served there.
const NO_P2P_SERVER: &str = "async-rustbus 0.2.0 cannot serve a peer-to-peer connection: its handshake \
     (Conn::conn_handshake) is the client side of SASL only (do_auth, negotiate_unix_fds, BEGIN; nothing answers \
     AUTH with OK <guid>), and every RpcConn constructor connects to an address and sends Hello: none takes an \
     accepted socket";

pub(crate) fn runtime() -> Result<Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting a current-thread Tokio runtime")
}

fn bus_socket(t: &Transport) -> Result<&Path> {
    match t {
        Transport::Bus { socket, .. } => Ok(socket),
        Transport::P2p { .. } => bail!("{NO_P2P_SERVER}"),
    }
}

/// A bus connection: SASL EXTERNAL and Hello.
pub(crate) async fn connect(t: &Transport) -> Result<RpcConn> {
    connect_with_fds(t, false).await
}

/// A bus connection that negotiated fd passing when `with_fd` (the server and
/// the fd-passing client: `src/fds.rs`).
async fn connect_with_fds(t: &Transport, with_fd: bool) -> Result<RpcConn> {
    let socket = bus_socket(t)?;
    RpcConn::connect_to_path(socket, with_fd)
        .await
        .with_context(|| format!("connecting to {}", socket.display()))
}

/// Sends a call and awaits its reply; an error reply is an error.
pub(crate) async fn call_msg(conn: &RpcConn, msg: &MarshalledMessage) -> Result<MarshalledMessage> {
    let reply = conn.send_msg_w_rsp(msg).await?.await?;
    if reply.typ == MessageType::Error {
        let text: String = reply.body.parser().get().unwrap_or_default();
        bail!(
            "error reply {}: {text}",
            reply.dynheader.error_name.as_deref().unwrap_or("(no name)")
        );
    }
    Ok(reply)
}

/// What the reply's parser has not read yet must be nothing.
fn read_all(p: &MessageBodyParser) -> Result<()> {
    ensure!(p.get_next_sig().is_none(), "the reply has more arguments than expected");
    Ok(())
}

/// A client of the benchmark service.
pub(crate) struct Client {
    conn: RpcConn,
    destination: String,
}

impl Client {
    pub(crate) async fn new(t: &Transport) -> Result<Self> {
        Ok(Client {
            conn: connect(t).await?,
            destination: t.service_name().to_owned(),
        })
    }

    fn message(&self, interface: &str, member: &str) -> MarshalledMessage {
        MessageBuilder::new()
            .call(member)
            .with_interface(interface)
            .on(h::OBJECT_PATH)
            .at(self.destination.as_str())
            .build()
    }

    /// Calls `member` of the benchmark interface with the arguments `args` pushes.
    pub(crate) async fn call(
        &self,
        member: &str,
        args: impl FnOnce(&mut MarshalledMessageBody) -> Result<(), rustbus::Error>,
    ) -> Result<MarshalledMessage> {
        let mut msg = self.message(h::INTERFACE, member);
        args(&mut msg.body).wire()?;
        call_msg(&self.conn, &msg).await
    }

    /// `Properties.Get(INTERFACE, "Items")`; `each` sees every pair, the count is returned.
    async fn read_items(&self, mut each: impl FnMut(&str, &str)) -> Result<usize> {
        let mut msg = self.message(PROPERTIES, "Get");
        msg.body.push_param2(h::INTERFACE, h::PROPERTY).wire()?;
        let reply = call_msg(&self.conn, &msg).await?;
        let mut p = reply.body.parser();
        let v: Variant = p.get().wire()?;
        let items: Vec<(&str, &str)> = v.get().wire()?;
        read_all(&p)?;
        for (id, name) in &items {
            each(id, name);
        }
        Ok(items.len())
    }

    async fn digest_items(&self, d: &mut Digest) -> Result<()> {
        let n = self
            .read_items(|id, name| {
                d.str(id);
                d.str(name);
            })
            .await?;
        d.len(n);
        Ok(())
    }

    async fn method(&self, m: Method) -> Result<u64> {
        let member = m.member();
        let reply = match m {
            Method::InInt | Method::InOutInt => self.call(member, |b| b.push_param(h::IN_INT)).await?,
            Method::InString => self.call(member, |b| b.push_param(h::IN_STRING)).await?,
            Method::InOutString => self.call(member, |b| b.push_param(h::OUT_STRING)).await?,
            _ => self.call(member, |_| Ok(())).await?,
        };
        let mut p = reply.body.parser();
        let mut d = Digest::new();
        match m {
            Method::Void | Method::InInt | Method::InString => {}
            Method::OutInt | Method::InOutInt => d.i32(p.get().wire()?),
            Method::OutString | Method::InOutString => d.str(p.get().wire()?),
            Method::ObjectRef => {
                let (name, path): (&str, &ObjectPath) = p.get().wire()?;
                d.str(name);
                d.str(path.as_str());
            }
            Method::RelationSet => {
                let set: Vec<(&str, &ObjectPath)> = p.get().wire()?;
                for (name, path) in &set {
                    d.str(name);
                    d.str(path.as_str());
                }
                d.len(set.len());
            }
        }
        read_all(&p)?;
        Ok(d.finish())
    }

    /// `call/in-flight/<n>`: each `send_msg_w_rsp` returns once its call is
    /// written, with a future of the reply; every call is sent before the
    /// first of those futures is awaited (replies are queued by serial).
    async fn in_flight(&self, n: usize) -> Result<u64> {
        let calls = (0..n)
            .map(|i| {
                let mut msg = self.message(h::INTERFACE, Method::InOutInt.member());
                msg.body.push_param(h::in_flight_arg(i)).wire()?;
                Ok(msg)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut pending = Vec::with_capacity(n);
        for msg in &calls {
            pending.push(self.conn.send_msg_w_rsp(msg).await?);
        }
        let mut replies = Vec::with_capacity(n);
        for reply in pending {
            let reply = reply.await?;
            ensure!(reply.typ != MessageType::Error, "error reply to an in-flight call");
            let mut p = reply.body.parser();
            replies.push(p.get::<i32>().wire()?);
            read_all(&p)?;
        }
        Ok(h::in_flight_digest(replies))
    }

    /// A call of `interface.member` on `path` with no arguments, its reply.
    async fn call_on(&self, path: &str, interface: &str, member: &str, arg: Option<&str>) -> Result<MarshalledMessage> {
        let mut msg = MessageBuilder::new()
            .call(member)
            .with_interface(interface)
            .on(path)
            .at(self.destination.as_str())
            .build();
        if let Some(arg) = arg {
            msg.body.push_param(arg).wire()?;
        }
        call_msg(&self.conn, &msg).await
    }

    /// `property/get-all/<n>`: a plain `Properties.GetAll` call (no proxies); the reply's digest.
    async fn get_all(&self, n: usize) -> Result<u64> {
        let path = h::props::props_path(n);
        let reply = self
            .call_on(&path, PROPERTIES, "GetAll", Some(h::props::PROPS_INTERFACE))
            .await?;
        crate::props::get_all_digest(&reply)
    }

    /// `objects/get-managed-objects/<n>`: a plain `ObjectManager.GetManagedObjects` call; the reply's digest.
    async fn managed_objects(&self, n: usize) -> Result<u64> {
        let path = h::props::objects_path(n);
        let reply = self
            .call_on(&path, h::props::OBJECT_MANAGER_INTERFACE, "GetManagedObjects", None)
            .await?;
        crate::props::managed_objects_digest(&reply)
    }

    async fn echo_bytes(&self, payload: &[u8]) -> Result<u64> {
        let reply = self.call(h::ECHO_BYTES, |b| b.push_param(payload)).await?;
        let mut p = reply.body.parser();
        let mut d = Digest::new();
        d.bytes(p.get::<&[u8]>().wire()?);
        read_all(&p)?;
        Ok(d.finish())
    }
}

async fn emit_ping(conn: &RpcConn) -> Result<()> {
    emit_ping_text(conn, h::SIGNAL_TEXT).await
}

/// Emits `Ping` carrying `text`.
pub(crate) async fn emit_ping_text(conn: &RpcConn, text: &str) -> Result<()> {
    let mut sig = MessageBuilder::new()
        .signal(h::INTERFACE, h::SIGNAL, h::OBJECT_PATH)
        .build();
    sig.body.push_param(text).wire()?;
    // Returns once every byte is written.
    conn.send_msg_wo_rsp(&sig).await?;
    Ok(())
}

/// The library's match rule for `Ping` (the same rule as `h::ping_rule`).
pub(crate) fn ping_match() -> MatchRule {
    // Its queue field is private: built from the default.
    let mut rule = MatchRule::default();
    rule.path = Some(h::OBJECT_PATH.into());
    rule.interface = Some(h::INTERFACE.into());
    rule.member = Some(h::SIGNAL.into());
    rule
}

/// A connection that receives `Ping`, and `extra_rules` rules that never match.
async fn ping_receiver(t: &Transport, extra_rules: usize) -> Result<(RpcConn, MatchRule)> {
    let conn = connect(t).await?;
    let rule = ping_match();
    conn.insert_sig_match(&rule).await.context("AddMatch for Ping")?;
    for j in 0..extra_rules {
        let mut never = MatchRule::default();
        never.interface = Some(h::INTERFACE.into());
        never.member = Some(format!("NoSuchSignal{j}").into());
        conn.insert_sig_match(&never).await.context("AddMatch")?;
    }
    Ok((conn, rule))
}

/// The digest of the next `Ping`: its text.
async fn receive_ping(conn: &RpcConn, rule: &MatchRule) -> Result<u64> {
    let sig = conn.get_signal(rule).await?;
    let mut d = Digest::new();
    d.str(sig.body.parser().get().wire()?);
    Ok(d.finish())
}

// ---- the server ----

/// The served object's state (`harness::ipc`'s table).
struct Service {
    /// (service name, object path i); `ObjectRef` returns the first.
    relation_set: Vec<(String, ObjectPathBuf)>,
    items: Vec<(String, String)>,
    /// `property/get-all/<n>`'s and `objects/get-managed-objects/<n>`'s objects (`src/props.rs`).
    props: crate::props::Objects,
}

/// The library's reply to a benchmark method whose argument signature the
/// harness checked ([`standard::answer`]).
fn bench_reply(svc: &Service, call: &MarshalledMessage, member: &str) -> Result<MarshalledMessage> {
    let mut reply = call.dynheader.make_response();
    let mut p = call.body.parser();
    match member {
        "Void" => {}
        "InInt" => {
            let _: i32 = p.get().wire()?;
        }
        "OutInt" => reply.body.push_param(h::OUT_INT).wire()?,
        "InOutInt" => reply.body.push_param(p.get::<i32>().wire()?.wrapping_add(1)).wire()?,
        "InString" => {
            let _: &str = p.get().wire()?;
        }
        "OutString" => reply.body.push_param(h::OUT_STRING).wire()?,
        "InOutString" => reply.body.push_param(p.get::<&str>().wire()?).wire()?,
        "ObjectRef" => reply.body.push_param(&svc.relation_set[0]).wire()?,
        "RelationSet" => reply.body.push_param(svc.relation_set.as_slice()).wire()?,
        // `ay` both ways as one slice.
        "EchoBytes" => reply.body.push_param(p.get::<&[u8]>().wire()?).wire()?,
        other => bail!("no method {other}"),
    }
    Ok(reply)
}

/// The reply to any call: benchmark methods by async-rustbus, the standard
/// interfaces and every error as `harness::ipc::standard` says.
fn answer(svc: &Service, call: &MarshalledMessage) -> MarshalledMessage {
    let reply = if crate::fds::is_fd_call(call) {
        crate::fds::read_fd_reply(call)
    } else if let Some(reply) = svc.props.reply(call) {
        reply
    } else {
        standard_reply!(
            call,
            |p: &MessageBodyParser| p.get_next_sig() == Some(&Type::Base(Base::String)),
            SignatureBuffer::from_string,
            svc.items.as_slice(),
            |member| bench_reply(svc, call, member)
        )
    };
    reply.unwrap_or_else(|(name, message)| call.dynheader.make_error_response(name, Some(message)))
}

async fn serve_bus(transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
    let name = transport.service_name();
    // with_fd: call/fd-passing's ReadFd receives an fd.
    let conn = connect_with_fds(transport, true)
        .await
        .context("connecting to the bus")?;
    // Every path into one queue, registered before the name is public.
    conn.insert_call_path("/", CallAction::Queue)
        .await
        .map_err(|e| anyhow!("registering /: {e:?}"))?;
    ensure!(
        conn.request_name(name).await?,
        "requesting {name}: the bus did not make this connection its primary owner"
    );
    let service = Service {
        relation_set: (0..10)
            .map(|i| Ok((name.to_owned(), ObjectPathBuf::try_from(h::object_path(i)).wire()?)))
            .collect::<Result<_>>()?,
        items: h::items(),
        props: crate::props::Objects::new()?,
    };
    ready();
    loop {
        let call = conn.get_call("/").await.context("receiving a call")?;
        conn.send_msg_wo_rsp(&answer(&service, &call))
            .await
            .context("sending a reply")?;
    }
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for AsyncRustbusIpc {
    fn unsupported_ipc(&self, op: IpcOp, p2p: bool) -> Option<String> {
        match op {
            IpcOp::App(AppOp::Startup(_)) => return Some(crate::apps::NO_INTROSPECTION_PARSER.into()),
            // A library fact, on a bus and peer to peer alike (as `list` puts library facts first).
            IpcOp::Subscription(s) if crate::subscriptions::needs_arg_match(s) => {
                return Some(crate::subscriptions::NO_ARG_MATCH.into())
            }
            _ => {}
        }
        // Ops that need a bus are answered by the harness (`harness::ipc::needs_bus`).
        p2p.then(|| NO_P2P_SERVER.to_string())
    }

    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        bus_socket(transport)?;
        runtime()?.block_on(serve_bus(transport, ready))
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
        let rt = runtime()?;
        let (conn, rule) = rt.block_on(ping_receiver(transport, extra_rules))?;
        Ok(Box::new(move || rt.block_on(receive_ping(&conn, &rule))))
    }

    fn implements(&self, op: IpcOp) -> bool {
        !op.opt_in()
            || matches!(
                op,
                IpcOp::App(AppOp::InOnlyBytes(_) | AppOp::Connections(_) | AppOp::ProxyCreate(_))
            )
            || matches!(
                op,
                IpcOp::InFlight(_)
                    | IpcOp::IdleConnections(_)
                    | IpcOp::FdPassing(_)
                    | IpcOp::PropertyGetAll(_)
                    | IpcOp::ManagedObjects(_)
                    | IpcOp::Subscription(
                        SubscriptionOp::MatchChurn
                            | SubscriptionOp::Burst(_)
                            | SubscriptionOp::Delivered(_)
                            | SubscriptionOp::NameOwnerChurn(_)
                            | SubscriptionOp::PropertyStorm(_)
                    )
            )
    }

    /// `RpcConn::connect_to_path` (SASL, Hello) on the runtime all held connections share.
    fn idle_connection(&mut self, transport: &Transport) -> Result<Box<dyn std::any::Any>> {
        if self.idle_runtime.is_none() {
            self.idle_runtime = Some(Rc::new(runtime()?));
        }
        let rt = self.idle_runtime.clone().expect("just made");
        let conn = rt.block_on(connect(transport))?;
        Ok(Box::new(IdleConnection {
            _conn: conn,
            _runtime: rt,
        }))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        let rt = runtime()?;
        Ok(match op {
            IpcOp::App(a) => crate::apps::client(rt, &t, a)?,
            IpcOp::PropertyGetAll(n) => {
                let client = rt.block_on(Client::new(&t))?;
                Box::new(move || rt.block_on(client.get_all(n)))
            }
            IpcOp::ManagedObjects(n) => {
                let client = rt.block_on(Client::new(&t))?;
                Box::new(move || rt.block_on(client.managed_objects(n)))
            }
            IpcOp::FdPassing(n) => {
                let conn = rt.block_on(connect_with_fds(&t, true))?;
                let destination = t.service_name().to_owned();
                let memfd = h::fd_passing::payload_memfd(n)?;
                Box::new(move || rt.block_on(crate::fds::read_fd(&conn, &destination, &memfd)))
            }
            IpcOp::Call(m) => {
                let client = rt.block_on(Client::new(&t))?;
                Box::new(move || rt.block_on(client.method(m)))
            }
            IpcOp::EchoBytes(n) => {
                let client = rt.block_on(Client::new(&t))?;
                let payload = h::echo_payload(n);
                Box::new(move || rt.block_on(client.echo_bytes(&payload)))
            }
            IpcOp::PropertyGet | IpcOp::PropertyGetX100 => {
                let reads = if op == IpcOp::PropertyGet { 1 } else { 100 };
                let client = rt.block_on(Client::new(&t))?;
                Box::new(move || {
                    rt.block_on(async {
                        let mut d = Digest::new();
                        for _ in 0..reads {
                            client.digest_items(&mut d).await?;
                        }
                        Ok(d.finish())
                    })
                })
            }
            IpcOp::EmitReceive => {
                let tx = rt.block_on(connect(&t))?;
                let (rx, rule) = rt.block_on(ping_receiver(&t, 0))?;
                Box::new(move || {
                    rt.block_on(async {
                        emit_ping(&tx).await?;
                        receive_ping(&rx, &rule).await
                    })
                })
            }
            IpcOp::Fanout(_) | IpcOp::NonmatchingRules(_) => {
                let conn = rt.block_on(connect(&t))?;
                Box::new(move || {
                    rt.block_on(emit_ping(&conn))?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::ConnectHello => Box::new(move || {
                // Dropping the connection closes its socket.
                drop(rt.block_on(connect(&t))?);
                Ok(Digest::new().finish())
            }),
            IpcOp::ConnectMarshalSend => {
                let body = payload::mixed();
                Box::new(move || {
                    rt.block_on(async {
                        let conn = connect(&t).await?;
                        // Returns once every byte is written.
                        conn.send_msg_wo_rsp(&crate::build_signal(&body)?).await?;
                        anyhow::Ok(())
                    })?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::InFlight(n) => {
                let client = rt.block_on(Client::new(&t))?;
                Box::new(move || rt.block_on(client.in_flight(n)))
            }
            IpcOp::PropertyColdStart | IpcOp::RawSocket(_) | IpcOp::IdleConnections(_) => {
                bail!("{op:?} is not a client operation")
            }
            IpcOp::Subscription(s) => crate::subscriptions::client(rt, &t, s)?,
        })
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        runtime()?.block_on(async {
            let client = Client::new(transport).await?;
            let mut items = Vec::new();
            client
                .read_items(|id, name| items.push((id.to_owned(), name.to_owned())))
                .await?;
            Ok(items)
        })
    }
}
