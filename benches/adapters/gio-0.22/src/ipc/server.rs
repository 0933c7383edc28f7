//! The benchmark service on GDBus: `register_object` with the interface
//! parsed from the harness's introspection XML, on a bus connection that owns
//! the service name, or on every connection a `DBusServer` accepts peer to
//! peer. GDBus answers the standard interfaces (Introspectable, Peer,
//! Properties) and refuses unknown members and arguments of the wrong type
//! before a handler runs. Handlers run on GLib's global default main context,
//! which `MainLoop::run` iterates on the calling thread.

use std::cell::RefCell;
use std::rc::Rc;

use anyhow::{bail, Context, Result};
use gio::{DBusConnection, DBusInterfaceInfo, DBusMethodInvocation, DBusNodeInfo, DBusServer, DBusServerFlags};
use glib::variant::{ObjectPath, ToVariant};
use glib::Variant;
use harness::ipc::{self as h, introspect, Method, Transport};

use super::{call_bus, connect, NO_CANCEL};
use crate::variant;

/// RequestName's DBUS_NAME_FLAG_DO_NOT_QUEUE, without ALLOW_REPLACEMENT or REPLACE_EXISTING.
const DO_NOT_QUEUE: u32 = 4;
/// RequestName's DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER.
const PRIMARY_OWNER: u32 = 1;

const UNKNOWN_METHOD: &str = "org.freedesktop.DBus.Error.UnknownMethod";
const INVALID_ARGS: &str = "org.freedesktop.DBus.Error.InvalidArgs";

/// The data of the served object (`harness::ipc`'s table).
struct BenchData {
    object_ref: (String, ObjectPath),
    relation_set: Vec<(String, ObjectPath)>,
    items: Vec<(String, String)>,
}

impl BenchData {
    fn new(service_name: &str) -> Self {
        let object_ref = |i| {
            let path = ObjectPath::try_from(h::object_path(i)).expect("a valid object path");
            (service_name.to_owned(), path)
        };
        BenchData {
            object_ref: object_ref(0),
            relation_set: (0..10).map(object_ref).collect(),
            items: h::items(),
        }
    }

    /// The reply body of `method` called with `args` (already checked by GDBus
    /// against the interface's in signature); `None` for an empty reply.
    fn reply(&self, method: Method, args: &Variant) -> Result<Option<Variant>> {
        Ok(match method {
            Method::Void => None,
            Method::InInt => {
                variant::get::<(i32,)>(args)?;
                None
            }
            Method::OutInt => Some((h::OUT_INT,).to_variant()),
            Method::InOutInt => Some((variant::get::<(i32,)>(args)?.0 + 1,).to_variant()),
            Method::InString => {
                variant::get::<(String,)>(args)?;
                None
            }
            Method::OutString => Some((h::OUT_STRING,).to_variant()),
            Method::InOutString => Some(variant::get::<(String,)>(args)?.to_variant()),
            Method::ObjectRef => Some((self.object_ref.clone(),).to_variant()),
            Method::RelationSet => Some((self.relation_set.clone(),).to_variant()),
        })
    }

    fn answer(&self, member: &str, args: &Variant, invocation: DBusMethodInvocation) {
        let reply = if member == h::ECHO_BYTES {
            echo(args).map(Some)
        } else if let Some(method) = Method::ALL.into_iter().find(|m| m.member() == member) {
            self.reply(method, args)
        } else {
            // GDBus refuses members absent from the interface info before this runs.
            return invocation.return_dbus_error(UNKNOWN_METHOD, &format!("no method {member}"));
        };
        match reply {
            Ok(body) => invocation.return_value(body.as_ref()),
            Err(e) => invocation.return_dbus_error(INVALID_ARGS, &format!("{e:#}")),
        }
    }
}

/// `EchoBytes`: the `ay` argument, read as a slice, in a new reply.
fn echo(args: &Variant) -> Result<Variant> {
    let data = args.try_child_value(0).context("EchoBytes without an argument")?;
    Ok(Variant::tuple_from_iter([Variant::array_from_fixed_array(
        data.fixed_array::<u8>()?,
    )]))
}

fn interface_info() -> Result<DBusInterfaceInfo> {
    let node = DBusNodeInfo::for_xml(&introspect::introspection_xml()).context("parsing the introspection XML")?;
    node.lookup_interface(h::INTERFACE)
        .with_context(|| format!("{} is not in the introspection XML", h::INTERFACE))
}

/// Exports the service object on `conn`.
fn register(conn: &DBusConnection, iface: &DBusInterfaceInfo, service_name: &str) -> Result<()> {
    let data = Rc::new(BenchData::new(service_name));
    let for_properties = data.clone();
    conn.register_object(h::OBJECT_PATH, iface)
        .method_call(move |_conn, _sender, _path, _iface, member, args, invocation| {
            data.answer(member, &args, invocation)
        })
        // Called only for properties of the interface info (`Items`, read-only).
        .property(move |_conn, _sender, _path, _iface, _property| for_properties.items.to_variant())
        .build()
        .context("registering the object")?;
    super::fds::register(conn)?;
    Ok(())
}

fn request_name(conn: &DBusConnection, name: &str) -> Result<()> {
    let reply = call_bus(conn, "RequestName", Some(&(name, DO_NOT_QUEUE).to_variant()), "(u)")?;
    let (code,) = variant::get::<(u32,)>(&reply)?;
    if code != PRIMARY_OWNER {
        bail!("requesting {name}: reply {code} (3 = already owned)");
    }
    Ok(())
}

/// Drops an incoming message with serial 0 (the specification forbids it)
/// before GDBus dispatches it: answering one crashed GDBus (SIGSEGV), which
/// killed the peer-to-peer server for every peer (issue 42, 6). On a bus the
/// daemon refuses such a message itself.
fn drop_serial_zero(conn: &DBusConnection) {
    conn.add_filter(|_, message, incoming| {
        if incoming && message.serial() == 0 {
            None
        } else {
            Some(message.clone())
        }
    });
}

pub fn serve(t: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
    let iface = interface_info()?;
    // `None`: GLib's global default context, where the handlers were registered.
    let main_loop = glib::MainLoop::new(None, false);
    match t {
        Transport::Bus { service_name, .. } => {
            let conn = connect(t).context("connecting the server to the bus")?;
            register(&conn, &iface, service_name)?;
            // On the bus only: see `props::NOT_PEER_TO_PEER`.
            super::props::register(&conn)?;
            request_name(&conn, service_name)?;
            let on_close = main_loop.clone();
            conn.connect_closed(move |_, _, _| on_close.quit());
            ready();
            main_loop.run();
            bail!("the bus closed the server's connection")
        }
        Transport::P2p { socket } => {
            // A stale socket file from an earlier server would make the bind fail.
            let _ = std::fs::remove_file(socket);
            let server = DBusServer::new_sync(
                &t.address(),
                DBusServerFlags::NONE,
                &gio::dbus_generate_guid(),
                None,
                NO_CANCEL,
            )
            .with_context(|| format!("listening on {}", t.address()))?;
            // GDBus keeps no reference to an accepted connection: the server does.
            let peers = RefCell::new(Vec::<DBusConnection>::new());
            server.connect_new_connection(move |_, conn| {
                drop_serial_zero(conn);
                peers.borrow_mut().retain(|c| !c.is_closed());
                match register(conn, &iface, "") {
                    Ok(()) => {
                        peers.borrow_mut().push(conn.clone());
                        true
                    }
                    Err(e) => {
                        eprintln!("refusing a peer: {e:#}");
                        false
                    }
                }
            });
            server.start();
            ready();
            main_loop.run();
            unreachable!("nothing quits the peer-to-peer main loop")
        }
    }
}
