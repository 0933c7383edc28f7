//! `property/changed-storm/<n>` with dbus-bytestream 0.1 (harness::ipc::storm is the
//! canon). The library has no proxy, no property cache and no signal API: the
//! subscriber sends the storm's rule as a plain `AddMatch` call and reads the updates
//! with `Connection::read_msg`, keeping the value itself; the emitter builds each update
//! with `create_signal` and `add_arg` of dbus-serialize values (`s`, an `a{sv}` from a
//! `HashMap<&str, Variant>`, and an empty `as`, which needs `Array::new_with_sig`:
//! `impl Marshal for Vec<T>` takes the signature from the first element). The
//! library's array encoder counts the padding before the first element in the array's
//! length; here the `a{sv}` starts 8-aligned (offset 28 + 4), so the length is right.
//! `Message::get_body` cannot decode this signal (both checked): a dict fails ("bad
//! signature": `demarshal_struct` reads members until `)`, and a dict entry ends with
//! `}`), and an empty array swallows the rest of the signature ("mismatched parens":
//! `demarshal_array` leaves the signature to what its last element left, "" when it has
//! none). So the subscriber runs the library's `demarshal` as the codec does, dict
//! entries as structs (`crate::body_as`), on the leading `sa{sv}` only, after checking
//! the signature is `sa{sv}as`; the invalidated list (always empty here) is not read.
//! `Connection` has no timeout and no raw fd: a lost update would block the
//! subscriber until the harness's cell timeout, where the canon's settle window
//! would report it.

use std::collections::HashMap;

use anyhow::{bail, ensure, Context, Result};
use dbus_bytestream::connection::Connection;
use dbus_bytestream::message::{self, Message};
use dbus_serialize::types::{Array, BasicValue, Signature, Struct, Value, Variant};
use harness::ipc::storm as st;

use crate::ipc::{add_match, bus_error, string_of};
use crate::subscriptions::next_signal;

/// The update announcing `value`.
fn update(value: i32) -> Message {
    let changed = HashMap::from([(
        st::STORM_PROPERTY,
        Variant {
            object: Box::new(Value::BasicValue(BasicValue::Int32(value))),
            signature: Signature("i".to_owned()),
        },
    )]);
    let invalidated = Value::Array(Array::new_with_sig(Vec::new(), "as".to_owned()));
    message::create_signal(st::STORM_PATH, st::PROPERTIES_INTERFACE, st::PROPERTIES_CHANGED)
        .add_arg(&st::STORM_INTERFACE)
        .add_arg(&changed)
        .add_arg(&invalidated)
}

/// The `Level` of an update of the storm's interface: `Some(None)` when it came
/// without the value, `None` for another interface's update.
fn level_of(sig: &Message) -> Result<Option<Option<i32>>> {
    let signature = crate::header_signature(&sig.headers)?;
    ensure!(
        signature == "sa{sv}as",
        "PropertiesChanged with the signature {signature:?}"
    );
    // The empty `as` is left unread: see the module's header.
    let body = crate::body_as(sig, "sa{sv}").context("a PropertiesChanged body")?;
    let Value::Struct(Struct { objects: values, .. }) = body else {
        bail!("PropertiesChanged: {body:?}");
    };
    ensure!(values.len() == 2, "PropertiesChanged: {values:?}");
    if string_of(&values[0])? != st::STORM_INTERFACE {
        return Ok(None);
    }
    let Value::Array(changed) = &values[1] else {
        return Ok(Some(None));
    };
    for entry in &changed.objects {
        let Value::Struct(kv) = entry else { continue };
        if let [Value::BasicValue(BasicValue::String(k)), Value::Variant(v)] = kv.objects.as_slice() {
            if k == st::STORM_PROPERTY {
                if let Value::BasicValue(BasicValue::Int32(x)) = *v.object {
                    return Ok(Some(Some(x)));
                }
            }
        }
    }
    Ok(Some(None))
}

/// The client of `property/changed-storm/<n>`: `tx` emits, `rx` subscribes.
pub fn client(tx: Connection, rx: Connection, n: usize) -> Result<Box<dyn FnMut() -> Result<u64>>> {
    add_match(&rx, &st::changed_rule())?;
    let last = st::last_level(n);
    Ok(Box::new(move || {
        for i in 0..n {
            tx.send(update(st::level(i)))
                .map_err(|e| bus_error("emitting PropertiesChanged", e))?;
        }
        let mut updates = Vec::with_capacity(n);
        while updates.last() != Some(&last) {
            let sig = next_signal(&rx, st::PROPERTIES_INTERFACE, st::PROPERTIES_CHANGED)?;
            if let Some(value) = level_of(&sig)? {
                // i32::MIN: received, without the value.
                updates.push(value.unwrap_or(i32::MIN));
            }
        }
        let seen = st::StormSeen {
            received: updates.len(),
            last: updates.last().copied(),
            updates,
            holder: "the program (dbus-bytestream has no property cache)",
        };
        st::storm_digest(&seen, n)
    }))
}
