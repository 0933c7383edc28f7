//! `property/get-all/<n>` and `objects/get-managed-objects/<n>`
//! (harness::ipc::props) with tokio-dbus 0.2. tokio-dbus has no object,
//! property or ObjectManager layer, so the server (server.rs's loop) answers
//! `Properties.GetAll` and `ObjectManager.GetManagedObjects` of these objects
//! by hand, writing `a{sv}` and `a{oa{sa{sv}}}` with the typed `BodyBuf`
//! writers (`store_array::<ty::Dict<..>>`, `store_entry`, `Variant`) on every
//! call. The client is a plain method call (tokio-dbus has no proxies) whose
//! reply is read with `load_array`/`load_entry`, each value a `Variant`.

use std::collections::HashMap;

use anyhow::{bail, Result};
use harness::ipc::props::{self as p, PropValue};
use harness::ipc::{standard, Transport};
use tokio::runtime::Runtime;
use tokio_dbus::{ty, BodyBuf, Message, MessageKind, ObjectPathBuf, Variant};

use super::{path_str, Op, Peer};

/// `a{sv}`, as the entries of a dict.
type PropDict = ty::Dict<ty::Str, ty::Variant>;
/// `a{oa{sa{sv}}}`'s entries.
type ManagedDict = ty::Dict<ty::ObjectPath, ty::Array<ty::Dict<ty::Str, ty::Array<PropDict>>>>;

/// A managed child: its path and its `ITEM_INTERFACE` properties.
type ManagedObject = (ObjectPathBuf, Vec<(&'static str, PropValue)>);

fn variant(v: &PropValue) -> Variant<'_> {
    match v {
        PropValue::Str(s) => Variant::String(s),
        PropValue::U32(u) => Variant::U32(*u),
        PropValue::Bool(b) => Variant::Bool(*b),
    }
}

fn prop_value(v: Variant<'_>) -> Result<PropValue> {
    Ok(match v {
        Variant::String(s) => PropValue::Str(s.to_owned()),
        Variant::U32(u) => PropValue::U32(u),
        Variant::Bool(b) => PropValue::Bool(b),
        other => bail!("a property of type {}", other.contained_signature().as_str()),
    })
}

/// Both families' objects, by path.
pub(super) struct Objects {
    get_all: HashMap<String, Vec<(String, PropValue)>>,
    /// Manager path -> its children (path, `ITEM_INTERFACE` properties).
    managed: HashMap<String, Vec<ManagedObject>>,
    /// Child path -> its `ITEM_INTERFACE` properties (`GetAll` on a child).
    children: HashMap<String, Vec<(String, PropValue)>>,
}

impl Objects {
    pub(super) fn new() -> Result<Self> {
        let mut get_all = HashMap::new();
        let mut managed = HashMap::new();
        let mut children = HashMap::new();
        for n in p::PROPS_COUNTS {
            get_all.insert(p::props_path(n), p::properties(n));
            let mut objects = Vec::with_capacity(n);
            for i in 0..n {
                let path = p::object_child_path(n, i);
                objects.push((ObjectPathBuf::try_from(path.clone())?, p::item_properties(i)));
                let props = p::item_properties(i).into_iter().map(|(k, v)| (k.to_owned(), v));
                children.insert(path, props.collect());
            }
            managed.insert(p::objects_path(n), objects);
        }
        Ok(Objects {
            get_all,
            managed,
            children,
        })
    }

    /// Writes the reply body to `msg` into `out` when it is one of these
    /// objects' `GetAll` or `GetManagedObjects`: `None` when it is not for
    /// them, `Some(Err((error name, message)))` for a wrong call.
    pub(super) fn reply(&self, msg: &Message<'_>, out: &mut BodyBuf) -> Option<Result<(), (&'static str, String)>> {
        let MessageKind::MethodCall { path, member } = msg.kind() else {
            return None;
        };
        let path = path_str(path).ok()?;
        match msg.interface() {
            Some(p::PROPERTIES_INTERFACE) if member == "GetAll" => {
                let (props, interface) = match (self.get_all.get(path), self.children.get(path)) {
                    (Some(props), _) => (props, p::PROPS_INTERFACE),
                    (None, Some(props)) => (props, p::ITEM_INTERFACE),
                    (None, None) => return None,
                };
                Some(match msg.body().read::<str>() {
                    Ok(asked) if asked == interface => store_props(out, props).map_err(failed),
                    Ok(asked) => Err((standard::UNKNOWN_INTERFACE, format!("{path} has no interface {asked}"))),
                    Err(e) => Err((standard::INVALID_ARGS, format!("GetAll takes \"s\": {e}"))),
                })
            }
            Some(p::OBJECT_MANAGER_INTERFACE) if member == "GetManagedObjects" => {
                let objects = self.managed.get(path)?;
                Some(store_managed(out, objects).map_err(failed))
            }
            _ => None,
        }
    }
}

fn failed(e: tokio_dbus::Error) -> (&'static str, String) {
    (standard::FAILED, e.to_string())
}

fn store_props<S: AsRef<str>>(out: &mut BodyBuf, props: &[(S, PropValue)]) -> tokio_dbus::Result<()> {
    let mut dict = out.store_array::<PropDict>()?;
    for (name, value) in props {
        dict.store_entry().store(name.as_ref()).store(variant(value)).finish();
    }
    dict.finish();
    Ok(())
}

fn store_managed(out: &mut BodyBuf, objects: &[ManagedObject]) -> tokio_dbus::Result<()> {
    let mut dict = out.store_array::<ManagedDict>()?;
    for (path, props) in objects {
        dict.store_entry()
            .store(path)
            .store_array(|interfaces| {
                interfaces
                    .store_entry()
                    .store(p::ITEM_INTERFACE)
                    .store_array(|dict| {
                        for (name, value) in props {
                            dict.store_entry().store(name).store(variant(value)).finish();
                        }
                    })
                    .finish();
            })
            .finish();
    }
    dict.finish();
    Ok(())
}

/// The client of `property/get-all/<n>`: `GetAll` of the props object, its `a{sv}` digested.
pub(super) fn get_all<'a>(rt: Runtime, t: &Transport, n: usize) -> Result<Op<'a>> {
    let mut peer = rt.block_on(Peer::connect(t))?;
    let (dest, path) = (t.service_name().to_owned(), p::props_path(n));
    Ok(Box::new(move || {
        rt.block_on(peer.call_at(&dest, &path, p::PROPERTIES_INTERFACE, "GetAll", |b| {
            b.store(p::PROPS_INTERFACE)
        }))?;
        let mut dict = peer.reply_body("a{sv}")?.load_array::<PropDict>()?;
        let mut props = Vec::with_capacity(n);
        while let Some((name, value)) = dict.load_entry()? {
            props.push((name, prop_value(value)?));
        }
        Ok(p::properties_digest(props))
    }))
}

/// The client of `objects/get-managed-objects/<n>`: only the benchmark interface counts.
pub(super) fn managed_objects<'a>(rt: Runtime, t: &Transport, n: usize) -> Result<Op<'a>> {
    let mut peer = rt.block_on(Peer::connect(t))?;
    let (dest, path) = (t.service_name().to_owned(), p::objects_path(n));
    Ok(Box::new(move || {
        rt.block_on(
            peer.call_at(&dest, &path, p::OBJECT_MANAGER_INTERFACE, "GetManagedObjects", |_| {
                Ok(())
            }),
        )?;
        let mut objects = peer.reply_body("a{oa{sa{sv}}}")?.load_array::<ManagedDict>()?;
        let mut digested = Vec::with_capacity(n);
        while let Some((path, mut interfaces)) = objects.load_entry()? {
            while let Some((interface, mut dict)) = interfaces.load_entry()? {
                if interface != p::ITEM_INTERFACE {
                    continue;
                }
                let mut props = Vec::new();
                while let Some((name, value)) = dict.load_entry()? {
                    props.push((name, prop_value(value)?));
                }
                digested.push((path_str(path)?.to_owned(), props));
            }
        }
        Ok(p::managed_objects_digest(digested))
    }))
}
