//! `property/get-all/<n>` and `objects/get-managed-objects/<n>` (harness::ipc::props) on
//! zbus 1's synchronous API, served by the bus server's `ObjectServer` (src/ipc.rs): the
//! n properties as a hand-written `Interface` (`#[dbus_interface]` needs one Rust method
//! per property), the children as `#[dbus_interface]` objects. zbus 1.9.3 serves no
//! `org.freedesktop.DBus.ObjectManager` (its src/fdo.rs has only the proxy), so each
//! manager is a hand-written `Interface` answering `GetManagedObjects` with a reply body
//! built once from the same table (as the servers without an object layer do). The
//! client calls `fdo::PropertiesProxy::get_all` and `fdo::ObjectManagerProxy::get_managed_objects`.

use std::collections::HashMap;
use std::convert::TryInto;
use std::fmt::Write;

use anyhow::{bail, Context, Result};
use harness::ipc::props::{self as p, PropValue};
use harness::ipc::Transport;
use zbus::{dbus_interface, fdo, Connection, Interface, Message, ObjectServer};
use zvariant::{OwnedObjectPath, OwnedValue, Value};

use crate::ipc::connect;

type Op = Box<dyn FnMut() -> Result<u64>>;

/// What `GetManagedObjects` answers: path → interface → property → value.
type ManagedObjects = HashMap<OwnedObjectPath, HashMap<String, HashMap<String, OwnedValue>>>;

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

fn property_xml(writer: &mut dyn Write, pad: &str, name: &str, sig: &str) {
    // Constant: sd-bus and busctl show it as `const`, as for the other servers' tables.
    let _ = writeln!(
        writer,
        "{pad}  <property name=\"{name}\" type=\"{sig}\" access=\"read\">\n{pad}    \
         <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"const\"/>\n\
         {pad}  </property>"
    );
}

/// The `n` properties of `org.dbusmatrix.Props`, all read-only.
struct PropsObject {
    values: HashMap<String, OwnedValue>,
    signatures: Vec<(String, &'static str)>,
}

impl Interface for PropsObject {
    fn name() -> &'static str {
        p::PROPS_INTERFACE
    }

    fn get(&self, property_name: &str) -> Option<fdo::Result<OwnedValue>> {
        self.values.get(property_name).cloned().map(Ok)
    }

    fn get_all(&self) -> HashMap<String, OwnedValue> {
        self.values.clone()
    }

    fn set(&mut self, property_name: &str, _value: &Value<'_>) -> Option<fdo::Result<()>> {
        self.values
            .contains_key(property_name)
            .then(|| Err(fdo::Error::PropertyReadOnly(property_name.to_owned())))
    }

    fn call(&self, _connection: &Connection, _msg: &Message, _name: &str) -> Option<zbus::Result<u32>> {
        None
    }

    fn call_mut(&mut self, _connection: &Connection, _msg: &Message, _name: &str) -> Option<zbus::Result<u32>> {
        None
    }

    fn introspect_to_writer(&self, writer: &mut dyn Write, level: usize) {
        let pad = " ".repeat(level);
        let _ = writeln!(writer, "{pad}<interface name=\"{}\">", p::PROPS_INTERFACE);
        for (name, sig) in &self.signatures {
            property_xml(writer, &pad, name, sig);
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

/// A manager: `GetManagedObjects` answered with the reply built once.
struct Manager(ManagedObjects);

impl Interface for Manager {
    fn name() -> &'static str {
        "org.freedesktop.DBus.ObjectManager"
    }

    fn get(&self, _property_name: &str) -> Option<fdo::Result<OwnedValue>> {
        None
    }

    fn get_all(&self) -> HashMap<String, OwnedValue> {
        HashMap::new()
    }

    fn set(&mut self, _property_name: &str, _value: &Value<'_>) -> Option<fdo::Result<()>> {
        None
    }

    fn call(&self, connection: &Connection, msg: &Message, name: &str) -> Option<zbus::Result<u32>> {
        (name == "GetManagedObjects").then(|| connection.reply(msg, &self.0))
    }

    fn call_mut(&mut self, connection: &Connection, msg: &Message, name: &str) -> Option<zbus::Result<u32>> {
        self.call(connection, msg, name)
    }

    fn introspect_to_writer(&self, writer: &mut dyn Write, level: usize) {
        let pad = " ".repeat(level);
        let _ = writeln!(
            writer,
            "{pad}<interface name=\"org.freedesktop.DBus.ObjectManager\">\n{pad}  <method \
             name=\"GetManagedObjects\">\n{pad}    <arg type=\"a{{oa{{sa{{sv}}}}}}\" direction=\"out\"/>\n{pad}  \
             </method>\n{pad}</interface>"
        );
    }
}

/// Every object of both families on the bus server's `ObjectServer`.
pub fn serve_all(server: &mut ObjectServer<'_>) -> Result<()> {
    for n in p::PROPS_COUNTS {
        let props = p::properties(n);
        let object = PropsObject {
            signatures: props.iter().map(|(k, v)| (k.clone(), v.signature())).collect(),
            values: props.into_iter().map(|(k, v)| (k, to_value(v))).collect(),
        };
        server.at(&p::props_path(n).as_str().try_into()?, object)?;
        let mut managed = ManagedObjects::new();
        for i in 0..n {
            let path = p::object_child_path(n, i);
            server.at(&path.as_str().try_into()?, item(i))?;
            let props = p::item_properties(i)
                .into_iter()
                .map(|(k, v)| (k.to_owned(), to_value(v)))
                .collect();
            managed.insert(path.try_into()?, HashMap::from([(p::ITEM_INTERFACE.to_owned(), props)]));
        }
        server.at(&p::objects_path(n).as_str().try_into()?, Manager(managed))?;
    }
    Ok(())
}

/// `property/get-all/<n>`: one `PropertiesProxy::get_all` per op.
pub fn get_all_client(t: &Transport, n: usize) -> Result<Op> {
    let proxy = fdo::PropertiesProxy::new_for_owned(connect(t)?, t.service_name().to_owned(), p::props_path(n))?;
    Ok(Box::new(move || {
        let all = proxy.get_all(p::PROPS_INTERFACE).context("Properties.GetAll")?;
        let props = all
            .iter()
            .map(|(k, v)| Ok((k.as_str(), from_value(k, v)?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(p::properties_digest(props))
    }))
}

/// `objects/get-managed-objects/<n>`: one `ObjectManagerProxy::get_managed_objects` per op.
pub fn managed_objects_client(t: &Transport, n: usize) -> Result<Op> {
    let proxy = fdo::ObjectManagerProxy::new_for_owned(connect(t)?, t.service_name().to_owned(), p::objects_path(n))?;
    Ok(Box::new(move || {
        let objects = proxy.get_managed_objects().context("ObjectManager.GetManagedObjects")?;
        let mut items = Vec::with_capacity(objects.len());
        for (path, interfaces) in &objects {
            let Some(props) = interfaces.get(p::ITEM_INTERFACE) else {
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
