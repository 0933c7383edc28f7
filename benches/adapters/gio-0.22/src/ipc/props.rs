//! `property/get-all/<n>` and `objects/get-managed-objects/<n>` (harness::ipc::props)
//! on GDBus. Server: `register_object` per object with interface info parsed
//! from XML (the n read-only properties; each child's `org.dbusmatrix.Item`),
//! GDBus answering `Properties.GetAll` itself from the property getter; gio-rs
//! has no binding for writing a `GDBusInterfaceSkeleton` that
//! `DBusObjectManagerServer` would export, so each manager is an object with
//! the ObjectManager interface whose `GetManagedObjects` returns a reply built
//! once at start. Client: `call_sync` of GetAll / GetManagedObjects with the
//! reply type GDBus checks (`DBusProxy` would read every property once, at
//! creation, and answer from its cache after that).

use std::collections::HashMap;

use anyhow::{anyhow, bail, Context, Result};
use gio::{DBusConnection, DBusInterfaceInfo, DBusNodeInfo};
use glib::variant::{ObjectPath, ToVariant};
use glib::{Variant, VariantTy};
use harness::ipc::props::{self as p, PropValue};
use harness::ipc::Transport;

use super::call_sync;

/// Why the adapter's p2p server does not serve them (an adapter choice, not a GDBus limit).
pub const NOT_PEER_TO_PEER: &str = "this adapter does not serve property/get-all and objects/get-managed-objects \
     peer to peer yet: its p2p server registers objects on every accepted connection, and registering both \
     families' 2020 objects there would slow every peer-to-peer connection (25-30 ms each for the zbus and sd-bus \
     servers, measured there), which would change the other p2p cells";

fn to_variant(v: &PropValue) -> Variant {
    match v {
        PropValue::Str(s) => s.to_variant(),
        PropValue::U32(u) => u.to_variant(),
        PropValue::Bool(b) => b.to_variant(),
    }
}

/// Interface info of `name` with read-only properties of these signatures.
fn interface_info<'a>(
    name: &str,
    props: impl IntoIterator<Item = (&'a str, &'static str)>,
) -> Result<DBusInterfaceInfo> {
    let mut xml = format!("<node><interface name=\"{name}\">");
    for (prop, sig) in props {
        xml += &format!("<property name=\"{prop}\" type=\"{sig}\" access=\"read\"/>");
    }
    xml += "</interface></node>";
    let node = DBusNodeInfo::for_xml(&xml).with_context(|| format!("parsing the XML of {name}"))?;
    node.lookup_interface(name)
        .with_context(|| format!("{name} not in its XML"))
}

fn manager_info() -> Result<DBusInterfaceInfo> {
    let xml = format!(
        "<node><interface name=\"{}\"><method name=\"GetManagedObjects\">\
         <arg name=\"objects\" type=\"a{{oa{{sa{{sv}}}}}}\" direction=\"out\"/></method></interface></node>",
        p::OBJECT_MANAGER_INTERFACE
    );
    let node = DBusNodeInfo::for_xml(&xml).context("parsing the ObjectManager XML")?;
    node.lookup_interface(p::OBJECT_MANAGER_INTERFACE)
        .context("ObjectManager not in its XML")
}

/// A read-only object: GDBus calls the getter for each property GetAll lists.
fn register_props(
    conn: &DBusConnection,
    path: &str,
    info: &DBusInterfaceInfo,
    props: Vec<(String, PropValue)>,
) -> Result<()> {
    let values: HashMap<String, Variant> = props.iter().map(|(k, v)| (k.clone(), to_variant(v))).collect();
    conn.register_object(path, info)
        // Called only for properties of the interface info.
        .property(move |_conn, _sender, _path, _iface, name| {
            values.get(name).cloned().unwrap_or_else(|| false.to_variant())
        })
        .build()
        .with_context(|| format!("registering {path}"))?;
    Ok(())
}

/// Every object of both families on a bus server's connection.
pub fn register(conn: &DBusConnection) -> Result<()> {
    let item_info = interface_info(
        p::ITEM_INTERFACE,
        p::item_properties(0).into_iter().map(|(k, v)| (k, v.signature())),
    )?;
    let manager = manager_info()?;
    for n in p::PROPS_COUNTS {
        let props = p::properties(n);
        let info = interface_info(
            p::PROPS_INTERFACE,
            props.iter().map(|(k, v)| (k.as_str(), v.signature())),
        )?;
        register_props(conn, &p::props_path(n), &info, props)?;
        let mut objects: HashMap<ObjectPath, HashMap<String, HashMap<String, Variant>>> = HashMap::new();
        for i in 0..n {
            let path = p::object_child_path(n, i);
            let props: Vec<(String, PropValue)> = p::item_properties(i)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect();
            let values = props.iter().map(|(k, v)| (k.clone(), to_variant(v))).collect();
            let object = ObjectPath::try_from(path.clone()).map_err(|e| anyhow!("{path}: {e}"))?;
            objects.insert(object, HashMap::from([(p::ITEM_INTERFACE.to_owned(), values)]));
            register_props(conn, &path, &item_info, props)?;
        }
        let reply = Variant::tuple_from_iter([objects.to_variant()]);
        conn.register_object(&p::objects_path(n), &manager)
            // GDBus refuses other members and arguments before this runs.
            .method_call(move |_conn, _sender, _path, _iface, _member, _args, invocation| {
                invocation.return_value(Some(&reply))
            })
            .build()
            .with_context(|| format!("registering the manager {}", p::objects_path(n)))?;
    }
    Ok(())
}

/// An `a{sv}` as (name, value); `s`, `u` and `b` only.
fn props_of(dict: &Variant) -> Result<Vec<(String, PropValue)>> {
    let mut out = Vec::with_capacity(dict.n_children());
    for entry in dict.iter() {
        let name = crate::variant::str(&entry.child_value(0))?.to_owned();
        let value = entry
            .child_value(1)
            .as_variant()
            .with_context(|| format!("property {name}: not a variant"))?;
        let value = match value.type_().as_str() {
            "s" => PropValue::Str(crate::variant::str(&value)?.to_owned()),
            "u" => PropValue::U32(crate::variant::get::<u32>(&value)?),
            "b" => PropValue::Bool(crate::variant::get::<bool>(&value)?),
            other => bail!("property {name}: unexpected type {other}"),
        };
        out.push((name, value));
    }
    Ok(out)
}

/// The destination of the client's calls: the service name on a bus, none peer to peer.
fn destination(t: &Transport) -> Option<String> {
    (!t.is_p2p()).then(|| t.service_name().to_owned())
}

/// One `Properties.GetAll` of the benchmark interface; its digest.
pub fn get_all(conn: &DBusConnection, t: &Transport, n: usize) -> Result<u64> {
    let dest = destination(t);
    let path = p::props_path(n);
    let reply = call_sync(
        conn,
        (dest.as_deref(), &path, p::PROPERTIES_INTERFACE),
        "GetAll",
        Some(&(p::PROPS_INTERFACE,).to_variant()),
        VariantTy::new("(a{sv})").expect("a valid type"),
    )
    .context("Properties.GetAll")?;
    Ok(p::properties_digest(props_of(&reply.child_value(0))?))
}

/// One `ObjectManager.GetManagedObjects`; the digest of the benchmark interface's entries.
pub fn managed_objects(conn: &DBusConnection, t: &Transport, n: usize) -> Result<u64> {
    let dest = destination(t);
    let path = p::objects_path(n);
    let reply = call_sync(
        conn,
        (dest.as_deref(), &path, p::OBJECT_MANAGER_INTERFACE),
        "GetManagedObjects",
        None,
        VariantTy::new("(a{oa{sa{sv}}})").expect("a valid type"),
    )
    .context("ObjectManager.GetManagedObjects")?;
    let mut items = Vec::new();
    for object in reply.child_value(0).iter() {
        let path = crate::variant::str(&object.child_value(0))?.to_owned();
        // Only the benchmark interface counts (a server may list the standard ones too).
        for interface in object.child_value(1).iter() {
            if crate::variant::str(&interface.child_value(0))? == p::ITEM_INTERFACE {
                items.push((path.clone(), props_of(&interface.child_value(1))?));
            }
        }
    }
    Ok(p::managed_objects_digest(items))
}
