//! `property/changed-storm/<n>` on the bus crate's raw client, for the fault
//! adapter: one connection emits the `n` PropertiesChanged of the canon
//! (harness::ipc::storm), a second one, subscribed with the storm's rule,
//! keeps each announced value, as a library without a property cache would.
//! `fault-drop-signal` loses one update of each storm (the second): the
//! subscriber still ends with the last value, and verification must report it
//! as dropping, not let it pass.

use std::time::Duration;

use anyhow::{Context, Result};
use bus::raw_client::RawConnection;
use harness::ipc::storm as st;
use harness::wire::{self, Value};

/// The body of the update announcing `value`: `s`, `a{sv}`, `as`.
fn update(value: i32) -> [Value; 3] {
    let entry = Value::DictEntry(
        Box::new(Value::Str(st::STORM_PROPERTY.into())),
        Box::new(Value::Variant(Box::new(Value::I32(value)))),
    );
    [
        Value::Str(st::STORM_INTERFACE.into()),
        Value::Array("{sv}".into(), vec![entry]),
        Value::Array("s".into(), vec![]),
    ]
}

/// The value of `Level` in a received update's `a{sv}`, if it holds one.
fn level_of(values: &[Value]) -> Option<i32> {
    let Some(Value::Array(_, entries)) = values.get(1) else {
        return None;
    };
    entries.iter().find_map(|e| match e {
        Value::DictEntry(k, v) if k.as_str() == Some(st::STORM_PROPERTY) => match &**v {
            Value::Variant(inner) => match **inner {
                Value::I32(x) => Some(x),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    })
}

/// The storm's client: `tx` emits; a second connection to `socket` subscribes.
pub fn client<'a>(
    mut tx: RawConnection,
    socket: &std::path::Path,
    n: usize,
    drop_one: bool,
) -> Result<Box<dyn FnMut() -> Result<u64> + 'a>> {
    let mut rx = RawConnection::connect(socket, Duration::from_secs(10))?;
    rx.hello()?;
    rx.add_matches(&[st::changed_rule()])?;
    let last = st::last_level(n);
    Ok(Box::new(move || {
        for i in 0..n {
            tx.signal(
                st::STORM_PATH,
                st::PROPERTIES_INTERFACE,
                st::PROPERTIES_CHANGED,
                &update(st::level(i)),
            )?;
        }
        let mut updates = Vec::with_capacity(n);
        while updates.last() != Some(&last) {
            let m = rx.recv().context("reading the subscriber's connection")?;
            if m.header.field_str(wire::FIELD_MEMBER) != Some(st::PROPERTIES_CHANGED) {
                continue;
            }
            updates.push(level_of(&m.values).unwrap_or(i32::MIN));
        }
        if drop_one && updates.len() > 1 {
            updates.remove(1);
        }
        let seen = st::StormSeen {
            received: updates.len(),
            last: updates.last().copied(),
            updates,
            holder: "the fault adapter (no property cache)",
        };
        st::storm_digest(&seen, n)
    }))
}
