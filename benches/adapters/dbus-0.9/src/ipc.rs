//! The IPC side over libdbus through dbus-rs 0.9's blocking API. Server: a
//! `dbus_crossroads::Crossroads` instance (the object server published by the
//! dbus-rs author) served on a `blocking::Connection` with `Crossroads::serve`.
//! Client: `blocking::Proxy::method_call` for calls, the generated
//! `stdintf::org_freedesktop_dbus::Properties::get` for `Items` (no cache: every
//! read is a `Properties.Get` round trip), `Connection::add_match` +
//! `Connection::process` for signals. Connections are `Channel::open_private`
//! followed by `Channel::register` (Hello), i.e. `Connection::new_address`.
//!
//! Peer to peer is not possible: dbus-rs 0.9.12 can only open client
//! connections, and the adapter's own server is what p2p cells call.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, ensure, Context, Result};
use dbus::arg::{Append, Arg, ArgType, Get, Iter, IterAppend};
use dbus::blocking::stdintf::org_freedesktop_dbus::{Properties, RequestNameReply};
use dbus::blocking::{Connection, Proxy};
use dbus::channel::{Channel, Sender};
use dbus::message::MatchRule;
use dbus::strings::{Interface, Member, Path as DPath};
use dbus::{Message, Signature};
use dbus_crossroads::Crossroads;
use harness::ipc::{self as h, IpcOp, Method, Transport};
use harness::{payload, Digest};

pub struct DbusIpc;

/// Method call timeout (libdbus's default is 25 s).
const TIMEOUT: Duration = Duration::from_secs(30);

/// How long one `Connection::process` waits before looping.
const PROCESS_WAIT: Duration = Duration::from_secs(60);

const NO_P2P_SERVER: &str = "dbus-rs 0.9.12 has no API to serve a peer-to-peer connection: a Channel can only be \
     opened as a client (Channel::open_private / get_private); neither dbus nor libdbus-sys 0.2.7 wraps libdbus's \
     DBusServer (dbus_server_listen and its new-connection callback), and there is no constructor of a \
     Channel/Connection from an accepted socket or a server-side DBusConnection";

/// `ay` read and written as one slice: `&[u8]` uses libdbus's fixed-array fast path
/// (`dbus_message_iter_get_fixed_array` / `append_fixed_array`), where `Vec<u8>`
/// would go element by element. One copy out of the message, like `Vec<u8>`.
struct ByteArray(Vec<u8>);

impl Arg for ByteArray {
    const ARG_TYPE: ArgType = ArgType::Array;
    fn signature() -> Signature<'static> {
        Signature::from("ay")
    }
}

impl Append for ByteArray {
    fn append_by_ref(&self, i: &mut IterAppend) {
        self.0.as_slice().append_by_ref(i)
    }
}

impl<'a> Get<'a> for ByteArray {
    fn get(i: &mut Iter<'a>) -> Option<Self> {
        <&[u8]>::get(i).map(|s| ByteArray(s.to_vec()))
    }
}

/// `(so)`: a bus name and an object path.
type ObjectRef = (String, DPath<'static>);

fn object_ref(service_name: &str, i: usize) -> ObjectRef {
    (
        service_name.to_owned(),
        DPath::new(h::object_path(i)).expect("a valid object path"),
    )
}

/// The data of the served object (`harness::ipc`'s table).
struct BenchData {
    object_ref: ObjectRef,
    relation_set: Vec<ObjectRef>,
    items: Vec<(String, String)>,
}

fn crossroads(service_name: &str) -> Crossroads {
    // `Crossroads::new` adds org.freedesktop.DBus.Properties and Introspectable to every object.
    let mut cr = Crossroads::new();
    let iface = cr.register(h::INTERFACE, |b: &mut dbus_crossroads::IfaceBuilder<BenchData>| {
        b.method("Void", (), (), |_, _, (): ()| Ok(()));
        b.method("InInt", ("value",), (), |_, _, (_v,): (i32,)| Ok(()));
        b.method("OutInt", (), ("value",), |_, _, (): ()| Ok((h::OUT_INT,)));
        b.method("InOutInt", ("value",), ("value",), |_, _, (v,): (i32,)| Ok((v + 1,)));
        b.method("InString", ("value",), (), |_, _, (_v,): (String,)| Ok(()));
        b.method("OutString", (), ("value",), |_, _, (): ()| Ok((h::OUT_STRING,)));
        b.method("InOutString", ("value",), ("value",), |_, _, (v,): (String,)| Ok((v,)));
        b.method("ObjectRef", (), ("ref",), |_, d: &mut BenchData, (): ()| {
            Ok((d.object_ref.clone(),))
        });
        b.method("RelationSet", (), ("set",), |_, d: &mut BenchData, (): ()| {
            Ok((d.relation_set.clone(),))
        });
        b.method("EchoBytes", ("data",), ("data",), |_, _, (data,): (ByteArray,)| {
            Ok((data,))
        });
        b.property::<Vec<(String, String)>, _>(h::PROPERTY)
            .get(|_, d: &mut BenchData| Ok(d.items.clone()));
        // For introspection only: clients emit Ping.
        b.signal::<(String,), _>(h::SIGNAL, ("text",));
    });
    cr.insert(
        h::OBJECT_PATH,
        &[iface],
        BenchData {
            object_ref: object_ref(service_name, 0),
            relation_set: (0..10).map(|i| object_ref(service_name, i)).collect(),
            items: h::items(),
        },
    );
    cr
}

/// A new bus connection: `Channel::open_private` (SASL) + `register` (Hello).
fn connect(t: &Transport) -> Result<Connection> {
    match t {
        Transport::Bus { address, .. } => {
            let mut channel = Channel::open_private(address).context("connecting to the bus")?;
            channel.register().context("Hello")?;
            Ok(Connection::from(channel))
        }
        Transport::P2p { .. } => bail!("{NO_P2P_SERVER}"),
    }
}

type BenchProxy = Proxy<'static, Box<Connection>>;

/// A connection and a proxy on it for the service (the proxy owns the connection).
fn connect_proxy(t: &Transport) -> Result<BenchProxy> {
    let conn = connect(t)?;
    Ok(Proxy::new(
        t.service_name().to_owned(),
        h::OBJECT_PATH,
        TIMEOUT,
        Box::new(conn),
    ))
}

fn digest_object_ref(d: &mut Digest, r: &ObjectRef) {
    d.str(&r.0);
    d.str(&r.1);
}

fn digest_items(d: &mut Digest, items: &[(String, String)]) {
    for (a, b) in items {
        d.str(a);
        d.str(b);
    }
    d.len(items.len());
}

fn call(proxy: &BenchProxy, m: Method) -> Result<u64> {
    let mut d = Digest::new();
    let i = h::INTERFACE;
    let member = m.member();
    match m {
        Method::Void => proxy.method_call::<(), _, _, _>(i, member, ())?,
        Method::InInt => proxy.method_call::<(), _, _, _>(i, member, (h::IN_INT,))?,
        Method::OutInt => d.i32(proxy.method_call::<(i32,), _, _, _>(i, member, ())?.0),
        Method::InOutInt => d.i32(proxy.method_call::<(i32,), _, _, _>(i, member, (h::IN_INT,))?.0),
        Method::InString => proxy.method_call::<(), _, _, _>(i, member, (h::IN_STRING,))?,
        Method::OutString => d.str(&proxy.method_call::<(String,), _, _, _>(i, member, ())?.0),
        Method::InOutString => d.str(&proxy.method_call::<(String,), _, _, _>(i, member, (h::OUT_STRING,))?.0),
        Method::ObjectRef => digest_object_ref(&mut d, &proxy.method_call::<(ObjectRef,), _, _, _>(i, member, ())?.0),
        Method::RelationSet => {
            let (set,): (Vec<ObjectRef>,) = proxy.method_call(i, member, ())?;
            for r in &set {
                digest_object_ref(&mut d, r);
            }
            d.len(set.len());
        }
    }
    Ok(d.finish())
}

fn ping_rule() -> Result<MatchRule<'static>> {
    let rule = h::ping_rule();
    Ok(MatchRule::parse(&rule)
        .map_err(|e| anyhow!("parsing {rule}: {e:?}"))?
        .static_clone())
}

/// Emits `Ping` and flushes it to the socket.
fn emit_ping(conn: &Connection) -> Result<()> {
    let msg = Message::signal(
        &DPath::from(h::OBJECT_PATH),
        &Interface::from(h::INTERFACE),
        &Member::from(h::SIGNAL),
    )
    .append1(h::SIGNAL_TEXT);
    conn.send(msg).map_err(|()| anyhow!("sending Ping failed"))?;
    conn.channel().flush();
    Ok(())
}

/// `Connection::add_match` for `Ping` (AddMatch on the bus, and a local filter
/// whose callback counts the signals received).
fn subscribe_ping(conn: &Connection, counter: Arc<AtomicUsize>) -> Result<()> {
    conn.add_match(ping_rule()?, move |(text,): (String,), _: &Connection, _: &Message| {
        if text == h::SIGNAL_TEXT {
            counter.fetch_add(1, Ordering::Release);
        }
        true
    })?;
    Ok(())
}

/// `Connection::process` until the counter reaches `target`.
fn process_until(conn: &Connection, counter: &AtomicUsize, target: usize) -> Result<()> {
    while counter.load(Ordering::Acquire) < target {
        conn.process(PROCESS_WAIT)?;
    }
    Ok(())
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for DbusIpc {
    fn unsupported_ipc(&self, _op: IpcOp, p2p: bool) -> Option<String> {
        if !p2p {
            return None;
        }
        // Ops that need a bus are answered by the harness (`harness::ipc::needs_bus`).
        Some(NO_P2P_SERVER.into())
    }

    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        let Transport::Bus { service_name, .. } = transport else {
            bail!("{NO_P2P_SERVER}");
        };
        let conn = connect(transport).context("connecting the server to the bus")?;
        let reply = conn
            // Neither allow nor take a replacement; DO_NOT_QUEUE: `Exists` when owned.
            .request_name(service_name.as_str(), false, false, true)
            .with_context(|| format!("requesting {service_name}"))?;
        ensure!(
            reply == RequestNameReply::PrimaryOwner,
            "requesting {service_name}: {reply:?}"
        );
        let cr = crossroads(service_name);
        ready();
        // Calls that arrived before this wait in libdbus's queue.
        cr.serve(&conn)?;
        unreachable!("Crossroads::serve returns only on error")
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
        let conn = connect(transport)?;
        let counter = Arc::new(AtomicUsize::new(0));
        subscribe_ping(&conn, counter.clone())?;
        for j in 0..extra_rules {
            conn.add_match_no_cb(&h::nonmatching_rule(j))?;
        }
        let mut received = 0;
        Ok(Box::new(move || {
            received += 1;
            process_until(&conn, &counter, received)?;
            // The callback counts only Pings whose text is the expected one.
            let mut d = Digest::new();
            d.str(h::SIGNAL_TEXT);
            Ok(d.finish())
        }))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        Ok(match op {
            IpcOp::Call(m) => {
                let proxy = connect_proxy(&t)?;
                Box::new(move || call(&proxy, m))
            }
            IpcOp::EchoBytes(n) => {
                let proxy = connect_proxy(&t)?;
                let payload = h::echo_payload(n);
                Box::new(move || {
                    let (reply,): (ByteArray,) = proxy.method_call(h::INTERFACE, "EchoBytes", (payload.as_slice(),))?;
                    let mut d = Digest::new();
                    d.bytes(&reply.0);
                    Ok(d.finish())
                })
            }
            IpcOp::PropertyGet | IpcOp::PropertyGetX100 => {
                let reads = if op == IpcOp::PropertyGet { 1 } else { 100 };
                let proxy = connect_proxy(&t)?;
                Box::new(move || {
                    let mut d = Digest::new();
                    for _ in 0..reads {
                        // dbus-rs has no property cache: each read is a Properties.Get call.
                        let items: Vec<(String, String)> = proxy.get(h::INTERFACE, h::PROPERTY)?;
                        digest_items(&mut d, &items);
                    }
                    Ok(d.finish())
                })
            }
            IpcOp::EmitReceive => {
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                let received = Arc::new(Mutex::new(None::<String>));
                let slot = received.clone();
                rx.add_match(ping_rule()?, move |(text,): (String,), _: &Connection, _: &Message| {
                    *slot.lock().expect("not poisoned") = Some(text);
                    true
                })?;
                Box::new(move || {
                    emit_ping(&tx)?;
                    loop {
                        if let Some(text) = received.lock().expect("not poisoned").take() {
                            let mut d = Digest::new();
                            d.str(&text);
                            return Ok(d.finish());
                        }
                        rx.process(PROCESS_WAIT)?;
                    }
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
                // Dropping the Channel closes (dbus_connection_close) and unrefs the connection.
                drop(connect(&t)?);
                Ok(Digest::new().finish())
            }),
            IpcOp::ConnectMarshalSend => {
                let body = payload::mixed();
                Box::new(move || {
                    let units = body.units().expect("marshal/mixed is units");
                    let conn = connect(&t)?;
                    let mut msg = Message::new_signal(payload::PATH, payload::INTERFACE, payload::MEMBER)
                        .map_err(|e| anyhow!(e))?;
                    {
                        let mut a = IterAppend::new(&mut msg);
                        units.iter().for_each(|u| crate::append_unit(&mut a, u));
                    }
                    conn.send(msg).map_err(|()| anyhow!("sending the signal failed"))?;
                    conn.channel().flush(); // on the socket before the connection closes
                    drop(conn);
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::PropertyColdStart | IpcOp::RawSocket(_) => bail!("{op:?} is not a client operation"),
        })
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        Ok(connect_proxy(transport)?.get(h::INTERFACE, h::PROPERTY)?)
    }
}
