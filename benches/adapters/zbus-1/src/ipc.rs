//! The IPC side on zbus 1's synchronous API: a `Connection` reads and writes its
//! socket on the calling thread (no executor, no threads of zbus' own). The
//! service is a `#[dbus_interface]` object in an `ObjectServer`, driven by
//! `try_handle_next` in a loop on the serving thread; the client is a
//! `#[dbus_proxy]` trait (zbus 1's proxies are blocking). Peer to peer is
//! unsupported: zbus 1's server handshake hangs (see `P2P_UNSUPPORTED`).

use std::collections::HashMap;
use std::convert::TryInto;
use std::os::unix::net::UnixStream;
use std::sync::LazyLock;

use anyhow::{bail, ensure, Context, Result};
use harness::ipc::{self as h, IpcOp, Method, Transport};
use harness::payload::{self, Unit};
use harness::Digest;
use serde::{Deserialize, Serialize, Serializer};
use zbus::fdo::{self, RequestNameFlags, RequestNameReply};
use zbus::{dbus_interface, dbus_proxy, Connection, Message, MessageType, ObjectServer};
use zvariant::derive::Type;
use zvariant::{OwnedObjectPath, Signature};

use crate::codec::{units_signature, UnitsRef};

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

/// `ay` as one slice. zvariant 2 writes and reads serde bytes in one piece but
/// has no `Type` for serde_bytes' types, so this newtype (transparent on the wire).
#[derive(Serialize, Deserialize)]
pub(crate) struct ByteArray(#[serde(with = "serde_bytes")] pub(crate) Vec<u8>);

impl zvariant::Type for ByteArray {
    fn signature() -> Signature<'static> {
        Signature::from_static_str_unchecked("ay")
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

    fn echo_bytes(&self, data: ByteArray) -> ByteArray {
        data
    }

    #[dbus_interface(property)]
    fn items(&self) -> Vec<(String, String)> {
        self.items.clone()
    }

    /// Emitted by clients.
    #[dbus_interface(signal)]
    fn ping(&self, text: &str) -> zbus::Result<()>;
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
    fn echo_bytes(&self, data: &ByteArray) -> zbus::Result<ByteArray>;

    /// zbus 1 caches no properties: every read is a `Properties.Get` call.
    #[dbus_proxy(property)]
    fn items(&self) -> zbus::fdo::Result<Vec<(String, String)>>;
}

/// What adapter-shared/zbus/startup_1_3.rs builds on: zbus 1's synchronous API.
pub(crate) mod startup_api {
    pub(crate) use super::connect;
    pub(crate) use zbus::{Connection, Proxy};
}

/// A new connection: SASL, then Hello on a bus; SASL only peer to peer. Not
/// `Connection::new_for_address`: zbus does not decode an address's `%XX`
/// escapes, so in a $TMPDIR with a space it named another path (issue 42, 3).
pub(crate) fn connect(t: &Transport) -> zbus::Result<Connection> {
    Connection::new_unix_client(UnixStream::connect(t.socket())?, !t.is_p2p())
}

/// A connection and a proxy that owns it.
pub(crate) fn connect_proxy(t: &Transport) -> zbus::Result<BenchProxy<'static>> {
    let destination = match t {
        Transport::Bus { service_name, .. } => service_name.clone(),
        Transport::P2p { .. } => h::INTERFACE.to_owned(),
    };
    BenchProxy::new_for_owned(connect(t)?, destination, h::OBJECT_PATH.to_owned())
}

/// `call/in-flight/<n>`: zbus 1's proxies and `call_method` wait for each
/// reply, so the calls are `Message::method`s written with
/// `Connection::send_message` (it returns the serial once written), then the
/// replies are read with `receive_message` and matched by reply serial.
fn in_flight(conn: &Connection, destination: &str, n: usize) -> Result<u64> {
    let mut serials = Vec::with_capacity(n);
    for i in 0..n {
        let arg = h::in_flight_arg(i);
        let member = Method::InOutInt.member();
        let msg = Message::method(
            conn.unique_name(),
            Some(destination),
            h::OBJECT_PATH,
            Some(h::INTERFACE),
            member,
            &arg,
        )?;
        serials.push(conn.send_message(msg)?);
    }
    let mut replies = HashMap::with_capacity(n);
    while replies.len() < n {
        let msg = conn.receive_message()?;
        let header = msg.header()?;
        // Anything that answers no call (NameAcquired) is not ours.
        let Some(serial) = header.reply_serial()? else { continue };
        match header.message_type()? {
            MessageType::Error => bail!("error reply to in-flight call {serial}: {}", zbus::Error::from(msg)),
            MessageType::MethodReturn => {
                replies.insert(serial, msg.body::<i32>()?);
            }
            _ => {}
        }
    }
    let values = serials
        .iter()
        .map(|s| {
            replies
                .get(s)
                .copied()
                .with_context(|| format!("no reply to serial {s}"))
        })
        .collect::<Result<Vec<i32>>>()?;
    Ok(h::in_flight_digest(values))
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

fn call(proxy: &BenchProxy<'_>, m: Method) -> zbus::Result<u64> {
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

fn is_ping(msg: &Message) -> zbus::Result<bool> {
    let header = msg.header()?;
    Ok(header.message_type()? == MessageType::Signal
        && header.interface()? == Some(h::INTERFACE)
        && header.member()? == Some(h::SIGNAL))
}

/// The next `Ping` on `conn`: zbus 1 has no match rules of its own, so the
/// adapter filters (other messages stay queued in the connection).
fn receive_ping(conn: &Connection) -> Result<u64> {
    let msg = conn.receive_specific(is_ping)?;
    let mut d = Digest::new();
    d.str(msg.body::<&str>()?);
    Ok(d.finish())
}

/// Installs the `Ping` rule on the bus (a p2p peer has no bus to hold it).
fn add_ping_rule(conn: &Connection) -> Result<()> {
    fdo::DBusProxy::new(conn)?.add_match(&h::ping_rule())?;
    Ok(())
}

fn emit_ping(conn: &Connection) -> zbus::Result<()> {
    conn.emit_signal(None, h::OBJECT_PATH, h::INTERFACE, h::SIGNAL, &h::SIGNAL_TEXT)
}

/// The body of `marshal/mixed` as one static type: zbus 1 sends only bodies whose
/// signature is a `zvariant::Type` (no `DynamicType`), and this body's is fixed.
struct MixedUnits<'a>(&'a [Unit]);

static MIXED_UNITS: LazyLock<usize> = LazyLock::new(|| payload::mixed().units().map_or(0, <[Unit]>::len));
static MIXED_SIGNATURE: LazyLock<String> = LazyLock::new(|| units_signature(*MIXED_UNITS).as_str().to_owned());

impl zvariant::Type for MixedUnits<'_> {
    fn signature() -> Signature<'static> {
        Signature::from_str_unchecked(MIXED_SIGNATURE.as_str())
    }
}

impl Serialize for MixedUnits<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        UnitsRef(self.0).serialize(s)
    }
}

/// Reads and serves one message. One the object server does not dispatch (not a
/// method call) is dropped, and zbus replies with an error to a call it cannot
/// answer; only an I/O error ends the connection.
pub(crate) fn serve_next(server: &mut ObjectServer<'_>) -> Result<()> {
    match server.try_handle_next() {
        Ok(_) => Ok(()),
        Err(zbus::Error::Io(e)) => Err(e).context("reading the connection"),
        Err(e) => {
            eprintln!("a message could not be served: {e}");
            Ok(())
        }
    }
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

/// Why zbus 1 cannot serve peer to peer (seen here with its own client and gdbus).
const P2P_UNSUPPORTED: &str = "zbus 1.9.3's p2p server handshake (ServerHandshake) reads the socket 40 bytes \
    at a time until its buffer ends in CR LF, so a client's first message that arrives in the same read as \
    BEGIN is taken into the handshake and never answered: the connection hangs (its own client and gdbus \
    did); on a socket the client has closed it retries a 0-byte read forever";

impl h::Ipc for ZbusIpc {
    fn unsupported_ipc(&self, _op: IpcOp, p2p: bool) -> Option<String> {
        p2p.then(|| P2P_UNSUPPORTED.to_owned())
    }

    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        match transport {
            Transport::Bus { service_name, .. } => {
                let conn = connect(transport).context("connecting the server to the bus")?;
                let mut server = ObjectServer::new(&conn);
                server.at(&h::OBJECT_PATH.try_into()?, BenchService::new(service_name))?;
                server.at(&h::OBJECT_PATH.try_into()?, crate::fds::FdService)?;
                crate::props::serve_all(&mut server).context("serving the property objects")?;
                // DO_NOT_QUEUE alone: never take the name from another owner.
                let reply = fdo::DBusProxy::new(&conn)?
                    .request_name(service_name, RequestNameFlags::DoNotQueue.into())
                    .with_context(|| format!("requesting {service_name}"))?;
                if reply == RequestNameReply::Exists {
                    bail!("{service_name} is owned by another connection");
                }
                ready();
                loop {
                    serve_next(&mut server)?;
                }
            }
            Transport::P2p { .. } => bail!(P2P_UNSUPPORTED),
        }
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
        let conn = connect(transport)?;
        add_ping_rule(&conn)?;
        if extra_rules > 0 {
            let dbus = fdo::DBusProxy::new(&conn)?;
            for j in 0..extra_rules {
                dbus.add_match(&h::nonmatching_rule(j))?;
            }
        }
        Ok(Box::new(move || receive_ping(&conn)))
    }

    fn implements(&self, op: IpcOp) -> bool {
        !op.opt_in()
            || matches!(op, IpcOp::InFlight(_) | IpcOp::IdleConnections(_) | IpcOp::FdPassing(_))
            || matches!(op, IpcOp::App(_) | IpcOp::Subscription(_))
            || matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_))
    }

    /// `Connection::new_for_address` (SASL, Hello); zbus 1 has no `close()`:
    /// dropping the last handle closes the socket.
    fn idle_connection(&mut self, transport: &Transport) -> Result<Box<dyn std::any::Any>> {
        Ok(Box::new(connect(transport)?))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        Ok(match op {
            // Issue 31's application families (src/apps.rs).
            IpcOp::App(a) => crate::apps::client(&t, a)?,
            IpcOp::PropertyGetAll(n) => crate::props::get_all_client(&t, n)?,
            IpcOp::ManagedObjects(n) => crate::props::managed_objects_client(&t, n)?,
            IpcOp::FdPassing(n) => Box::new(crate::fds::client(&t, n)?),
            IpcOp::Call(m) => {
                let proxy = connect_proxy(&t)?;
                Box::new(move || Ok(call(&proxy, m)?))
            }
            IpcOp::EchoBytes(n) => {
                let proxy = connect_proxy(&t)?;
                let payload = ByteArray(h::echo_payload(n));
                Box::new(move || {
                    let reply = proxy.echo_bytes(&payload)?;
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
                        digest_items(&mut d, &proxy.items()?);
                    }
                    Ok(d.finish())
                })
            }
            IpcOp::EmitReceive => {
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                add_ping_rule(&rx)?;
                Box::new(move || {
                    emit_ping(&tx)?;
                    receive_ping(&rx)
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
                // zbus 1 has no `close()`: dropping the last handle closes the socket.
                drop(connect(&t)?);
                Ok(Digest::new().finish())
            }),
            IpcOp::ConnectMarshalSend => {
                let body = payload::mixed();
                Box::new(move || {
                    let units = body.units().expect("marshal/mixed is units");
                    ensure!(units.len() == *MIXED_UNITS, "marshal/mixed has {} units", units.len());
                    let conn = connect(&t)?;
                    // Written to the (blocking) socket before it returns.
                    conn.emit_signal(
                        None,
                        payload::PATH,
                        payload::INTERFACE,
                        payload::MEMBER,
                        &MixedUnits(units),
                    )?;
                    drop(conn);
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::InFlight(n) => {
                let conn = connect(&t)?;
                let destination = t.service_name().to_owned();
                Box::new(move || in_flight(&conn, &destination, n))
            }
            IpcOp::PropertyColdStart | IpcOp::RawSocket(_) | IpcOp::IdleConnections(_) => {
                bail!("{op:?} is not a client operation")
            }
            // Issue 31's subscription families (src/subscriptions.rs, src/storm.rs).
            IpcOp::Subscription(s) => crate::subscriptions::client(&t, s)?,
        })
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        Ok(connect_proxy(transport)?.items()?)
    }
}
