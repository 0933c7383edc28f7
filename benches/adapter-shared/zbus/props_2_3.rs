//! `property/get-all/<n>` and `objects/get-managed-objects/<n>` (harness::ipc::props) with
//! zbus 2 and 3 (compiled as `ipc::props` of adapter-zbus-2 and -3 through ipc_2_3.rs;
//! zbus 4 to 6 have props.rs): served by zbus's `ObjectServer` of the bus server's
//! connection, the `n` properties as a hand-written `Interface` (`#[dbus_interface]` needs
//! one Rust method per property; zbus 2 and 3's trait is the same text), the objects as
//! `#[dbus_interface]` children of an `fdo::ObjectManager`; the client calls
//! `blocking::fdo::PropertiesProxy::get_all` and `ObjectManagerProxy::get_managed_objects`.

use std::collections::HashMap;
use std::fmt::Write;

use anyhow::{bail, Context, Result};
use harness::ipc::props::{self as p, PropValue};
use harness::ipc::Transport;
use zbus::blocking::{self, fdo as bfdo};
use zbus::names::{InterfaceName, MemberName};
use zbus::zvariant::{OwnedValue, Value};
use zbus::{dbus_interface, fdo, DispatchResult, Interface, Message, ObjectServer, SignalContext};

/// Why the adapter's p2p server does not serve them (an adapter choice, not a zbus limit;
/// zbus 4 to 6's adapters make the same one, ipc_blocking.rs says why).
pub const NOT_PEER_TO_PEER: &str = "this adapter does not serve property/get-all and objects/get-managed-objects \
     peer to peer yet: zbus's object server is per connection, and registering both families' 2020 objects on \
     every accepted connection would make every peer-to-peer connection of this server slower, which would \
     change the other p2p cells";

fn to_value(v: PropValue) -> OwnedValue {
    OwnedValue::from(match v {
        PropValue::Str(s) => Value::from(s),
        PropValue::U32(u) => Value::from(u),
        PropValue::Bool(b) => Value::from(b),
    })
}

fn from_value(name: &str, v: &OwnedValue) -> Result<PropValue> {
    Ok(match &**v {
        Value::Str(s) => PropValue::Str(s.as_str().to_owned()),
        Value::U32(u) => PropValue::U32(*u),
        Value::Bool(b) => PropValue::Bool(*b),
        other => bail!("property {name}: unexpected value {other:?}"),
    })
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
            values: props.into_iter().map(|(k, v)| (k, to_value(v))).collect(),
        }
    }
}

#[zbus::export::async_trait::async_trait]
impl Interface for PropsObject {
    fn name() -> InterfaceName<'static> {
        InterfaceName::from_static_str_unchecked(p::PROPS_INTERFACE)
    }

    async fn get(&self, property_name: &str) -> Option<fdo::Result<OwnedValue>> {
        self.values.get(property_name).cloned().map(Ok)
    }

    async fn get_all(&self) -> HashMap<String, OwnedValue> {
        self.values.clone()
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
        _connection: &'call zbus::Connection,
        _msg: &'call Message,
        _name: MemberName<'call>,
    ) -> DispatchResult<'call> {
        DispatchResult::NotFound
    }

    fn call_mut<'call>(
        &'call mut self,
        _server: &'call ObjectServer,
        _connection: &'call zbus::Connection,
        _msg: &'call Message,
        _name: MemberName<'call>,
    ) -> DispatchResult<'call> {
        DispatchResult::NotFound
    }

    fn introspect_to_writer(&self, writer: &mut dyn Write, level: usize) {
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

#[dbus_interface(name = "org.dbusmatrix.Item")]
impl Item {
    #[dbus_interface(property)]
    fn id(&self) -> &str {
        &self.id
    }

    #[dbus_interface(property)]
    fn index(&self) -> u32 {
        self.index
    }

    #[dbus_interface(property)]
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

/// Every object of both families on the bus server's connection (before it owns the
/// service name, so no call arrives first): the props objects, then per manager its
/// children and last the manager (which announces them once).
pub fn serve_all(conn: &blocking::Connection) -> zbus::Result<()> {
    let server = conn.object_server();
    for n in p::PROPS_COUNTS {
        server.at(p::props_path(n), PropsObject::new(n))?;
        for i in 0..n {
            server.at(p::object_child_path(n, i), item(i))?;
        }
        server.at(p::objects_path(n), fdo::ObjectManager)?;
    }
    Ok(())
}

/// `property/get-all/<n>`: one blocking `PropertiesProxy::get_all` per op.
pub fn get_all_client(conn: blocking::Connection, t: &Transport, n: usize) -> Result<super::Op<'static>> {
    let proxy = bfdo::PropertiesProxy::builder(&conn)
        .destination(t.service_name().to_owned())?
        .path(p::props_path(n))?
        .build()?;
    Ok(Box::new(move || {
        let iface = InterfaceName::from_static_str_unchecked(p::PROPS_INTERFACE);
        let all = proxy.get_all(iface).context("Properties.GetAll")?;
        let props = all
            .iter()
            .map(|(k, v)| Ok((k.as_str(), from_value(k, v)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(p::properties_digest(props))
    }))
}

/// `objects/get-managed-objects/<n>`: one blocking `get_managed_objects` per op.
pub fn managed_objects_client(conn: blocking::Connection, t: &Transport, n: usize) -> Result<super::Op<'static>> {
    let proxy = bfdo::ObjectManagerProxy::builder(&conn)
        .destination(t.service_name().to_owned())?
        .path(p::objects_path(n))?
        .build()?;
    Ok(Box::new(move || {
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
                .map(|(k, v)| Ok((k.as_str(), from_value(k, v)?)))
                .collect::<Result<Vec<_>>>()?;
            items.push((path.as_str(), props));
        }
        Ok(p::managed_objects_digest(items))
    }))
}
