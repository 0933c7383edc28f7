//! `property/get-all/<n>` and `objects/get-managed-objects/<n>`
//! (harness::ipc::props) with rustbus 0.19. rustbus has no object, property
//! or ObjectManager layer, so the server answers `Properties.GetAll` and
//! `ObjectManager.GetManagedObjects` by hand in its dispatcher, with bodies
//! built from rustbus's typed values: a property value is an enum deriving
//! `Signature`/`Marshal`/`Unmarshal` (rustbus_derive's way to write a variant
//! of several types), dicts are `HashMap`s. The replies are built once at
//! start (they never change). The client is a plain method call (rustbus has
//! no proxies) whose reply is read into the same types.

use std::collections::HashMap;

use anyhow::Result;
use harness::ipc::props::{self as p, PropValue};
use harness::ipc::standard;
use rustbus::message_builder::MarshalledMessage;
use rustbus::wire::ObjectPath;
use rustbus::{Marshal, Signature, Unmarshal};

/// A property value as it travels: a variant holding `s`, `u` or `b`.
#[derive(Marshal, Unmarshal, Signature, Debug)]
pub enum Value {
    Str(String),
    U32(u32),
    Bool(bool),
}

impl From<PropValue> for Value {
    fn from(v: PropValue) -> Self {
        match v {
            PropValue::Str(s) => Value::Str(s),
            PropValue::U32(u) => Value::U32(u),
            PropValue::Bool(b) => Value::Bool(b),
        }
    }
}

impl From<Value> for PropValue {
    fn from(v: Value) -> Self {
        match v {
            Value::Str(s) => PropValue::Str(s),
            Value::U32(u) => PropValue::U32(u),
            Value::Bool(b) => PropValue::Bool(b),
        }
    }
}

/// `a{sv}`
type PropMap = HashMap<String, Value>;
/// `a{oa{sa{sv}}}`
type ManagedObjects = HashMap<ObjectPath<String>, HashMap<String, PropMap>>;

fn prop_map<S: Into<String>>(props: Vec<(S, PropValue)>) -> PropMap {
    props.into_iter().map(|(k, v)| (k.into(), v.into())).collect()
}

/// Both families' objects, by path, as their replies' bodies.
pub struct Objects {
    get_all: HashMap<String, PropMap>,
    managed: HashMap<String, ManagedObjects>,
    /// Child path -> its `ITEM_INTERFACE` properties (`GetAll` on a child).
    children: HashMap<String, PropMap>,
}

impl Objects {
    pub fn new() -> Result<Self> {
        let mut get_all = HashMap::new();
        let mut managed = HashMap::new();
        let mut children = HashMap::new();
        for n in p::PROPS_COUNTS {
            get_all.insert(p::props_path(n), prop_map(p::properties(n)));
            let mut objects = ManagedObjects::new();
            for i in 0..n {
                let path = p::object_child_path(n, i);
                let interfaces = HashMap::from([(p::ITEM_INTERFACE.to_owned(), prop_map(p::item_properties(i)))]);
                objects.insert(ObjectPath::new(path.clone())?, interfaces);
                children.insert(path, prop_map(p::item_properties(i)));
            }
            managed.insert(p::objects_path(n), objects);
        }
        Ok(Objects {
            get_all,
            managed,
            children,
        })
    }

    /// The reply to `call` when it is one of these objects' `GetAll` or
    /// `GetManagedObjects`; `None` when it is not for them.
    pub fn reply(&self, call: &MarshalledMessage) -> Option<Result<MarshalledMessage, (&'static str, String)>> {
        let hdr = &call.dynheader;
        let path = hdr.object.as_deref()?;
        let member = hdr.member.as_deref().unwrap_or_default();
        match hdr.interface.as_deref() {
            Some(p::PROPERTIES_INTERFACE) if member == "GetAll" => {
                let (props, interface) = match (self.get_all.get(path), self.children.get(path)) {
                    (Some(props), _) => (props, p::PROPS_INTERFACE),
                    (None, Some(props)) => (props, p::ITEM_INTERFACE),
                    (None, None) => return None,
                };
                Some(match call.body.parser().get::<&str>() {
                    Ok(asked) if asked == interface => reply_with(call, props),
                    Ok(asked) => Err((standard::UNKNOWN_INTERFACE, format!("{path} has no interface {asked}"))),
                    Err(e) => Err((standard::INVALID_ARGS, format!("GetAll takes \"s\": {e:?}"))),
                })
            }
            Some(p::OBJECT_MANAGER_INTERFACE) if member == "GetManagedObjects" => {
                let objects = self.managed.get(path)?;
                Some(reply_with(call, objects))
            }
            _ => None,
        }
    }
}

fn reply_with<T: Marshal>(call: &MarshalledMessage, body: &T) -> Result<MarshalledMessage, (&'static str, String)> {
    let mut reply = call.dynheader.make_response();
    reply
        .body
        .push_param(body)
        .map_err(|e| (standard::FAILED, format!("{e:?}")))?;
    Ok(reply)
}

/// The digest of a `GetAll` reply's `a{sv}`.
pub fn get_all_digest(reply: &MarshalledMessage) -> Result<u64> {
    let props: PropMap = reply.body.parser().get()?;
    Ok(p::properties_digest(
        props.into_iter().map(|(k, v)| (k, PropValue::from(v))),
    ))
}

/// The digest of a `GetManagedObjects` reply (only the benchmark interface counts).
pub fn managed_objects_digest(reply: &MarshalledMessage) -> Result<u64> {
    let objects: ManagedObjects = reply.body.parser().get()?;
    let mut digested = Vec::with_capacity(objects.len());
    for (path, mut interfaces) in objects {
        if let Some(props) = interfaces.remove(p::ITEM_INTERFACE) {
            let props: Vec<(String, PropValue)> = props.into_iter().map(|(k, v)| (k, v.into())).collect();
            digested.push((path.as_ref().to_owned(), props));
        }
    }
    Ok(p::managed_objects_digest(digested))
}
