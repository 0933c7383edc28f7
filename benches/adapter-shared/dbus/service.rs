//! What the dbus-rs adapters share beyond the codec, whatever drives the
//! connection (blocking `dbus::blocking` in dbus-0.9, Tokio through dbus-tokio
//! in dbus-tokio-0.7, which includes this file by `#[path]`): the
//! `dbus_crossroads` service, the argument types of the interface, the signal
//! messages, and how a call's reply is digested.

use std::os::fd::AsRawFd;

use anyhow::{anyhow, Result};
use dbus::arg::{Append, Arg, ArgType, Get, Iter, IterAppend, OwnedFd};
use dbus::message::MatchRule;
use dbus::strings::{Interface, Member, Path as DPath};
use dbus::{Message, Signature};
use dbus_crossroads::Crossroads;
use harness::ipc as h;
use harness::ipc::fd_passing as fd;
use harness::{payload, Digest};

pub const NO_P2P_SERVER: &str = "dbus-rs 0.9.12 has no API to serve a peer-to-peer connection: a Channel can only be \
     opened as a client (Channel::open_private / get_private); neither dbus nor libdbus-sys 0.2.7 wraps libdbus's \
     DBusServer (dbus_server_listen and its new-connection callback), and there is no constructor of a \
     Channel/Connection from an accepted socket or a server-side DBusConnection";

/// Why `proxy/startup/<n>` (introspect, parse, build a proxy per object) cannot run
/// over dbus-rs, blocking or nonblock (dbus-tokio adds only the connection's I/O task).
pub const NO_INTROSPECTION_PARSER: &str = "dbus-rs 0.9.12 has no run-time introspection parser: Introspect gives the XML as a string, and only dbus-codegen parses it, at build time, into generated code, so there is nothing to build a proxy from at run time";

/// `ay` read and written as one slice: `&[u8]` uses libdbus's fixed-array fast path
/// (`dbus_message_iter_get_fixed_array` / `append_fixed_array`), where `Vec<u8>`
/// would go element by element. One copy out of the message, like `Vec<u8>`.
pub struct ByteArray(pub Vec<u8>);

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
pub type ObjectRef = (String, DPath<'static>);

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

/// The benchmark service. Its method handlers are synchronous: the
/// connection that feeds `Crossroads` messages decides blocking or async.
pub fn crossroads(service_name: &str) -> Crossroads {
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
    let fd_iface = fd_interface(&mut cr);
    cr.insert(
        h::OBJECT_PATH,
        &[iface, fd_iface],
        BenchData {
            object_ref: object_ref(service_name, 0),
            relation_set: (0..10).map(|i| object_ref(service_name, i)).collect(),
            items: h::items(),
        },
    );
    cr
}

/// `call/fd-passing`: `ReadFd(h) -> t` on the second interface
/// (`harness::ipc::fd_passing`). libdbus negotiates fd passing on Unix sockets
/// and duplicates the received fd into the `OwnedFd`, closed when it drops.
fn fd_interface(cr: &mut Crossroads) -> dbus_crossroads::IfaceToken<BenchData> {
    cr.register(fd::FD_INTERFACE, |b: &mut dbus_crossroads::IfaceBuilder<BenchData>| {
        b.method(fd::READ_FD, ("fd",), ("digest",), |_, _, (received,): (OwnedFd,)| {
            let digest = fd::read_raw_fd_digest(received.as_raw_fd())
                .map_err(|e| dbus_crossroads::MethodErr::failed(&format!("reading the passed fd: {e}")))?;
            Ok((digest,))
        });
    })
}

pub fn digest_object_ref(d: &mut Digest, r: &ObjectRef) {
    d.str(&r.0);
    d.str(&r.1);
}

pub fn digest_items(d: &mut Digest, items: &[(String, String)]) {
    for (a, b) in items {
        d.str(a);
        d.str(b);
    }
    d.len(items.len());
}

/// The digest of an `EchoBytes` reply.
pub fn digest_bytes(reply: &ByteArray) -> u64 {
    let mut d = Digest::new();
    d.bytes(&reply.0);
    d.finish()
}

/// One call of `$method` and the digest of its reply. `$invoke!(Reply, args)`
/// is the caller's typed method call (blocking or awaited) returning `Reply`.
macro_rules! digest_call {
    ($method:expr, $invoke:ident) => {{
        use harness::ipc::{self as h, Method};
        let mut d = harness::Digest::new();
        match $method {
            Method::Void => $invoke!((), ()),
            Method::InInt => $invoke!((), (h::IN_INT,)),
            Method::OutInt => d.i32($invoke!((i32,), ()).0),
            Method::InOutInt => d.i32($invoke!((i32,), (h::IN_INT,)).0),
            Method::InString => $invoke!((), (h::IN_STRING,)),
            Method::OutString => d.str(&$invoke!((String,), ()).0),
            Method::InOutString => d.str(&$invoke!((String,), (h::OUT_STRING,)).0),
            Method::ObjectRef => {
                let (r,): ($crate::service::ObjectRef,) = $invoke!(($crate::service::ObjectRef,), ());
                $crate::service::digest_object_ref(&mut d, &r)
            }
            Method::RelationSet => {
                let (set,): (Vec<$crate::service::ObjectRef>,) = $invoke!((Vec<$crate::service::ObjectRef>,), ());
                for r in &set {
                    $crate::service::digest_object_ref(&mut d, r);
                }
                d.len(set.len());
            }
        }
        d.finish()
    }};
}
pub(crate) use digest_call;

pub fn ping_rule() -> Result<MatchRule<'static>> {
    let rule = h::ping_rule();
    Ok(MatchRule::parse(&rule)
        .map_err(|e| anyhow!("parsing {rule}: {e:?}"))?
        .static_clone())
}

/// The digest of a received `Ping` with this text (callbacks count only the expected text).
pub fn ping_digest(text: &str) -> u64 {
    let mut d = Digest::new();
    d.str(text);
    d.finish()
}

/// The `Ping` signal clients emit.
pub fn ping() -> Message {
    ping_with(h::SIGNAL_TEXT)
}

/// A `Ping` with another text (`signal/burst/<n>`).
pub fn ping_with(text: &str) -> Message {
    Message::signal(
        &DPath::from(h::OBJECT_PATH),
        &Interface::from(h::INTERFACE),
        &Member::from(h::SIGNAL),
    )
    .append1(text)
}

/// The `marshal/mixed` signal of `connect/marshal-send`.
pub fn mixed_signal(body: &payload::Body) -> Result<Message> {
    let units = body.units().expect("marshal/mixed is units");
    let mut msg = Message::new_signal(payload::PATH, payload::INTERFACE, payload::MEMBER).map_err(|e| anyhow!(e))?;
    {
        let mut a = IterAppend::new(&mut msg);
        units.iter().for_each(|u| crate::codec::append_unit(&mut a, u));
    }
    Ok(msg)
}
