//! The objects of `property/get-all/<n>` and `objects/get-managed-objects/<n>`
//! (harness::ipc::props) as sd-bus serves them in C: one `systemd::bus::Vtable`
//! of `n` read-only properties (sd-bus answers `Properties.GetAll` from it),
//! and per manager `sd_bus_add_object_manager` (`BusRef::add_object_manager`)
//! over `n` child objects with a vtable each (sd-bus builds the
//! `GetManagedObjects` reply by walking them; it lists the standard
//! interfaces of every child too, which the digest leaves out). The client
//! reads the replies' `a{sv}` with the typed `MessageIter` (containers
//! entered one by one, each variant read as the type it announces).

use anyhow::{bail, ensure, Context, Result};
use harness::ipc::props::{self as p, PropValue};
use systemd::bus::types::Variant;
use systemd::bus::{self, BusRef, ContainerType, MessageIter, MessageRef, ObjectPath, Vtable, VtableFlags};

fn append(ret: &mut MessageRef, v: &PropValue) -> bus::Result<()> {
    match v {
        PropValue::Str(s) => ret.append(s.as_str())?,
        PropValue::U32(u) => ret.append(*u)?,
        PropValue::Bool(b) => ret.append(*b)?,
    }
    Ok(())
}

/// A vtable of read-only, constant properties.
fn vtable<S: AsRef<str>>(props: Vec<(S, PropValue)>) -> systemd::Result<Vtable> {
    let mut vt = Vtable::new();
    for (name, value) in props {
        let sig = value.signature();
        vt = vt.property(name.as_ref(), sig, VtableFlags::PROPERTY_CONST, move |ret| {
            append(ret, &value)
        })?;
    }
    Ok(vt)
}

/// Why the adapter's p2p server does not serve them (an adapter choice, not an sd-bus limit).
pub const NOT_PEER_TO_PEER: &str = "this adapter does not serve property/get-all and objects/get-managed-objects \
     peer to peer yet: its p2p server registers objects per accepted connection, and registering both families' \
     2020 vtables on every connection made every peer-to-peer connection about 25 ms slower (property/cold-start \
     went from about 33-54 ms to 58-85 ms here, under load), which would change the other p2p cells; sd-bus's \
     fallback vtables with a node enumerator (objects found when asked for) are not used yet";

/// Registers every object of both families on `bus`.
pub fn register(bus: &BusRef) -> Result<()> {
    for n in p::PROPS_COUNTS {
        bus.add_object_vtable(p::props_path(n).as_str(), p::PROPS_INTERFACE, vtable(p::properties(n))?)
            .with_context(|| format!("registering {}", p::props_path(n)))?;
        bus.add_object_manager(p::objects_path(n).as_str())
            .with_context(|| format!("adding the object manager at {}", p::objects_path(n)))?;
        for i in 0..n {
            bus.add_object_vtable(
                p::object_child_path(n, i).as_str(),
                p::ITEM_INTERFACE,
                vtable(p::item_properties(i))?,
            )
            .with_context(|| format!("registering {}", p::object_child_path(n, i)))?;
        }
    }
    Ok(())
}

/// One `a{sv}`: each name and value (`s`, `u` or `b`; anything else is an error).
fn read_props(it: &mut MessageIter<'_>) -> Result<Vec<(String, PropValue)>> {
    ensure!(it.enter_container(ContainerType::Array, "{sv}")?, "no a{{sv}}");
    let mut props = Vec::new();
    while it.enter_container(ContainerType::DictEntry, "sv")? {
        let name: &str = it.next()?.context("no property name")?;
        let name = name.to_owned();
        let (_, contents) = it.peek_type()?;
        let value = match contents {
            "s" => PropValue::Str(it.next::<Variant<String>>()?.context("no value")?.0),
            "u" => PropValue::U32(it.next::<Variant<u32>>()?.context("no value")?.0),
            "b" => PropValue::Bool(it.next::<Variant<bool>>()?.context("no value")?.0),
            other => bail!("property {name}: unexpected type {other}"),
        };
        it.exit_container()?;
        props.push((name, value));
    }
    it.exit_container()?;
    Ok(props)
}

/// The digest of a `Properties.GetAll` reply.
pub fn get_all_digest(reply: &mut MessageRef) -> Result<u64> {
    let mut it = reply.iter()?;
    Ok(p::properties_digest(read_props(&mut it)?))
}

/// The digest of a `GetManagedObjects` reply (`a{oa{sa{sv}}}`): the benchmark
/// interface's entries only (sd-bus and others list the standard ones too).
pub fn managed_objects_digest(reply: &mut MessageRef) -> Result<u64> {
    let mut it = reply.iter()?;
    let mut objects = Vec::new();
    ensure!(
        it.enter_container(ContainerType::Array, "{oa{sa{sv}}}")?,
        "no a{{oa{{sa{{sv}}}}}}"
    );
    while it.enter_container(ContainerType::DictEntry, "oa{sa{sv}}")? {
        let path: &ObjectPath = it.next()?.context("no object path")?;
        let path = path.to_str()?.to_owned();
        ensure!(
            it.enter_container(ContainerType::Array, "{sa{sv}}")?,
            "no interfaces of {path}"
        );
        while it.enter_container(ContainerType::DictEntry, "sa{sv}")? {
            let iface: &str = it.next()?.context("no interface name")?;
            let is_item = iface == p::ITEM_INTERFACE;
            let props = read_props(&mut it)?;
            if is_item {
                objects.push((path.clone(), props));
            }
            it.exit_container()?;
        }
        it.exit_container()?;
        it.exit_container()?;
    }
    it.exit_container()?;
    Ok(p::managed_objects_digest(objects))
}
