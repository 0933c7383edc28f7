//! `property/get-all/<n>` and `objects/get-managed-objects/<n>` (harness::ipc::props)
//! with zbus 4: served by zbus' ObjectServer (the `n` properties as a hand-written `Interface`,
//! since `#[interface]` needs one Rust method per property; the objects as
//! `#[interface]` children of an `fdo::ObjectManager`), called through the blocking
//! `fdo::PropertiesProxyBlocking::get_all` and `fdo::ObjectManagerProxyBlocking::get_managed_objects`.
//! The shape of adapters/zbus-5/src/props.rs, with zbus 4's `Interface` signatures
//! (property getters without server or connection arguments, `DispatchResult`).

use std::collections::HashMap;

use anyhow::{bail, Context, Result};
use harness::ipc::props::{self as p, PropValue};
use harness::ipc::Transport;
use zbus::blocking::{self, fdo as bfdo};
use zbus::names::InterfaceName;
use zbus::object_server::{DispatchResult, Interface, SignalContext};
use zbus::zvariant::{OwnedValue, Value};
use zbus::{fdo, interface, message, Connection, ObjectServer};

fn to_variant(v: PropValue) -> OwnedValue {
    let v = match v {
        PropValue::Str(s) => Value::from(s),
        PropValue::U32(u) => Value::from(u),
        PropValue::Bool(b) => Value::from(b),
    };
    OwnedValue::try_from(v).expect("a string, u32 or bool has no fd")
}

fn from_variant(name: &str, v: &OwnedValue) -> Result<PropValue> {
    Ok(match &**v {
        Value::Str(s) => PropValue::Str(s.as_str().to_owned()),
        Value::U32(u) => PropValue::U32(*u),
        Value::Bool(b) => PropValue::Bool(*b),
        other => bail!("property {name}: unexpected value {other:?}"),
    })
}

/// zvariant 4's `OwnedValue` is not `Clone`: `try_clone` (it could hold an fd; these never do).
fn copy(v: &OwnedValue) -> fdo::Result<OwnedValue> {
    v.try_clone().map_err(|e| fdo::Error::Failed(e.to_string()))
}

/// The `n` properties of `org.dbusmatrix.Props`, all read-only.
struct PropsObject {
    values: HashMap<String, OwnedValue>,
    signatures: Vec<(String, &'static str)>,
}

impl PropsObject {
    fn new(n: usize) -> Self {
        let props = p::properties(n);
        PropsObject {
            signatures: props.iter().map(|(k, v)| (k.clone(), v.signature())).collect(),
            values: props.into_iter().map(|(k, v)| (k, to_variant(v))).collect(),
        }
    }
}

#[async_trait::async_trait]
impl Interface for PropsObject {
    fn name() -> InterfaceName<'static> {
        InterfaceName::from_static_str_unchecked(p::PROPS_INTERFACE)
    }

    async fn get(&self, property_name: &str) -> Option<fdo::Result<OwnedValue>> {
        self.values.get(property_name).map(copy)
    }

    async fn get_all(&self) -> fdo::Result<HashMap<String, OwnedValue>> {
        self.values.iter().map(|(k, v)| Ok((k.clone(), copy(v)?))).collect()
    }

    async fn set_mut(
        &mut self,
        property_name: &str,
        _value: &Value<'_>,
        _ctxt: &SignalContext<'_>,
    ) -> Option<fdo::Result<()>> {
        self.values
            .contains_key(property_name)
            .then(|| Err(fdo::Error::PropertyReadOnly(property_name.to_owned())))
    }

    fn call<'call>(
        &'call self,
        _server: &'call ObjectServer,
        _connection: &'call Connection,
        _msg: &'call message::Message,
        _name: zbus::names::MemberName<'call>,
    ) -> DispatchResult<'call> {
        DispatchResult::NotFound
    }

    fn call_mut<'call>(
        &'call mut self,
        _server: &'call ObjectServer,
        _connection: &'call Connection,
        _msg: &'call message::Message,
        _name: zbus::names::MemberName<'call>,
    ) -> DispatchResult<'call> {
        DispatchResult::NotFound
    }

    fn introspect_to_writer(&self, writer: &mut dyn std::fmt::Write, level: usize) {
        let pad = " ".repeat(level);
        let _ = writeln!(writer, "{pad}<interface name=\"{}\">", p::PROPS_INTERFACE);
        for (name, sig) in &self.signatures {
            // Constant: sd-bus and busctl show it as `const`, as for the other servers' tables.
            let _ = writeln!(
                writer,
                "{pad}  <property name=\"{name}\" type=\"{sig}\" access=\"read\">\n{pad}    \
                 <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"const\"/>\n\
                 {pad}  </property>"
            );
        }
        let _ = writeln!(writer, "{pad}</interface>");
    }
}

/// A child of the `objects/get-managed-objects/<n>` manager.
struct Item {
    id: String,
    index: u32,
    enabled: bool,
}

#[interface(name = "org.dbusmatrix.Item")]
impl Item {
    #[zbus(property)]
    fn id(&self) -> &str {
        &self.id
    }

    #[zbus(property)]
    fn index(&self) -> u32 {
        self.index
    }

    #[zbus(property)]
    fn enabled(&self) -> bool {
        self.enabled
    }
}

fn item(i: usize) -> Item {
    let mut it = Item {
        id: String::new(),
        index: 0,
        enabled: false,
    };
    for (name, value) in p::item_properties(i) {
        match (name, value) {
            ("Id", PropValue::Str(s)) => it.id = s,
            ("Index", PropValue::U32(u)) => it.index = u,
            ("Enabled", PropValue::Bool(b)) => it.enabled = b,
            other => unreachable!("harness::ipc::props::item_properties changed: {other:?}"),
        }
    }
    it
}

/// Why the adapter's p2p server does not serve them (an adapter choice, not a zbus limit).
pub const NOT_PEER_TO_PEER: &str = "this adapter does not serve property/get-all and objects/get-managed-objects \
     peer to peer yet: zbus's object server is per connection, and registering both families' 2020 objects on \
     every accepted connection (fdo::ObjectManager announcing each child with InterfacesAdded) would make every \
     peer-to-peer connection of this server slower (about 30 ms per connection with zbus 6, measured there), \
     which would change the other p2p cells; objects built only when first asked for are not written yet";

/// Every object of both families on `server` (a bus server's one connection): the props objects, then per
/// manager its children and last the manager (which announces them once).
pub fn serve_all(server: &blocking::ObjectServer) -> zbus::Result<()> {
    for n in p::PROPS_COUNTS {
        server.at(p::props_path(n), PropsObject::new(n))?;
        for i in 0..n {
            server.at(p::object_child_path(n, i), item(i))?;
        }
        server.at(p::objects_path(n), fdo::ObjectManager)?;
    }
    Ok(())
}

/// The destination of the client's calls: the service name on a bus; peer to
/// peer any valid name (the peer ignores it).
fn destination(t: &Transport) -> String {
    match t {
        Transport::Bus { service_name, .. } => service_name.clone(),
        Transport::P2p { .. } => p::PROPS_INTERFACE.to_owned(),
    }
}

/// `property/get-all/<n>`: the proxy of one `PropertiesProxyBlocking::get_all` per call.
pub fn get_all_client(conn: &blocking::Connection, t: &Transport, n: usize) -> Result<bfdo::PropertiesProxy<'static>> {
    Ok(bfdo::PropertiesProxy::builder(conn)
        .destination(destination(t))?
        .path(p::props_path(n))?
        .build()?)
}

pub fn get_all(proxy: &bfdo::PropertiesProxy<'_>) -> Result<u64> {
    let iface = InterfaceName::from_static_str_unchecked(p::PROPS_INTERFACE);
    let all = proxy.get_all(Some(iface).into()).context("Properties.GetAll")?;
    let props = all
        .iter()
        .map(|(k, v)| Ok((k.as_str(), from_variant(k, v)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(p::properties_digest(props))
}

/// `objects/get-managed-objects/<n>`: the proxy of one `get_managed_objects` per call.
pub fn managed_objects_client(
    conn: &blocking::Connection,
    t: &Transport,
    n: usize,
) -> Result<bfdo::ObjectManagerProxy<'static>> {
    Ok(bfdo::ObjectManagerProxy::builder(conn)
        .destination(destination(t))?
        .path(p::objects_path(n))?
        .build()?)
}

pub fn managed_objects(proxy: &bfdo::ObjectManagerProxy<'_>) -> Result<u64> {
    let objects = proxy.get_managed_objects().context("ObjectManager.GetManagedObjects")?;
    let mut items = Vec::with_capacity(objects.len());
    for (path, interfaces) in &objects {
        // Only the benchmark interface counts (a server may list the standard ones too).
        let Some(props) = interfaces
            .iter()
            .find(|(name, _)| name.as_str() == p::ITEM_INTERFACE)
            .map(|(_, v)| v)
        else {
            continue;
        };
        let props = props
            .iter()
            .map(|(k, v)| Ok((k.as_str(), from_variant(k, v)?)))
            .collect::<Result<Vec<_>>>()?;
        items.push((path.as_str(), props));
    }
    Ok(p::managed_objects_digest(items))
}
