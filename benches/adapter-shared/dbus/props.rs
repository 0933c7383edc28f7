//! `property/get-all/<n>` and `objects/get-managed-objects/<n>` (harness::ipc::props)
//! in the dbus-rs adapters: served by `dbus_crossroads` (one interface per `n` with a
//! getter per property; `Crossroads::object_manager` over `n` children) in both
//! dbus-0.9's and dbus-tokio-0.7's server, and the replies of the generated
//! `stdintf::org_freedesktop_dbus::Properties::get_all` and
//! `ObjectManager::get_managed_objects` digested alike; each adapter makes the call
//! itself (blocking `stdintf`, or the nonblock one awaited).

use std::collections::HashMap;

use anyhow::{bail, Result};
use dbus::arg::{ArgType, PropMap, RefArg};
use dbus::Path;
use dbus_crossroads::{Crossroads, IfaceBuilder};
use harness::ipc::props::{self as p, PropValue};

/// Adds every object of both families to `cr` (no ObjectManager signals:
/// object-manager support for signals is not switched on).
pub fn add_objects(cr: &mut Crossroads) {
    for n in p::PROPS_COUNTS {
        let props = cr.register(p::PROPS_INTERFACE, move |b: &mut IfaceBuilder<()>| {
            for (name, value) in p::properties(n) {
                add_property(b, name, value);
            }
        });
        cr.insert(p::props_path(n), &[props], ());
        let item = cr.register(p::ITEM_INTERFACE, |b: &mut IfaceBuilder<usize>| {
            for (name, value) in p::item_properties(0) {
                // Each child's data is its index: the value is read from the table per call.
                match value {
                    PropValue::Str(_) => {
                        b.property::<String, _>(name)
                            .emits_changed_const()
                            .get(move |_, i: &mut usize| Ok(str_of(&item_value(*i, name))));
                    }
                    PropValue::U32(_) => {
                        b.property::<u32, _>(name)
                            .emits_changed_const()
                            .get(move |_, i: &mut usize| Ok(u32_of(&item_value(*i, name))));
                    }
                    PropValue::Bool(_) => {
                        b.property::<bool, _>(name)
                            .emits_changed_const()
                            .get(move |_, i: &mut usize| Ok(bool_of(&item_value(*i, name))));
                    }
                }
            }
        });
        for i in 0..n {
            cr.insert(p::object_child_path(n, i), &[item], i);
        }
        let manager = cr.object_manager::<usize>();
        cr.insert(p::objects_path(n), &[manager], usize::MAX);
    }
}

fn item_value(i: usize, name: &str) -> PropValue {
    p::item_properties(i)
        .into_iter()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
        .expect("a property of the table")
}

fn str_of(v: &PropValue) -> String {
    match v {
        PropValue::Str(s) => s.clone(),
        other => unreachable!("not a string: {other:?}"),
    }
}

fn u32_of(v: &PropValue) -> u32 {
    match v {
        PropValue::U32(u) => *u,
        other => unreachable!("not a u32: {other:?}"),
    }
}

fn bool_of(v: &PropValue) -> bool {
    match v {
        PropValue::Bool(b) => *b,
        other => unreachable!("not a bool: {other:?}"),
    }
}

fn add_property(b: &mut IfaceBuilder<()>, name: String, value: PropValue) {
    match value {
        PropValue::Str(s) => {
            b.property::<String, _>(name)
                .emits_changed_const()
                .get(move |_, _| Ok(s.clone()));
        }
        PropValue::U32(u) => {
            b.property::<u32, _>(name).emits_changed_const().get(move |_, _| Ok(u));
        }
        PropValue::Bool(v) => {
            b.property::<bool, _>(name).emits_changed_const().get(move |_, _| Ok(v));
        }
    }
}

/// A value of a received `a{sv}`, by the type the variant holds.
fn value_of(name: &str, v: &dyn RefArg) -> Result<PropValue> {
    Ok(match v.arg_type() {
        ArgType::String => PropValue::Str(v.as_str().unwrap_or_default().to_owned()),
        ArgType::UInt32 => PropValue::U32(v.as_u64().unwrap_or_default() as u32),
        ArgType::Boolean => PropValue::Bool(v.as_u64() == Some(1)),
        other => bail!("property {name}: unexpected type {other:?}"),
    })
}

fn props_of(map: &PropMap) -> Result<Vec<(&str, PropValue)>> {
    map.iter().map(|(k, v)| Ok((k.as_str(), value_of(k, &*v.0)?))).collect()
}

/// The digest of a `GetAll` reply of the benchmark interface.
pub fn get_all_digest(all: &PropMap) -> Result<u64> {
    Ok(p::properties_digest(props_of(all)?))
}

/// The digest of a `GetManagedObjects` reply: the benchmark interface's entries.
pub fn managed_objects_digest(objects: &HashMap<Path<'static>, HashMap<String, PropMap>>) -> Result<u64> {
    let mut items = Vec::with_capacity(objects.len());
    for (path, interfaces) in objects {
        // Only the benchmark interface counts (a server may list the standard ones too).
        if let Some(props) = interfaces.get(p::ITEM_INTERFACE) {
            items.push((&**path, props_of(props)?));
        }
    }
    Ok(p::managed_objects_digest(items))
}
