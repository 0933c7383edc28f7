//! The IPC side over GDBus. Connections: `DBusConnection::for_address_sync`
//! (SASL EXTERNAL, and Hello on a bus). Client: `DBusConnection::call_sync`
//! with the expected reply type (GDBus checks it), a `DBusProxy` for `Items`
//! (GDBus's property API: the proxy fetches every property with `GetAll` when
//! it is created and answers `cached_property` from that cache, kept current
//! by `PropertiesChanged`), `signal_subscribe` for `Ping`. Server:
//! `register_object` with the interface parsed by `DBusNodeInfo::for_xml` from
//! the harness's introspection XML; GDBus itself answers Introspect, Peer,
//! Properties and calls with unknown members or wrong argument types. Peer to
//! peer: a `DBusServer` listening on the socket.
//!
//! Callbacks (method handlers, property getters, signal callbacks, new p2p
//! connections) run on the thread-default main context of the thread that
//! registered them: here always GLib's global default context, which this
//! module iterates on the calling thread ([`server`], [`signals`]).

use anyhow::{bail, Context, Result};
use gio::prelude::*;
use gio::{Cancellable, DBusCallFlags, DBusConnection, DBusConnectionFlags, DBusProxy, DBusProxyFlags};
use glib::variant::ToVariant;
use glib::{Variant, VariantTy};
use harness::ipc::{self as h, IpcOp, Method, Transport};
use harness::{payload, Digest};

use crate::variant;

mod apps;
mod fds;
mod in_flight;
mod own_context;
mod props;
mod server;
mod signals;
mod startup;
mod storm;
mod subscriptions;

pub struct GioIpc;

/// Method call timeout in milliseconds (GDBus's default, -1, is 25 s).
const TIMEOUT_MS: i32 = 30_000;

const NO_CANCEL: Option<&Cancellable> = None;

pub(crate) const BUS: &str = "org.freedesktop.DBus";
const BUS_PATH: &str = "/org/freedesktop/DBus";

/// A new connection: SASL EXTERNAL, then Hello on a bus; nothing more peer to peer.
pub(crate) fn connect(t: &Transport) -> Result<DBusConnection> {
    let mut flags = DBusConnectionFlags::AUTHENTICATION_CLIENT;
    if !t.is_p2p() {
        flags |= DBusConnectionFlags::MESSAGE_BUS_CONNECTION;
    }
    DBusConnection::for_address_sync(&t.address(), flags, None, NO_CANCEL)
        .with_context(|| format!("connecting to {}", t.address()))
}

/// One blocking method call (`call_sync`); GDBus checks the reply against `reply`.
fn call_sync(
    conn: &DBusConnection,
    (destination, path, interface): (Option<&str>, &str, &str),
    member: &str,
    args: Option<&Variant>,
    reply: &VariantTy,
) -> Result<Variant, glib::Error> {
    let flags = DBusCallFlags::NONE;
    conn.call_sync(
        destination,
        path,
        interface,
        member,
        args,
        Some(reply),
        flags,
        TIMEOUT_MS,
        NO_CANCEL,
    )
}

/// A method call on the bus driver (`org.freedesktop.DBus`), blocking.
pub(crate) fn call_bus(conn: &DBusConnection, member: &str, args: Option<&Variant>, reply: &str) -> Result<Variant> {
    let reply = VariantTy::new(reply).expect("a valid reply type");
    call_sync(conn, (Some(BUS), BUS_PATH, BUS), member, args, reply).with_context(|| format!("{BUS}.{member}"))
}

/// A client's view of the service: the connection and where calls go.
struct Service {
    conn: DBusConnection,
    name: Option<String>,
}

impl Service {
    fn connect(t: &Transport) -> Result<Self> {
        Ok(Service {
            conn: connect(t)?,
            // Peer to peer there is no destination.
            name: (!t.is_p2p()).then(|| t.service_name().to_owned()),
        })
    }

    /// One call of the benchmark interface; `reply` is the expected reply tuple type.
    fn call(&self, member: &str, args: Option<&Variant>, reply: &VariantTy) -> Result<Variant> {
        let target = (self.name.as_deref(), h::OBJECT_PATH, h::INTERFACE);
        Ok(call_sync(&self.conn, target, member, args, reply)?)
    }

    /// A proxy for the interface: creating it reads every property (`GetAll`).
    fn proxy(&self) -> Result<DBusProxy> {
        DBusProxy::new_sync(
            &self.conn,
            DBusProxyFlags::DO_NOT_AUTO_START,
            None,
            self.name.as_deref(),
            h::OBJECT_PATH,
            h::INTERFACE,
            NO_CANCEL,
        )
        .context("creating the DBusProxy")
    }
}

/// A method's reply type: the tuple of its out signature.
fn reply_type(m: Method) -> glib::VariantType {
    glib::VariantType::new(&format!("({})", m.out_signature())).expect("the method table holds valid signatures")
}

fn digest_object_ref(d: &mut Digest, r: &Variant) -> Result<()> {
    d.str(variant::str(&r.child_value(0))?);
    d.str(variant::str(&r.child_value(1))?);
    Ok(())
}

fn call(s: &Service, m: Method, reply: &VariantTy) -> Result<u64> {
    let mut d = Digest::new();
    let args = match m {
        Method::InInt | Method::InOutInt => Some((h::IN_INT,).to_variant()),
        Method::InString => Some((h::IN_STRING,).to_variant()),
        Method::InOutString => Some((h::OUT_STRING,).to_variant()),
        _ => None,
    };
    let out = s.call(m.member(), args.as_ref(), reply)?;
    match m {
        Method::Void | Method::InInt | Method::InString => {}
        Method::OutInt | Method::InOutInt => d.i32(variant::get::<(i32,)>(&out)?.0),
        Method::OutString | Method::InOutString => d.str(variant::str(&out.child_value(0))?),
        Method::ObjectRef => digest_object_ref(&mut d, &out.child_value(0))?,
        Method::RelationSet => {
            let set = out.child_value(0);
            for r in set.iter() {
                digest_object_ref(&mut d, &r)?;
            }
            d.len(set.n_children());
        }
    }
    Ok(d.finish())
}

/// `Items` from the proxy's property cache, as typed values.
fn cached_items(proxy: &DBusProxy) -> Result<Vec<(String, String)>> {
    let items = proxy
        .cached_property(h::PROPERTY)
        .context("the proxy has no cached Items")?;
    variant::get::<Vec<(String, String)>>(&items)
}

fn digest_items(d: &mut Digest, items: &[(String, String)]) {
    for (a, b) in items {
        d.str(a);
        d.str(b);
    }
    d.len(items.len());
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for GioIpc {
    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        server::serve(transport, ready)
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
        signals::subscriber(transport, extra_rules)
    }

    fn unsupported_ipc(&self, op: IpcOp, p2p: bool) -> Option<String> {
        (p2p && matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_)))
            .then(|| props::NOT_PEER_TO_PEER.to_owned())
    }

    fn implements(&self, op: IpcOp) -> bool {
        !op.opt_in()
            || matches!(op, IpcOp::InFlight(_) | IpcOp::IdleConnections(_) | IpcOp::FdPassing(_))
            || matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_))
            || matches!(op, IpcOp::App(_))
            || matches!(op, IpcOp::Subscription(_))
    }

    /// `DBusConnection::for_address_sync` (SASL, Hello), closed when dropped.
    fn idle_connection(&mut self, transport: &Transport) -> Result<Box<dyn std::any::Any>> {
        Ok(Box::new(IdleConnection(connect(transport)?)))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        Ok(match op {
            // Issue 31's application families (`apps.rs`; proxy/startup `startup.rs`).
            IpcOp::App(a) => apps::client(&t, a)?,
            IpcOp::PropertyGetAll(n) => {
                let conn = connect(&t)?;
                Box::new(move || props::get_all(&conn, &t, n))
            }
            IpcOp::ManagedObjects(n) => {
                let conn = connect(&t)?;
                Box::new(move || props::managed_objects(&conn, &t, n))
            }
            IpcOp::FdPassing(n) => Box::new(fds::client(&t, n)?),
            IpcOp::Call(m) => {
                let s = Service::connect(&t)?;
                let reply = reply_type(m);
                Box::new(move || call(&s, m, &reply))
            }
            IpcOp::EchoBytes(n) => {
                let s = Service::connect(&t)?;
                let payload = h::echo_payload(n);
                let reply = VariantTy::new("(ay)").expect("a valid type");
                Box::new(move || {
                    let args = Variant::tuple_from_iter([Variant::array_from_fixed_array(&payload)]);
                    let out = s.call(h::ECHO_BYTES, Some(&args), reply)?;
                    let mut d = Digest::new();
                    d.bytes(out.child_value(0).fixed_array::<u8>()?);
                    Ok(d.finish())
                })
            }
            IpcOp::PropertyGet | IpcOp::PropertyGetX100 => {
                let reads = if op == IpcOp::PropertyGet { 1 } else { 100 };
                let s = Service::connect(&t)?;
                let proxy = s.proxy()?;
                Box::new(move || {
                    let mut d = Digest::new();
                    for _ in 0..reads {
                        digest_items(&mut d, &cached_items(&proxy)?);
                    }
                    Ok(d.finish())
                })
            }
            IpcOp::EmitReceive => signals::emit_receive(&t)?,
            IpcOp::Fanout(_) | IpcOp::NonmatchingRules(_) => {
                let conn = connect(&t)?;
                Box::new(move || {
                    signals::emit_ping(&conn)?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::ConnectHello => Box::new(move || {
                close(&connect(&t)?)?;
                Ok(Digest::new().finish())
            }),
            IpcOp::ConnectMarshalSend => {
                let body = payload::mixed();
                Box::new(move || {
                    let conn = connect(&t)?;
                    let msg = crate::test_signal(&body);
                    // GDBus assigns the serial when it sends.
                    conn.send_message(&msg, gio::DBusSendMessageFlags::NONE)?;
                    close(&conn)?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::InFlight(n) => {
                let s = Service::connect(&t)?;
                Box::new(move || in_flight::in_flight(&s, n))
            }
            IpcOp::PropertyColdStart | IpcOp::RawSocket(_) | IpcOp::IdleConnections(_) => {
                bail!("{op:?} is not a client operation")
            }
            // Opt-in and not implemented here: `implements` says no, the harness answers for it.
            // Issue 31's subscription families (`subscriptions.rs`, the storm `storm.rs`).
            IpcOp::Subscription(s) => subscriptions::client(&t, s)?,
        })
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        let s = Service::connect(transport)?;
        cached_items(&s.proxy()?)
    }
}

/// A held `connect/idle-connections` connection: closed ([`close`]) when dropped.
struct IdleConnection(DBusConnection);

impl Drop for IdleConnection {
    fn drop(&mut self) {
        let _ = close(&self.0);
    }
}

/// Writes what is queued (`flush_sync`), then closes the connection and
/// waits for the worker thread to have closed the stream (`close_sync`;
/// `is_closed` may still say false for a moment, until the worker's closed
/// callback ran).
fn close(conn: &DBusConnection) -> Result<()> {
    conn.flush_sync(NO_CANCEL).context("flushing")?;
    conn.close_sync(NO_CANCEL).context("closing")
}
