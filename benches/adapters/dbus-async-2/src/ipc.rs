//! The IPC side through dbus-async 2.0. A connection is `DBus::new(address)`
//! (SASL EXTERNAL and Hello, all async), whose connection, reader and writer
//! tasks run on a Tokio 0.3 runtime. Server: the benchmark object implements
//! dbus-async's `Handler` trait and is run by its `Binder::bind_by_receiver`
//! on the channel that `add_method_call` (the object path) and
//! `add_method_call_interface` (Introspectable and Peer, for every path) feed;
//! dbus-async has no object layer (no introspection data, properties or Peer),
//! so the handler asks `harness::ipc::standard` what each call is. Client:
//! dbus-message-parser `Message`s sent with `DBus::call` (no proxy, no
//! property cache: every read is a `Properties.Get` round trip). Signals:
//! `AddMatch` called by hand and `add_signal` (a channel of the signals of one
//! object path, with a filter function).
//!
//! Peer to peer is not possible: dbus-async can only be a client of a bus.

use std::collections::BTreeSet;

use anyhow::{anyhow, bail, ensure, Context, Result};
use async_trait::async_trait;
use dbus_async::{Binder, DBus, DBusNameFlag, DBusResult, Handler};
use dbus_message_parser::{
    Bus, Decoder, Error as ErrorName, Interface, Member, Message, MessageFlags, MessageHeader, MessageHeaderField,
    MessageType, ObjectPath, Value,
};
use futures::channel::mpsc;
use futures::StreamExt;
use harness::ipc::proxied as px;
use harness::ipc::standard::{self, Answer};
use harness::ipc::{self as h, IpcOp, Method, Transport};
use harness::{payload, Digest};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

use crate::dbus_name;

pub const RUNTIME: &str = "tokio 0.3 multi-thread runtime with 1 worker thread (dbus-async's connection, reader \
     and writer tasks run there); the calling thread waits in block_on, client and server alike";

const NO_P2P_SERVER: &str = "dbus-async 2.0.0 can only be a bus client: DBus::new connects to an address, \
     authenticates as a SASL client (AUTH EXTERNAL) and always calls Hello; it has no listener, no server side \
     of SASL and no constructor from an accepted socket";

/// `EchoBytes` sizes from which reading the message takes longer than a bus waits for a reply.
const QUADRATIC_READS_FROM: usize = 131072;

const NO_LARGE_MESSAGES: &str = "dbus-async 2.0.0 reads its socket 128 bytes at a time and decodes the whole \
     buffered message again after every read (message_stream), so receiving a message costs time quadratic in \
     its size: with `ay` decoded as one Value per byte, a 128 KiB EchoBytes took 69 s on dbus-broker and outlived \
     dbus-daemon's 25 s reply timeout, and 1 MiB did not finish in 300 s (measured in a smoke run); 32 KiB takes \
     about 0.1 s a call";

/// Why the reading side of a dbus-async connection dies (the start of a reason).
const READER_STOPS: &str = "dbus-async 2.0.0's reader task (message_stream) returns for good at the first message \
     dbus-message-parser 3.1 cannot decode, and 3.1 rejects a message without a body that carries a SIGNATURE \
     header field (DecodeError::BodySignatureMissing, although the empty signature is valid D-Bus):";

/// Why `connect/idle-connections/<n>` (open n, hold them, close them before the next batch) cannot run.
const NO_CLOSE: &str = "dbus-async 2.0.0 cannot close a connection without leaving its reader task spinning: \
     message_stream (src/message.rs) loops on a read of 0 bytes at end of file and never returns, and it holds a \
     command sender, so the connection task lives on too. Each batch closed by DBus::close leaves its readers busy \
     on the runtime's worker, and the next batch connects among them (measured, smoke 2026-11-28: 10 connections \
     took 512 ms a batch on dbus-daemon and 312 ms on busd, 100 did not finish in 300 s on either; dbus-broker, \
     which keeps a half-closed socket open, 0.13 to 0.2 ms a connection). Left open instead (no close), 10 took \
     1.7 ms a batch on dbus-daemon, but the batches pile up on the bus until Hello gets \
     org.freedesktop.DBus.Error.LimitsExceeded (dbus-daemon: max_completed_connections=2048)";

/// Why `proxy/startup/<n>` (introspect, parse, build a proxy per object) cannot run here.
const NO_INTROSPECTION_PARSER: &str = "dbus-async 2.0.0 has no introspection parser and no proxy type: its only \
     introspection code (src/introspect.rs) answers Introspect for the connection's own registered paths by \
     formatting `<node name=\"..\"/>` lines; it has no crate features, and neither it nor dbus-message-parser 3.1 \
     depends on an XML parser, so an Introspect reply is a string with nothing to build a proxy from";

const INTROSPECTABLE: &str = "org.freedesktop.DBus.Introspectable";
const PEER: &str = "org.freedesktop.DBus.Peer";

/// The runtime is made on first use (the codec commands never need it).
#[derive(Default)]
pub struct DbusAsyncIpc {
    runtime: Option<Runtime>,
}

impl DbusAsyncIpc {
    fn runtime(&mut self) -> Result<&Runtime> {
        if self.runtime.is_none() {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_io()
                .build()
                .context("building the Tokio 0.3 runtime")?;
            self.runtime = Some(rt);
        }
        Ok(self.runtime.as_ref().expect("just made"))
    }
}

fn error(e: dbus_async::DBusError) -> anyhow::Error {
    anyhow!("dbus-async: {e:?}")
}

/// A connection and its connection task.
struct Conn {
    dbus: DBus,
    task: JoinHandle<()>,
}

impl Conn {
    /// `DBus::close` and the end of the connection task (the writer then
    /// drains what is queued and closes its half of the socket).
    async fn close(self) -> Result<()> {
        self.dbus.close().map_err(error)?;
        self.task.await.context("the connection task")?;
        Ok(())
    }
}

async fn connect(t: &Transport) -> Result<Conn> {
    let Transport::Bus { address, .. } = t else {
        bail!("{NO_P2P_SERVER}");
    };
    let (dbus, task) = DBus::new(address, false).await.map_err(error)?;
    Ok(Conn { dbus, task })
}

/// The reply to `msg`, or the error reply as an error.
async fn call(dbus: &DBus, msg: Message) -> Result<Message> {
    let reply = dbus.call(msg).await.map_err(error)?;
    if reply.get_type() == MessageType::Error {
        bail!(
            "error reply {}: {:?}",
            reply.get_error_name().map(|e| e.as_str()).unwrap_or("(no name)"),
            reply.get_body()
        );
    }
    Ok(reply)
}

fn method_call(t: &Transport, interface: &str, member: &str) -> Result<Message> {
    Ok(Message::method_call(
        dbus_name::<Bus>(t.service_name())?,
        dbus_name::<ObjectPath>(h::OBJECT_PATH)?,
        dbus_name::<Interface>(interface)?,
        dbus_name::<Member>(member)?,
    ))
}

/// A call to `org.freedesktop.DBus` (the bus itself).
fn bus_call(member: &str) -> Result<Message> {
    Ok(Message::method_call(
        dbus_name::<Bus>("org.freedesktop.DBus")?,
        dbus_name::<ObjectPath>("/org/freedesktop/DBus")?,
        dbus_name::<Interface>("org.freedesktop.DBus")?,
        dbus_name::<Member>(member)?,
    ))
}

fn string(v: Option<&Value>) -> Result<&str> {
    match v {
        Some(Value::String(s)) => Ok(s),
        other => bail!("expected a string, got {other:?}"),
    }
}

fn digest_object_ref(d: &mut Digest, v: &Value) -> Result<()> {
    let Value::Struct(fields) = v else {
        bail!("expected (so), got {v:?}")
    };
    let [Value::String(name), Value::ObjectPath(path)] = fields.as_slice() else {
        bail!("expected (so), got {fields:?}")
    };
    d.str(name);
    d.str(path.as_str());
    Ok(())
}

async fn bench_call(dbus: &DBus, t: &Transport, m: Method) -> Result<u64> {
    let mut msg = method_call(t, h::INTERFACE, m.member())?;
    match m {
        Method::InInt | Method::InOutInt => msg.add_value(Value::Int32(h::IN_INT)),
        Method::InString => msg.add_value(Value::String(h::IN_STRING.into())),
        Method::InOutString => msg.add_value(Value::String(h::OUT_STRING.into())),
        _ => {}
    }
    let reply = call(dbus, msg).await?;
    let body = reply.get_body();
    let mut d = Digest::new();
    match m {
        Method::Void | Method::InInt | Method::InString => ensure!(body.is_empty(), "expected no values"),
        Method::OutInt | Method::InOutInt => {
            let [Value::Int32(x)] = body else {
                bail!("expected i, got {body:?}")
            };
            d.i32(*x);
        }
        Method::OutString | Method::InOutString => d.str(string(body.first())?),
        Method::ObjectRef => digest_object_ref(&mut d, body.first().context("no value")?)?,
        Method::RelationSet => {
            let [Value::Array(set, _)] = body else {
                bail!("expected a(so), got {body:?}")
            };
            for r in set {
                digest_object_ref(&mut d, r)?;
            }
            d.len(set.len());
        }
    }
    Ok(d.finish())
}

async fn echo_bytes(dbus: &DBus, t: &Transport, payload: &[u8]) -> Result<u64> {
    let mut msg = method_call(t, h::INTERFACE, h::ECHO_BYTES)?;
    // dbus-message-parser has no byte-array value: `ay` is an array of `Byte`s.
    msg.add_value(Value::Array(
        payload.iter().map(|b| Value::Byte(*b)).collect(),
        "y".into(),
    ));
    let reply = call(dbus, msg).await?;
    let [Value::Array(bytes, _)] = reply.get_body() else {
        bail!("expected ay")
    };
    let bytes = bytes
        .iter()
        .map(|b| match b {
            Value::Byte(b) => Ok(*b),
            other => bail!("expected a byte, got {other:?}"),
        })
        .collect::<Result<Vec<u8>>>()?;
    let mut d = Digest::new();
    d.bytes(&bytes);
    Ok(d.finish())
}

/// `Properties.Get(INTERFACE, Items)`.
async fn get_items(dbus: &DBus, t: &Transport) -> Result<Vec<(String, String)>> {
    let msg = Message::property_get(
        dbus_name::<Bus>(t.service_name())?,
        dbus_name::<ObjectPath>(h::OBJECT_PATH)?,
        h::INTERFACE,
        h::PROPERTY,
    );
    let reply = call(dbus, msg).await?;
    let [Value::Variant(v)] = reply.get_body() else {
        bail!("expected a variant")
    };
    let Value::Array(items, _) = v.as_ref() else {
        bail!("expected a(ss), got {v:?}")
    };
    items
        .iter()
        .map(|item| match item {
            Value::Struct(f) => match f.as_slice() {
                [Value::String(a), Value::String(b)] => Ok((a.clone(), b.clone())),
                other => bail!("expected (ss), got {other:?}"),
            },
            other => bail!("expected (ss), got {other:?}"),
        })
        .collect()
}

fn digest_items(d: &mut Digest, items: &[(String, String)]) {
    for (a, b) in items {
        d.str(a);
        d.str(b);
    }
    d.len(items.len());
}

/// Keeps a signal that is not `Ping` out of the channel (true = drop it).
fn not_ping(msg: &Message) -> bool {
    msg.get_member().map(|m| m.as_str()) != Some(h::SIGNAL)
        || msg.get_interface().map(|i| i.as_str()) != Some(h::INTERFACE)
}

async fn add_match(dbus: &DBus, rule: String) -> Result<()> {
    let mut msg = bus_call("AddMatch")?;
    msg.add_value(Value::String(rule));
    call(dbus, msg).await.context("AddMatch")?;
    Ok(())
}

/// The `Ping`s of the object path: AddMatch on the bus and an `add_signal` channel.
async fn subscribe_ping(dbus: &DBus) -> Result<mpsc::Receiver<Message>> {
    add_match(dbus, h::ping_rule()).await?;
    let (sender, receiver) = mpsc::channel(1024);
    dbus.add_signal(dbus_name::<ObjectPath>(h::OBJECT_PATH)?, Some(not_ping), sender)
        .map_err(error)?;
    Ok(receiver)
}

async fn next_ping(receiver: &mut mpsc::Receiver<Message>) -> Result<u64> {
    let msg = receiver.next().await.context("the signal channel closed")?;
    let mut d = Digest::new();
    d.str(string(msg.get_body().first())?);
    Ok(d.finish())
}

fn ping() -> Result<Message> {
    let mut msg = Message::signal(
        dbus_name::<ObjectPath>(h::OBJECT_PATH)?,
        dbus_name::<Interface>(h::INTERFACE)?,
        dbus_name::<Member>(h::SIGNAL)?,
    );
    msg.add_value(Value::String(h::SIGNAL_TEXT.into()));
    Ok(msg)
}

// ---- the server ----

/// The served object (`harness::ipc`'s table).
struct BenchService {
    relation_set: Vec<Value>,
    items: Value,
}

impl BenchService {
    fn new(service_name: &str) -> Result<Self> {
        let relation_set = (0..10)
            .map(|i| {
                Ok(Value::Struct(vec![
                    Value::String(service_name.into()),
                    Value::ObjectPath(dbus_name::<ObjectPath>(&h::object_path(i))?),
                ]))
            })
            .collect::<Result<Vec<_>>>()?;
        let items = h::items()
            .into_iter()
            .map(|(a, b)| Value::Struct(vec![Value::String(a), Value::String(b)]))
            .collect();
        Ok(BenchService {
            relation_set,
            items: Value::Variant(Box::new(Value::Array(items, "(ss)".into()))),
        })
    }

    /// The reply values of a benchmark method whose argument signature the harness checked.
    fn bench_reply(&self, member: &str, args: &[Value]) -> Result<Vec<Value>> {
        Ok(match (member, args) {
            ("Void" | "InInt" | "InString", _) => vec![],
            ("OutInt", _) => vec![Value::Int32(h::OUT_INT)],
            ("InOutInt", [Value::Int32(v)]) => vec![Value::Int32(v + 1)],
            ("OutString", _) => vec![Value::String(h::OUT_STRING.into())],
            ("InOutString", [v @ Value::String(_)]) => vec![v.clone()],
            ("ObjectRef", _) => vec![self.relation_set[0].clone()],
            ("RelationSet", _) => vec![Value::Array(self.relation_set.clone(), "(so)".into())],
            ("EchoBytes", [v @ Value::Array(..)]) => vec![v.clone()],
            (other, args) => bail!("{other} with {args:?}"),
        })
    }

    /// The answer to a method call: a reply or an error reply.
    fn answer(&self, msg: &Message) -> Result<Message> {
        let call = standard::Call {
            path: msg.get_path().map(|p| p.as_str()).unwrap_or("/"),
            interface: msg.get_interface().map(|i| i.as_str()),
            member: msg.get_member().map(|m| m.as_str()).unwrap_or_default(),
            signature: &msg.get_signature(),
        };
        let mut string_args = || -> Result<Vec<String>, String> {
            Ok(msg
                .get_body()
                .iter()
                .map_while(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    _ => None,
                })
                .collect())
        };
        let values = match standard::answer(&call, &mut string_args) {
            Answer::Bench(member) => self.bench_reply(member, msg.get_body()),
            Answer::ItemsProperty => Ok(vec![self.items.clone()]),
            // The harness's encoding of a standard reply, decoded into the library's values.
            Answer::Reply { signature, body } => Decoder::new(&body)
                .value(true, &signature)
                .map_err(|e| anyhow!("decoding the harness's {signature}: {e:?}")),
            Answer::Error { name, message } => return reply_to(msg, Some(name), vec![Value::String(message)]),
        };
        match values {
            Ok(values) => reply_to(msg, None, values),
            Err(e) => reply_to(msg, Some(standard::FAILED), vec![Value::String(format!("{e:#}"))]),
        }
    }
}

/// A method return (`error_name` None) or an error reply to `call`. Not
/// dbus-message-parser 3.1's `method_return()`/`error()`: they copy the call's
/// DESTINATION (the well-known name) into the reply's SENDER field, and busd
/// disconnects a peer whose SENDER is not its unique name ("Invalid unique
/// name"; dbus-daemon and dbus-broker overwrite the field).
fn reply_to(call: &Message, error_name: Option<&str>, values: Vec<Value>) -> Result<Message> {
    let mut fields = BTreeSet::new();
    fields.insert(MessageHeaderField::ReplySerial(call.get_serial()));
    if let Some(sender) = call.get_sender() {
        fields.insert(MessageHeaderField::Destination(sender.clone()));
    }
    let message_type = match error_name {
        Some(name) => {
            fields.insert(MessageHeaderField::ErrorName(dbus_name::<ErrorName>(name)?));
            MessageType::Error
        }
        None => MessageType::MethodReturn,
    };
    // Serial 0: dbus-async numbers every message it sends.
    let header = MessageHeader::new(true, message_type, MessageFlags::NO_REPLY_EXPECTED, 1, 0, fields)
        .map_err(|e| anyhow!("a reply header: {e:?}"))?;
    Ok(Message::new(header, values))
}

#[async_trait]
impl Handler for BenchService {
    /// Never fails on what a client sends: only when the connection is gone.
    async fn handle(&mut self, dbus: &DBus, msg: Message) -> DBusResult<()> {
        if msg.get_type() != MessageType::MethodCall {
            return Ok(());
        }
        match self.answer(&msg) {
            Ok(reply) => dbus.send(reply),
            Err(e) => {
                eprintln!("no answer to {msg:?}: {e:#}");
                Ok(())
            }
        }
    }
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for DbusAsyncIpc {
    fn unsupported_ipc(&self, op: IpcOp, p2p: bool) -> Option<String> {
        if p2p {
            // Ops that need a bus are answered by the harness (`harness::ipc::needs_bus`).
            return Some(NO_P2P_SERVER.into());
        }
        match op {
            IpcOp::EchoBytes(n) if n >= QUADRATIC_READS_FROM => Some(NO_LARGE_MESSAGES.into()),
            IpcOp::Call(_)
            | IpcOp::EchoBytes(_)
            | IpcOp::InFlight(_)
            | IpcOp::FdPassing(_)
            | IpcOp::PropertyGet
            | IpcOp::PropertyGetX100
            | IpcOp::PropertyColdStart
            | IpcOp::PropertyGetAll(_)
            | IpcOp::ManagedObjects(_)
            | IpcOp::App(harness::ipc::AppOp::Connections(_) | harness::ipc::AppOp::InOnlyBytes(_)) => {
                Some(format!("{READER_STOPS} GDBus writes one on every call without arguments (gdbus call, Introspect from \
                     GLib clients): the server stops answering anyone, so dbus-async cannot serve the benchmark service"))
            }
            IpcOp::EmitReceive | IpcOp::Fanout(_) | IpcOp::NonmatchingRules(_) | IpcOp::Subscription(_) => Some(format!(
                "{READER_STOPS} dbus-broker writes one in its empty replies (AddMatch): a subscriber never \
                 sees its AddMatch answered on dbus-broker (measured: subscribers not ready after 120 s)"
            )),
            IpcOp::App(harness::ipc::AppOp::Startup(_)) => Some(NO_INTROSPECTION_PARSER.into()),
            IpcOp::IdleConnections(_) => Some(NO_CLOSE.into()),
            IpcOp::ConnectHello | IpcOp::ConnectMarshalSend | IpcOp::RawSocket(_) => None,
            // The harness's raw server writes no SIGNATURE field into an empty reply (raw_server.rs), so
            // `Void`'s reply passes dbus-message-parser 3.1; nothing here asks the bus for an empty reply.
            IpcOp::App(harness::ipc::AppOp::ProxyCreate(_)) => None,
        }
    }

    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        let Transport::Bus { service_name, .. } = transport else {
            bail!("{NO_P2P_SERVER}");
        };
        self.runtime()?.block_on(async {
            let conn = connect(transport).await.context("connecting the server to the bus")?;
            let dbus = conn.dbus.clone();
            // Neither allow nor take a replacement; DO_NOT_QUEUE: 3 (`Exists`) when owned.
            let reply = dbus
                .register_name(service_name.clone(), &DBusNameFlag::DO_NOT_QUEUE)
                .await
                .map_err(error)?;
            ensure!(
                matches!(reply.get_body(), [Value::Uint32(1)]),
                "requesting {service_name}: {reply:?}"
            );
            // One channel for the object's calls and the standard interfaces on any path.
            let (sender, receiver) = mpsc::channel(1024);
            dbus.add_method_call(dbus_name::<ObjectPath>(h::OBJECT_PATH)?, sender.clone())
                .map_err(error)?;
            for interface in [INTROSPECTABLE, PEER] {
                dbus.add_method_call_interface(dbus_name::<Interface>(interface)?, sender.clone())
                    .map_err(error)?;
            }
            let service = BenchService::new(service_name)?;
            ready();
            // Registrations and incoming calls go through one command queue: in order.
            service.bind_by_receiver(dbus, receiver).await.map_err(error)?;
            drop(conn);
            bail!("the method call channel closed")
        })
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
        // The returned closure owns the runtime that drives its connection.
        let mut this = DbusAsyncIpc {
            runtime: self.runtime.take(),
        };
        let (conn, mut receiver) = this.runtime()?.block_on(async {
            let conn = connect(transport).await?;
            let receiver = subscribe_ping(&conn.dbus).await?;
            for j in 0..extra_rules {
                add_match(&conn.dbus, h::nonmatching_rule(j)).await?;
            }
            anyhow::Ok((conn, receiver))
        })?;
        Ok(Box::new(move || {
            let _keep = &conn;
            this.runtime()?.block_on(next_ping(&mut receiver))
        }))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        let rt = self.runtime()?;
        Ok(match op {
            IpcOp::App(harness::ipc::AppOp::ProxyCreate(server)) => {
                // dbus-async has no proxy type: the call is built per op, as every call here
                // (a dbus-message-parser `Message` to `DBus::call`), against the harness's server.
                let served = harness::ipc::raw_server::serve_proxied_on(&t, server)?;
                let conn = rt.block_on(connect(&t))?;
                Box::new(move || {
                    rt.block_on(async {
                        let msg = Message::method_call(
                            dbus_name::<Bus>(&served.name)?,
                            dbus_name::<ObjectPath>(px::PROXIED_PATH)?,
                            dbus_name::<Interface>(px::PROXIED_INTERFACE)?,
                            dbus_name::<Member>(px::PROXIED_METHOD)?,
                        );
                        let reply = call(&conn.dbus, msg).await?;
                        ensure!(reply.get_body().is_empty(), "Void answered {:?}", reply.get_body());
                        anyhow::Ok(())
                    })?;
                    Ok(harness::ipc::application::take_tally(&served.tally))
                })
            }
            // The other application families: `unsupported_ipc` says why (never asked for).
            IpcOp::App(_) => bail!(harness::ipc::not_implemented(op)),
            IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_) => bail!(harness::ipc::not_implemented(op)),
            IpcOp::FdPassing(_) => bail!(h::not_implemented(op)),
            IpcOp::Call(m) => {
                let conn = rt.block_on(connect(&t))?;
                Box::new(move || rt.block_on(bench_call(&conn.dbus, &t, m)))
            }
            IpcOp::EchoBytes(n) => {
                let conn = rt.block_on(connect(&t))?;
                let payload = h::echo_payload(n);
                Box::new(move || rt.block_on(echo_bytes(&conn.dbus, &t, &payload)))
            }
            IpcOp::PropertyGet | IpcOp::PropertyGetX100 => {
                let reads = if op == IpcOp::PropertyGet { 1 } else { 100 };
                let conn = rt.block_on(connect(&t))?;
                Box::new(move || {
                    rt.block_on(async {
                        let mut d = Digest::new();
                        for _ in 0..reads {
                            digest_items(&mut d, &get_items(&conn.dbus, &t).await?);
                        }
                        Ok(d.finish())
                    })
                })
            }
            IpcOp::EmitReceive => {
                let (tx, rx, mut receiver) = rt.block_on(async {
                    let tx = connect(&t).await?;
                    let rx = connect(&t).await?;
                    let receiver = subscribe_ping(&rx.dbus).await?;
                    anyhow::Ok((tx, rx, receiver))
                })?;
                Box::new(move || {
                    let _keep = &rx;
                    rt.block_on(async {
                        tx.dbus.send(ping()?).map_err(error)?;
                        next_ping(&mut receiver).await
                    })
                })
            }
            IpcOp::Fanout(_) | IpcOp::NonmatchingRules(_) => {
                let conn = rt.block_on(connect(&t))?;
                Box::new(move || {
                    // Queued: the runtime's worker writes it while the harness waits for the subscribers.
                    conn.dbus.send(ping()?).map_err(error)?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::ConnectHello => Box::new(move || {
                rt.block_on(async { connect(&t).await?.close().await })?;
                Ok(Digest::new().finish())
            }),
            IpcOp::ConnectMarshalSend => {
                let body = payload::mixed();
                Box::new(move || {
                    rt.block_on(async {
                        let conn = connect(&t).await?;
                        conn.dbus.send(crate::signal(&body)?).map_err(error)?;
                        conn.close().await
                    })?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::InFlight(_) => bail!(harness::ipc::not_implemented(op)),
            IpcOp::PropertyColdStart | IpcOp::RawSocket(_) | IpcOp::IdleConnections(_) => {
                bail!("{op:?} is not a client operation")
            }
            // Opt-in and not implemented here: `implements` says no, the harness answers for it.
            IpcOp::Subscription(_) => bail!("{}", h::not_implemented(op)),
        })
    }

    fn implements(&self, op: IpcOp) -> bool {
        !op.opt_in() || matches!(op, IpcOp::App(harness::ipc::AppOp::ProxyCreate(_)))
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        self.runtime()?.block_on(async {
            let conn = connect(transport).await?;
            get_items(&conn.dbus, transport).await
        })
    }
}
