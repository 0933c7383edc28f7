//! `property/get-all/<n>` and `objects/get-managed-objects/<n>` (harness::ipc::props) with
//! zbus 4, 5 and 6 (compiled by adapter-zbus-4, -5, -6 and -6-tokio through `#[path]`):
//! served by zbus' ObjectServer, the `n` properties as a hand-written `Interface` (since
//! `#[interface]` needs one Rust method per property; its `impl Interface`, whose
//! signatures change with every major, is in each `crate::compat`), the objects as
//! `#[interface]` children of an `fdo::ObjectManager`; and how the replies of
//! `Properties.GetAll` and `ObjectManager.GetManagedObjects` are digested. Serving and
//! calling (blocking in zbus 4 and 5, async in 6) are in ipc_blocking.rs and ipc_async.rs.

use std::collections::HashMap;

use anyhow::{bail, Result};
use harness::ipc::props::{self as p, PropValue};
use harness::ipc::Transport;
use zbus::{fdo, interface};

use crate::compat::{OwnedVariant, Variant};

fn to_variant(v: PropValue) -> OwnedVariant {
    let v = match v {
        PropValue::Str(s) => Variant::from(s),
        PropValue::U32(u) => Variant::from(u),
        PropValue::Bool(b) => Variant::from(b),
    };
    OwnedVariant::try_from(v).expect("a string, u32 or bool has no fd")
}

fn from_variant(name: &str, v: &OwnedVariant) -> Result<PropValue> {
    Ok(match &**v {
        Variant::Str(s) => PropValue::Str(s.as_str().to_owned()),
        Variant::U32(u) => PropValue::U32(*u),
        Variant::Bool(b) => PropValue::Bool(*b),
        other => bail!("property {name}: unexpected value {other:?}"),
    })
}

/// The `n` properties of `org.dbusmatrix.Props`, all read-only.
pub struct PropsObject {
    pub values: HashMap<String, OwnedVariant>,
    signatures: Vec<(String, &'static str)>,
}

impl PropsObject {
    pub fn new(n: usize) -> Self {
        let props = p::properties(n);
        PropsObject {
            signatures: props.iter().map(|(k, v)| (k.clone(), v.signature())).collect(),
            values: props.into_iter().map(|(k, v)| (k, to_variant(v))).collect(),
        }
    }

    /// The body of `Interface::introspect_to_writer`.
    pub fn introspect_to_writer(&self, writer: &mut dyn std::fmt::Write, level: usize) {
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
pub struct Item {
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

/// The children of the `objects/get-managed-objects/<n>` manager, in order.
pub fn item_objects(n: usize) -> impl Iterator<Item = (String, Item)> {
    (0..n).map(move |i| (p::object_child_path(n, i), item(i)))
}

/// The destination of the client's calls: the service name on a bus; peer to
/// peer any valid name (the peer ignores it).
pub fn destination(t: &Transport) -> String {
    match t {
        Transport::Bus { service_name, .. } => service_name.clone(),
        Transport::P2p { .. } => p::PROPS_INTERFACE.to_owned(),
    }
}

/// The digest of a `Properties.GetAll` reply.
pub fn properties_digest(all: &HashMap<String, OwnedVariant>) -> Result<u64> {
    let props = all
        .iter()
        .map(|(k, v)| Ok((k.as_str(), from_variant(k, v)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(p::properties_digest(props))
}

/// The digest of an `ObjectManager.GetManagedObjects` reply.
pub fn managed_objects_digest(objects: &fdo::ManagedObjects) -> Result<u64> {
    let mut items = Vec::with_capacity(objects.len());
    for (path, interfaces) in objects {
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
