//! `property/get-all/<n>` and `objects/get-managed-objects/<n>`
//! (harness::ipc::props) with async-rustbus 0.2. async-rustbus has no object,
//! property or ObjectManager layer, so the server answers `Properties.GetAll`
//! and `ObjectManager.GetManagedObjects` by hand from its call queue, with
//! bodies of rustbus 0.17's typed values: a property value is [`Value`], a
//! variant of several types written by hand (rustbus_derive 0.4, which rustbus
//! 0.17 uses, derives structs only; rustbus-0.19's `props.rs` derives it), dicts
//! are `HashMap`s, object paths `ObjectPathBuf`s. The replies' bodies are built
//! once at start (they never change). The client is a plain method call
//! (async-rustbus has no proxies) whose reply is read into `HashMap`s of
//! rustbus's `Variant`, each value taken by its signature.

use std::collections::HashMap;

use anyhow::{bail, Result};
use async_rustbus::rustbus_core::message_builder::MarshalledMessage;
use async_rustbus::rustbus_core::path::ObjectPathBuf;
use harness::ipc::props::{self as p, PropValue};
use harness::ipc::standard;
use rustbus::signature::{Base, Container, Type};
use rustbus::wire::marshal::traits::SignatureBuffer;
use rustbus::wire::marshal::MarshalContext;
use rustbus::wire::unmarshal::traits::Variant;
use rustbus::{Marshal, Signature};

use crate::{MarshalError, WireResult};

/// A property value as it travels: a variant holding `s`, `u` or `b`.
pub struct Value(PropValue);

impl Signature for Value {
    fn signature() -> Type {
        Type::Container(Container::Variant)
    }
    fn alignment() -> usize {
        1
    }
    fn sig_str(buf: &mut SignatureBuffer) {
        buf.push_static("v")
    }
    fn has_sig(sig: &str) -> bool {
        sig.starts_with('v')
    }
}

impl Marshal for Value {
    fn marshal(&self, ctx: &mut MarshalContext) -> Result<(), MarshalError> {
        match &self.0 {
            PropValue::Str(s) => s.as_str().marshal_as_variant(ctx),
            PropValue::U32(u) => u.marshal_as_variant(ctx),
            PropValue::Bool(b) => b.marshal_as_variant(ctx),
        }
    }
}

/// A received variant as a property value, by its signature.
fn prop_value(v: &Variant) -> Result<PropValue> {
    Ok(match v.get_value_sig() {
        Type::Base(Base::String) => PropValue::Str(v.get::<String>().wire()?),
        Type::Base(Base::Uint32) => PropValue::U32(v.get::<u32>().wire()?),
        Type::Base(Base::Boolean) => PropValue::Bool(v.get::<bool>().wire()?),
        other => bail!("a property of type {other:?}"),
    })
}

/// `a{sv}`
type PropMap = HashMap<String, Value>;
/// `a{oa{sa{sv}}}`
type ManagedObjects = HashMap<ObjectPathBuf, HashMap<String, PropMap>>;

fn prop_map<S: Into<String>>(props: Vec<(S, PropValue)>) -> PropMap {
    props.into_iter().map(|(k, v)| (k.into(), Value(v))).collect()
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
                objects.insert(ObjectPathBuf::try_from(path.clone()).wire()?, interfaces);
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
    let props: HashMap<String, Variant> = reply.body.parser().get().wire()?;
    let props = props
        .into_iter()
        .map(|(k, v)| Ok((k, prop_value(&v)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(p::properties_digest(props))
}

/// The digest of a `GetManagedObjects` reply (only the benchmark interface counts).
pub fn managed_objects_digest(reply: &MarshalledMessage) -> Result<u64> {
    let objects: HashMap<ObjectPathBuf, HashMap<String, HashMap<String, Variant>>> =
        reply.body.parser().get().wire()?;
    let mut digested = Vec::with_capacity(objects.len());
    for (path, mut interfaces) in objects {
        if let Some(props) = interfaces.remove(p::ITEM_INTERFACE) {
            let props = props
                .into_iter()
                .map(|(k, v)| Ok((k, prop_value(&v)?)))
                .collect::<Result<Vec<_>>>()?;
            digested.push((path.as_str().to_owned(), props));
        }
    }
    Ok(p::managed_objects_digest(digested))
}
