//! `property/changed-storm/<n>` with dbus-rs 0.9 (harness::ipc::storm is the canon).
//! dbus-rs has no property cache and no proxy that keeps one: an application keeps
//! the value of each `PropertiesChanged` itself. So does this client: the emitter
//! sends each update as the generated `PropertiesPropertiesChanged` (the dbus-codegen
//! struct of the standard interface, `SignalArgs::to_emit_message`); the subscriber
//! installs the same struct's `match_rule` with `Connection::add_match` (AddMatch on
//! the bus, and a local filter) and keeps the last `Level` of every message its
//! callback is handed. libdbus reads the subscriber's socket only inside `process`:
//! during the storm the updates wait in the bus's queue and the socket, then
//! `process` hands them over until the last value arrives (or `storm::SETTLE` passes).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use dbus::arg::{prop_cast, PropMap, RefArg, Variant};
use dbus::blocking::stdintf::org_freedesktop_dbus::PropertiesPropertiesChanged;
use dbus::blocking::Connection;
use dbus::channel::Sender;
use dbus::message::SignalArgs;
use dbus::{Message, Path};
use harness::ipc::storm as st;

/// The values of the updates the subscriber's callback was handed, in order.
type Received = Arc<Mutex<Vec<i32>>>;

/// The `i`-th update as the emitter sends it.
fn update(path: &Path<'static>, value: i32) -> Message {
    let mut changed = PropMap::new();
    changed.insert(
        st::STORM_PROPERTY.to_owned(),
        Variant(Box::new(value) as Box<dyn RefArg>),
    );
    PropertiesPropertiesChanged {
        interface_name: st::STORM_INTERFACE.to_owned(),
        changed_properties: changed,
        invalidated_properties: Vec::new(),
    }
    .to_emit_message(path)
}

/// The client of `property/changed-storm/<n>`: `tx` emits, `rx` subscribes.
pub fn client(tx: Connection, rx: Connection, n: usize) -> Result<Box<dyn FnMut() -> Result<u64>>> {
    let path = Path::new(st::STORM_PATH).map_err(|e| anyhow!("{e}"))?;
    let received: Received = Arc::new(Mutex::new(Vec::new()));
    let slot = received.clone();
    let rule = PropertiesPropertiesChanged::match_rule(None, Some(&path)).static_clone();
    rx.add_match(
        rule,
        move |pc: PropertiesPropertiesChanged, _: &Connection, _: &Message| {
            if pc.interface_name == st::STORM_INTERFACE {
                let value = prop_cast::<i32>(&pc.changed_properties, st::STORM_PROPERTY).copied();
                // A message without the value counts as received and holds nothing new.
                slot.lock().expect("not poisoned").push(value.unwrap_or(i32::MIN));
            }
            true
        },
    )
    .context("AddMatch for PropertiesChanged")?;
    let last = st::last_level(n);
    Ok(Box::new(move || {
        for i in 0..n {
            tx.send(update(&path, st::level(i)))
                .map_err(|()| anyhow!("sending PropertiesChanged failed"))?;
        }
        tx.channel().flush();
        let deadline = Instant::now() + st::SETTLE;
        let updates = loop {
            {
                let mut got = received.lock().expect("not poisoned");
                if got.last() == Some(&last) || Instant::now() >= deadline {
                    break std::mem::take(&mut *got);
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            rx.process(left.min(Duration::from_secs(1)))?;
        };
        let seen = st::StormSeen {
            received: updates.len(),
            last: updates.last().copied(),
            updates,
            holder: "the program (dbus-rs has no property cache)",
        };
        st::storm_digest(&seen, n)
    }))
}
