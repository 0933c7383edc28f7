//! The IPC side with rustbus 0.19's blocking connections. The server is a
//! `DispatchConn` (rustbus's dispatcher for services) with one handler for
//! every path; rustbus has no object, property or introspection layer, so
//! the handler asks `harness::ipc::standard` what a call is: a benchmark
//! method with the right argument signature (answered with rustbus, as is
//! `Properties.Get` of `Items`), a standard interface (Introspect, Peer,
//! GetAll, answered with the harness's encoding) or an error. Error replies
//! are written by hand: rustbus 0.19.3 drops their ERROR_NAME field
//! ([`send_error`], docs/scenarios.md). Clients are `RpcConn`s: every call is a
//! `MessageBuilder` message sent with `send_message(..).write_all()` and
//! matched with `wait_response`; properties are read with a hand-built
//! `org.freedesktop.DBus.Properties.Get` (rustbus has no proxy and no property
//! cache: every read is a round trip). Signals are `MessageBuilder::signal`s;
//! receivers send `standard_messages::add_match` and keep only `Ping` with an
//! `RpcConn` filter, then take it with `wait_signal`.
//!
//! rustbus's `get_session_bus_path`/`get_system_bus_path` read
//! `DBUS_SESSION_BUS_ADDRESS` or use the fixed `/run/dbus/system_bus_socket`,
//! so every connection is made to the socket path the transport names
//! (`DuplexConn::connect_to_bus` / `RpcConn::connect_to_path`).
//!
//! The other families' client sides are in files of their own: apps.rs
//! (applications), props.rs (GetAll, GetManagedObjects), subscriptions.rs
//! (`IpcOp::Subscription`) and storm.rs (the property storm).

use crate::standard_reply::standard_reply;
use anyhow::{anyhow, bail, ensure, Context, Result};
use harness::ipc::{self as h, AppOp, IpcOp, Method, SubscriptionOp, Transport};
use harness::wire::{self, Value};
use harness::{payload, Digest};
use nix::sys::socket::UnixAddr;
use rustbus::connection::dispatch_conn::{HandleEnvironment, HandleError, HandleResult, Matches};
use rustbus::connection::ll_conn::force_finish_on_error;
use rustbus::connection::Timeout;
use rustbus::message_builder::{MarshalledMessage, MarshalledMessageBody, MessageBodyParser};
use rustbus::wire::errors::MarshalError;
use rustbus::wire::unmarshal::traits::Variant;
use rustbus::wire::ObjectPath;
use rustbus::{standard_messages, ByteOrder, DispatchConn, DuplexConn, MessageBuilder, MessageType, RpcConn};

/// Why `proxy/startup/<n>` (introspect, parse, build a proxy per object) cannot run here.
const NO_INTROSPECTION_PARSER: &str = "rustbus 0.19.3 has no introspection parser and no proxy type: Introspect gives the XML as a string, nothing to build a proxy from";

pub struct RustbusIpc;

const PROPERTIES: &str = "org.freedesktop.DBus.Properties";

/// Why nothing runs peer to peer: the service cannot be served there.
const NO_P2P_SERVER: &str = "rustbus 0.19.3 cannot serve a peer-to-peer connection: its auth module has only \
     the client side of SASL (do_auth, negotiate_unix_fds, send_begin; nothing answers AUTH or sends OK <guid>), \
     and DuplexConn's only constructor is DuplexConn::connect_to_bus(UnixAddr, bool), which connects and \
     authenticates as a client: there is no way to wrap an accepted UnixStream (SendConn/RecvConn fields are private)";

pub(crate) fn unix_addr(t: &Transport) -> Result<UnixAddr> {
    let socket = match t {
        Transport::Bus { socket, .. } | Transport::P2p { socket } => socket,
    };
    Ok(UnixAddr::new(socket.as_path())?)
}

/// A client connection: SASL (with unix fd negotiation) and Hello on a bus, SASL only peer to peer.
pub(crate) fn connect(t: &Transport) -> Result<RpcConn> {
    let addr = unix_addr(t)?;
    Ok(match t {
        Transport::Bus { .. } => RpcConn::connect_to_path(addr, Timeout::Infinite)?,
        Transport::P2p { .. } => RpcConn::new(DuplexConn::connect_to_bus(addr, true)?),
    })
}

/// Sends `msg` and blocks until every byte is written; returns its serial.
pub(crate) fn send(conn: &mut RpcConn, msg: &mut MarshalledMessage) -> Result<u32> {
    Ok(conn.send_message(msg)?.write_all().map_err(force_finish_on_error)?)
}

/// Sends a call and waits for its reply; an error reply is an error.
pub(crate) fn call_msg(conn: &mut RpcConn, msg: &mut MarshalledMessage) -> Result<MarshalledMessage> {
    let serial = send(conn, msg)?;
    no_error(conn.wait_response(serial, Timeout::Infinite)?)
}

/// The reply, or an error naming the error reply it is.
fn no_error(reply: MarshalledMessage) -> Result<MarshalledMessage> {
    if reply.typ == MessageType::Error || reply.dynheader.error_name.is_some() {
        let text: String = reply.body.parser().get().unwrap_or_default();
        bail!(
            "error reply {}: {text}",
            reply.dynheader.error_name.as_deref().unwrap_or("(no name)")
        );
    }
    Ok(reply)
}

/// A client of the benchmark service.
pub(crate) struct Client {
    conn: RpcConn,
    /// The service's name on a bus; none peer to peer.
    destination: Option<String>,
}

impl Client {
    pub(crate) fn new(t: &Transport) -> Result<Self> {
        Ok(Client {
            conn: connect(t)?,
            destination: match t {
                Transport::Bus { service_name, .. } => Some(service_name.clone()),
                Transport::P2p { .. } => None,
            },
        })
    }

    fn message(&self, interface: &str, member: &str) -> MarshalledMessage {
        self.message_on(h::OBJECT_PATH, interface, member)
    }

    fn message_on(&self, path: &str, interface: &str, member: &str) -> MarshalledMessage {
        let call = MessageBuilder::new().call(member).with_interface(interface).on(path);
        match &self.destination {
            Some(d) => call.at(d.as_str()).build(),
            None => call.build(),
        }
    }

    /// Calls `member` of the benchmark interface with the arguments `args` pushes.
    pub(crate) fn call(
        &mut self,
        member: &str,
        args: impl FnOnce(&mut MarshalledMessageBody) -> Result<(), MarshalError>,
    ) -> Result<MarshalledMessage> {
        let mut msg = self.message(h::INTERFACE, member);
        args(&mut msg.body)?;
        call_msg(&mut self.conn, &mut msg)
    }

    /// `call/fd-passing`: `ReadFd` with `memfd` (rustbus duplicates it into the
    /// message, sent with SCM_RIGHTS); the digest the server answers.
    fn read_fd(&mut self, memfd: &dyn std::os::fd::AsRawFd) -> Result<u64> {
        let mut msg = self.message(h::fd_passing::FD_INTERFACE, h::fd_passing::READ_FD);
        msg.body.push_param(memfd)?;
        Ok(call_msg(&mut self.conn, &mut msg)?.body.parser().get()?)
    }

    /// `property/get-all/<n>`: a plain `Properties.GetAll` call (rustbus has no proxy); the reply's digest.
    fn get_all(&mut self, n: usize) -> Result<u64> {
        let mut msg = self.message_on(&h::props::props_path(n), PROPERTIES, "GetAll");
        msg.body.push_param(h::props::PROPS_INTERFACE)?;
        crate::props::get_all_digest(&call_msg(&mut self.conn, &mut msg)?)
    }

    /// `objects/get-managed-objects/<n>`: a plain `ObjectManager.GetManagedObjects` call; the reply's digest.
    fn managed_objects(&mut self, n: usize) -> Result<u64> {
        let mut msg = self.message_on(
            &h::props::objects_path(n),
            h::props::OBJECT_MANAGER_INTERFACE,
            "GetManagedObjects",
        );
        crate::props::managed_objects_digest(&call_msg(&mut self.conn, &mut msg)?)
    }

    /// `Properties.Get(INTERFACE, "Items")`, digested (rustbus's way: a plain call, the variant read from the reply).
    fn read_items(&mut self, d: &mut Digest) -> Result<()> {
        let mut msg = self.message(PROPERTIES, "Get");
        msg.body.push_param2(h::INTERFACE, h::PROPERTY)?;
        let reply = call_msg(&mut self.conn, &mut msg)?;
        let v: Variant = reply.body.parser().get()?;
        let items: Vec<(&str, &str)> = v.get()?;
        for (a, b) in &items {
            d.str(a);
            d.str(b);
        }
        d.len(items.len());
        Ok(())
    }

    /// `call/in-flight/<n>`: every `InOutInt` written first, then each reply
    /// taken by its serial (`RpcConn` keeps replies that arrive for other serials).
    fn in_flight(&mut self, n: usize) -> Result<u64> {
        let mut serials = Vec::with_capacity(n);
        for i in 0..n {
            let mut msg = self.message(h::INTERFACE, "InOutInt");
            msg.body.push_param(h::in_flight_arg(i))?;
            serials.push(send(&mut self.conn, &mut msg)?);
        }
        let mut replies = Vec::with_capacity(n);
        for serial in serials {
            let reply = no_error(self.conn.wait_response(serial, Timeout::Infinite)?)?;
            replies.push(reply.body.parser().get::<i32>()?);
        }
        Ok(h::in_flight_digest(replies))
    }

    fn items(&mut self) -> Result<Vec<(String, String)>> {
        let mut msg = self.message(PROPERTIES, "Get");
        msg.body.push_param2(h::INTERFACE, h::PROPERTY)?;
        let reply = call_msg(&mut self.conn, &mut msg)?;
        let v: Variant = reply.body.parser().get()?;
        Ok(v.get()?)
    }

    fn method(&mut self, m: Method) -> Result<u64> {
        let mut d = Digest::new();
        let member = m.member();
        let reply = match m {
            Method::InInt | Method::InOutInt => self.call(member, |b| b.push_param(h::IN_INT))?,
            Method::InString => self.call(member, |b| b.push_param(h::IN_STRING))?,
            Method::InOutString => self.call(member, |b| b.push_param(h::OUT_STRING))?,
            _ => self.call(member, |_| Ok(()))?,
        };
        let mut p = reply.body.parser();
        match m {
            Method::Void | Method::InInt | Method::InString => {}
            Method::OutInt | Method::InOutInt => d.i32(p.get()?),
            Method::OutString | Method::InOutString => d.str(p.get()?),
            Method::ObjectRef => {
                let (name, path): (&str, ObjectPath<&str>) = p.get()?;
                d.str(name);
                d.str(path.as_ref());
            }
            Method::RelationSet => {
                let set: Vec<(&str, ObjectPath<&str>)> = p.get()?;
                for (name, path) in &set {
                    d.str(name);
                    d.str(path.as_ref());
                }
                d.len(set.len());
            }
        }
        ensure!(p.get_next_sig().is_none(), "the reply has more arguments than expected");
        Ok(d.finish())
    }
}

fn emit_ping(conn: &mut RpcConn) -> Result<()> {
    emit_ping_text(conn, h::SIGNAL_TEXT)
}

pub(crate) fn emit_ping_text(conn: &mut RpcConn, text: &str) -> Result<()> {
    let mut sig = MessageBuilder::new()
        .signal(h::INTERFACE, h::SIGNAL, h::OBJECT_PATH)
        .build();
    sig.body.push_param(text)?;
    send(conn, &mut sig)?;
    Ok(())
}

/// Installs a match rule and waits until the bus has it.
pub(crate) fn add_match(conn: &mut RpcConn, rule: &str) -> Result<()> {
    call_msg(conn, &mut standard_messages::add_match(rule)).with_context(|| format!("AddMatch {rule}"))?;
    Ok(())
}

/// A connection that receives `Ping`: the match rule on the bus, and an
/// `RpcConn` filter that drops every other signal (NameAcquired after Hello).
pub(crate) fn ping_receiver(t: &Transport) -> Result<RpcConn> {
    ping_receiver_with(t, &h::ping_rule())
}

/// [`ping_receiver`] with another rule on the bus (`signal/delivered/<scope>`).
pub(crate) fn ping_receiver_with(t: &Transport, rule: &str) -> Result<RpcConn> {
    let mut conn = connect(t)?;
    conn.set_filter(Box::new(|msg| match msg.typ {
        MessageType::Signal => {
            msg.dynheader.interface.as_deref() == Some(h::INTERFACE)
                && msg.dynheader.member.as_deref() == Some(h::SIGNAL)
        }
        _ => true,
    }));
    add_match(&mut conn, rule)?;
    Ok(conn)
}

/// The digest of the next `Ping`: its text.
fn receive_ping(conn: &mut RpcConn) -> Result<u64> {
    let sig = conn.wait_signal(Timeout::Infinite)?;
    let mut d = Digest::new();
    d.str(sig.body.parser().get()?);
    Ok(d.finish())
}

// ---- the server ----

/// The served object's state (`harness::ipc`'s table).
struct Service {
    /// (service name, object path i); `ObjectRef` returns the first.
    relation_set: Vec<(String, ObjectPath<String>)>,
    items: Vec<(String, String)>,
    /// `property/get-all` and `objects/get-managed-objects` (bus only: see `NO_P2P_SERVER`).
    props: crate::props::Objects,
}

/// What the dispatcher's handlers return when nothing is left for the
/// dispatcher to send: the message was not a call, or the handler wrote an
/// error reply itself ([`send_error`]).
#[derive(Debug)]
struct NoReply;

type Env<'a> = HandleEnvironment<Service, NoReply>;

/// The library's reply to a benchmark method whose argument signature the
/// harness checked ([`standard::answer`]).
fn bench_reply(svc: &Service, call: &MarshalledMessage, member: &str) -> Result<MarshalledMessage> {
    let mut reply = call.dynheader.make_response();
    let mut p = call.body.parser();
    match member {
        "Void" => {}
        "InInt" => {
            let _: i32 = p.get()?;
        }
        "OutInt" => reply.body.push_param(h::OUT_INT)?,
        "InOutInt" => reply.body.push_param(p.get::<i32>()? + 1)?,
        "InString" => {
            let _: &str = p.get()?;
        }
        "OutString" => reply.body.push_param(h::OUT_STRING)?,
        "InOutString" => reply.body.push_param(p.get::<&str>()?)?,
        "ObjectRef" => reply.body.push_param(&svc.relation_set[0])?,
        "RelationSet" => reply.body.push_param(svc.relation_set.as_slice())?,
        // `ay` both ways as one slice (rustbus's byte-array paths).
        "EchoBytes" => reply.body.push_param(p.get::<&[u8]>()?)?,
        other => bail!("no method {other}"),
    }
    Ok(reply)
}

/// Writes an error reply with its ERROR_NAME header field. rustbus 0.19.3
/// cannot: `wire::marshal::marshal_header` writes no ERROR_NAME field whatever
/// `dynheader.error_name` holds, and a bus disconnects a connection that sends
/// an error without one. So the message is encoded by the harness's reference
/// encoder and written to the connection's socket while its `SendConn` is
/// locked (the dispatcher writes every message whole, so none is half-sent).
fn send_error(env: &Env, call: &MarshalledMessage, name: &str, message: &str) -> Result<()> {
    use std::io::Write;
    use std::os::fd::{AsRawFd, BorrowedFd};
    let hdr = &call.dynheader;
    let reply_serial = hdr.serial.context("a call without a serial")?;
    let mut fields = vec![
        (wire::FIELD_REPLY_SERIAL, Value::U32(reply_serial)),
        (wire::FIELD_ERROR_NAME, Value::Str(name.to_owned())),
    ];
    if let Some(sender) = &hdr.sender {
        fields.push((wire::FIELD_DESTINATION, Value::Str(sender.clone())));
    }
    fields.push((wire::FIELD_SIGNATURE, Value::Signature("s".into())));
    let mut conn = env
        .conn
        .lock()
        .map_err(|_| anyhow!("the send connection's lock is poisoned"))?;
    let serial = conn.alloc_serial();
    let bytes = wire::encode_message(
        wire::MESSAGE_ERROR,
        0,
        serial,
        &fields,
        &[Value::Str(message.to_owned())],
    );
    // SAFETY: the fd belongs to `conn`, which stays locked (and open) until the copy is written and closed.
    let fd = unsafe { BorrowedFd::borrow_raw(conn.as_raw_fd()) };
    let mut socket = std::os::unix::net::UnixStream::from(fd.try_clone_to_owned()?);
    socket.write_all(&bytes).context("writing an error reply")?;
    Ok(())
}

/// Every message to this connection: calls are answered (benchmark methods by
/// rustbus, the standard interfaces and every error as `harness::ipc::standard`
/// says), anything else is dropped. Never fails on what a client sends.
fn handle(svc: &mut Service, _: Matches, msg: &MarshalledMessage, env: &mut Env) -> HandleResult<NoReply> {
    if msg.typ != MessageType::Call {
        return Err(HandleError::User(NoReply));
    }
    let reply = if crate::fds::is_fd_call(msg) {
        crate::fds::read_fd_reply(msg)
    } else if let Some(reply) = svc.props.reply(msg) {
        reply
    } else {
        standard_reply!(
            msg,
            |p: &MessageBodyParser| p.get_next_sig() == Some("s"),
            |signature: String| signature,
            svc.items.as_slice(),
            |member| bench_reply(svc, msg, member)
        )
    };
    match reply {
        Ok(reply) => Ok(Some(reply)),
        Err((name, message)) => {
            if let Err(e) = send_error(env, msg, name, &message) {
                eprintln!("could not send the error reply {name}: {e:#}");
            }
            Err(HandleError::User(NoReply))
        }
    }
}

fn serve_bus(socket: &std::path::Path, service_name: &str, ready: &mut dyn FnMut()) -> Result<()> {
    // with_unix_fd: call/fd-passing's ReadFd receives an fd.
    let mut conn = DuplexConn::connect_to_bus(UnixAddr::new(socket)?, true).context("connecting to the bus")?;
    conn.send_hello(Timeout::Infinite).context("Hello")?;
    let serial = conn.send.send_message_write_all(&standard_messages::request_name(
        service_name,
        standard_messages::DBUS_NAME_FLAG_DO_NOT_QUEUE,
    ))?;
    // Signals (NameAcquired) arriving before the reply are dropped.
    loop {
        let msg = conn.recv.get_next_message(Timeout::Infinite)?;
        if msg.dynheader.response_serial != Some(serial) {
            continue;
        }
        ensure!(
            msg.typ == MessageType::Reply && msg.dynheader.error_name.is_none(),
            "requesting {service_name}: {:?}",
            msg.dynheader.error_name
        );
        let code: u32 = msg.body.parser().get()?;
        ensure!(
            code == standard_messages::DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER,
            "requesting {service_name}: reply {code}"
        );
        break;
    }
    let service = Service {
        relation_set: (0..10)
            .map(|i| Ok((service_name.to_owned(), ObjectPath::new(h::object_path(i))?)))
            .collect::<Result<_>>()?,
        items: h::items(),
        props: crate::props::Objects::new()?,
    };
    // One handler for every path: the standard interfaces answer on the object's ancestors too.
    let mut dispatch = DispatchConn::new(conn, service, Box::new(handle));
    ready();
    loop {
        // `run` returns on every handler error: ours mean "nothing to send", so it is re-entered.
        match dispatch.run() {
            Err((_, HandleError::User(NoReply))) => continue,
            Err((msg, e)) => bail!("serving failed: {e:?} (message {msg:?})"),
            Ok(()) => unreachable!("DispatchConn::run returns only on error"),
        }
    }
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for RustbusIpc {
    fn unsupported_ipc(&self, op: IpcOp, p2p: bool) -> Option<String> {
        if matches!(op, IpcOp::App(AppOp::Startup(_))) {
            return Some(NO_INTROSPECTION_PARSER.into());
        }
        if !p2p {
            return None;
        }
        // Ops that need a bus are answered by the harness (`harness::ipc::needs_bus`).
        Some(NO_P2P_SERVER.into())
    }

    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        match transport {
            Transport::Bus {
                socket, service_name, ..
            } => serve_bus(socket, service_name, ready),
            Transport::P2p { .. } => bail!("{NO_P2P_SERVER}"),
        }
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
        let mut conn = ping_receiver(transport)?;
        for j in 0..extra_rules {
            add_match(&mut conn, &h::nonmatching_rule(j))?;
        }
        Ok(Box::new(move || receive_ping(&mut conn)))
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

    /// `RpcConn::connect_to_path` (SASL, Hello); dropping it closes the socket.
    fn idle_connection(&mut self, transport: &Transport) -> Result<Box<dyn std::any::Any>> {
        Ok(Box::new(connect(transport)?))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        Ok(match op {
            IpcOp::App(a) => crate::apps::client(&t, a)?,
            IpcOp::PropertyGetAll(n) => {
                let mut client = Client::new(&t)?;
                Box::new(move || client.get_all(n))
            }
            IpcOp::ManagedObjects(n) => {
                let mut client = Client::new(&t)?;
                Box::new(move || client.managed_objects(n))
            }
            IpcOp::FdPassing(n) => {
                let mut client = Client::new(&t)?;
                let memfd = h::fd_passing::payload_memfd(n)?;
                Box::new(move || client.read_fd(&memfd))
            }
            IpcOp::Call(m) => {
                let mut client = Client::new(&t)?;
                Box::new(move || client.method(m))
            }
            IpcOp::EchoBytes(n) => {
                let mut client = Client::new(&t)?;
                let payload = h::echo_payload(n);
                Box::new(move || {
                    let reply = client.call("EchoBytes", |b| b.push_param(payload.as_slice()))?;
                    let mut d = Digest::new();
                    d.bytes(reply.body.parser().get::<&[u8]>()?);
                    Ok(d.finish())
                })
            }
            IpcOp::PropertyGet | IpcOp::PropertyGetX100 => {
                let reads = if op == IpcOp::PropertyGet { 1 } else { 100 };
                let mut client = Client::new(&t)?;
                Box::new(move || {
                    let mut d = Digest::new();
                    for _ in 0..reads {
                        client.read_items(&mut d)?;
                    }
                    Ok(d.finish())
                })
            }
            IpcOp::EmitReceive => {
                let mut tx = connect(&t)?;
                let mut rx = ping_receiver(&t)?;
                Box::new(move || {
                    emit_ping(&mut tx)?;
                    receive_ping(&mut rx)
                })
            }
            IpcOp::Fanout(_) | IpcOp::NonmatchingRules(_) => {
                let mut conn = connect(&t)?;
                Box::new(move || {
                    emit_ping(&mut conn)?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::ConnectHello => Box::new(move || {
                // Dropping the connection closes its socket.
                drop(connect(&t)?);
                Ok(Digest::new().finish())
            }),
            IpcOp::ConnectMarshalSend => {
                let body = payload::mixed();
                Box::new(move || {
                    let mut conn = connect(&t)?;
                    let mut msg = crate::build_signal(&body)?;
                    send(&mut conn, &mut msg)?; // write_all: every byte is on the socket
                    drop(conn);
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::InFlight(n) => {
                let mut client = Client::new(&t)?;
                Box::new(move || client.in_flight(n))
            }
            IpcOp::Subscription(s) => crate::subscriptions::client(&t, s)?,
            IpcOp::PropertyColdStart | IpcOp::RawSocket(_) | IpcOp::IdleConnections(_) => {
                bail!("{op:?} is not a client operation")
            }
        })
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        Client::new(transport)?.items()
    }
}
