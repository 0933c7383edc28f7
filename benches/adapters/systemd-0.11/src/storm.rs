//! `property/changed-storm/<n>` with sd-bus through the `systemd` crate 0.11
//! (harness::ipc::storm is the canon). sd-bus has no client-side property cache
//! (`sd_bus_get_property` is a `Properties.Get` round trip, and the crate does not
//! wrap it): an application keeps the value of each `PropertiesChanged` itself, and
//! so does this client. The emitter builds each update with `BusRef::new_signal` and
//! the crate's typed `append` (`s`, a `BTreeMap<String, Variant<i32>>` as `a{sv}`,
//! `as`) and sends it with `send_no_reply`; sd-bus's own `sd_bus_emit_properties_changed`
//! needs a vtable-registered object the crate's server side does not give this client.
//! The subscriber installs the storm's rule with `sd_bus_add_match` (`raw::add_match`)
//! and reads with `BusRef::process`, waiting in `BusRef::wait` (at most
//! `storm::SETTLE` once the storm is sent). sd-bus reads the subscriber's socket only
//! inside `process`: during the storm the updates wait in the bus's queue and the socket.

use std::collections::BTreeMap;
use std::ffi::{CStr, CString};
use std::time::Instant;

use anyhow::{Context, Result};
use harness::ipc::storm as st;
use systemd::bus::types::Variant;
use systemd::bus::{Bus, BusRef, MessageType};

use crate::raw;

/// Sends the update announcing `value`.
fn emit(bus: &mut BusRef, value: i32) -> Result<()> {
    let mut sig = bus.new_signal(st::STORM_PATH, st::PROPERTIES_INTERFACE, st::PROPERTIES_CHANGED)?;
    sig.append(st::STORM_INTERFACE)?;
    let changed: BTreeMap<String, Variant<i32>> = BTreeMap::from([(st::STORM_PROPERTY.to_owned(), Variant(value))]);
    sig.append(changed)?;
    sig.append(Vec::<String>::new())?;
    sig.send_no_reply()?;
    Ok(())
}

/// The client of `property/changed-storm/<n>`: `tx` emits, `rx` subscribes.
pub fn client(mut tx: Bus, mut rx: Bus, n: usize) -> Result<Box<dyn FnMut() -> Result<u64>>> {
    raw::add_match(&rx, &CString::new(st::changed_rule())?).context("AddMatch for PropertiesChanged")?;
    let last = st::last_level(n);
    Ok(Box::new(move || {
        for i in 0..n {
            emit(&mut tx, st::level(i))?;
        }
        tx.flush()?;
        let deadline = Instant::now() + st::SETTLE;
        let mut updates = Vec::with_capacity(n);
        while updates.last() != Some(&last) {
            match rx.process()? {
                Some(Some(mut msg)) => {
                    let is_update = msg.type_() == MessageType::Signal
                        && msg.interface().map(CStr::to_bytes) == Some(st::PROPERTIES_INTERFACE.as_bytes())
                        && msg.member().map(CStr::to_bytes) == Some(st::PROPERTIES_CHANGED.as_bytes());
                    if !is_update {
                        continue;
                    }
                    let mut it = msg.iter()?;
                    let interface: String = it.next()?.context("PropertiesChanged without an interface")?;
                    if interface != st::STORM_INTERFACE {
                        continue;
                    }
                    let changed: BTreeMap<String, Variant<i32>> =
                        it.next()?.context("PropertiesChanged without its changed values")?;
                    // A message without the value counts as received and holds nothing new.
                    updates.push(changed.get(st::STORM_PROPERTY).map_or(i32::MIN, |v| v.0));
                }
                Some(None) => {}
                None => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    rx.wait(Some(left))?;
                }
            }
        }
        let seen = st::StormSeen {
            received: updates.len(),
            last: updates.last().copied(),
            updates,
            holder: "the program (sd-bus has no client-side property cache)",
        };
        st::storm_digest(&seen, n)
    }))
}
