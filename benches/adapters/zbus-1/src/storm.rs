//! `property/changed-storm/<n>` on zbus 1's synchronous API (harness::ipc::storm is the
//! canon). zbus 1.9.3 has no property cache: its `Proxy` documents "At the moment,
//! `Proxy` doesn't: cache properties" (src/proxy.rs), and every property read is a
//! `Properties.Get` call (`Proxy::get_property`). So, as an application of zbus 1 must,
//! the subscriber keeps the value of each `PropertiesChanged` itself, like the other
//! libraries without a cache (dbus-rs, rustbus, sd-bus). The emitter sends each update
//! with `Connection::emit_signal` (body `s a{sv} as`); the subscriber adds the storm's
//! rule with `fdo::DBusProxy::add_match` and reads its connection with
//! `receive_specific`, after the storm (zbus 1 reads a socket only when asked; the
//! updates wait in the bus's queue and the socket). The read ends with the reply to the
//! subscriber's own `GetId`, sent after the emitter's `GetId` round trip: every update
//! the bus routed is then read, so a lost one fails the check instead of hanging.

use std::collections::HashMap;

use anyhow::{bail, Context, Result};
use harness::ipc::storm as st;
use harness::ipc::Transport;
use zbus::fdo;
use zbus::{Connection, Message, MessageType};
use zvariant::{OwnedValue, Value};

use crate::ipc::connect;

const BUS: &str = "org.freedesktop.DBus";
const BUS_PATH: &str = "/org/freedesktop/DBus";

/// Sends the update announcing `value`.
fn emit(conn: &Connection, value: i32) -> zbus::Result<()> {
    let changed = HashMap::from([(st::STORM_PROPERTY, Value::from(value))]);
    conn.emit_signal(
        None,
        st::STORM_PATH,
        st::PROPERTIES_INTERFACE,
        st::PROPERTIES_CHANGED,
        &(st::STORM_INTERFACE, changed, Vec::<&str>::new()),
    )
}

/// What `receive_specific` returned: an update, or the reply that ends the read.
fn is_change_or_reply(msg: &Message, serial: u32) -> zbus::Result<bool> {
    let header = msg.header()?;
    Ok(match header.message_type()? {
        MessageType::Signal => header.member()? == Some(st::PROPERTIES_CHANGED),
        MessageType::MethodReturn | MessageType::Error => header.reply_serial()? == Some(serial),
        _ => false,
    })
}

/// The client of `property/changed-storm/<n>` on a bus.
pub fn client(t: &Transport, n: usize) -> Result<Box<dyn FnMut() -> Result<u64>>> {
    let tx = connect(t).context("connecting the emitter")?;
    let rx = connect(t).context("connecting the subscriber")?;
    fdo::DBusProxy::new(&rx)?.add_match(&st::changed_rule())?;
    Ok(Box::new(move || {
        for i in 0..n {
            emit(&tx, st::level(i))?;
        }
        fdo::DBusProxy::new(&tx)?.get_id()?; // the bus has routed every update
        let get_id = Message::method(rx.unique_name(), Some(BUS), BUS_PATH, Some(BUS), "GetId", &())?;
        let serial = rx.send_message(get_id)?;
        let mut updates = Vec::with_capacity(n);
        loop {
            let msg = rx.receive_specific(|m| is_change_or_reply(m, serial))?;
            let header = msg.header()?;
            match header.message_type()? {
                MessageType::MethodReturn => break,
                MessageType::Error => bail!("GetId: {}", zbus::Error::from(msg)),
                _ => {}
            }
            let (interface, changed, _): (String, HashMap<String, OwnedValue>, Vec<String>) =
                msg.body().context("a PropertiesChanged body")?;
            if interface == st::STORM_INTERFACE {
                match changed.get(st::STORM_PROPERTY).map(|v| i32::try_from(v.clone())) {
                    Some(Ok(value)) => updates.push(value),
                    _ => updates.push(i32::MIN), // received, without the value
                }
            }
        }
        let seen = st::StormSeen {
            received: updates.len(),
            last: updates.last().copied(),
            updates,
            holder: "the program (zbus 1.9.3 has no property cache)",
        };
        st::storm_digest(&seen, n)
    }))
}
