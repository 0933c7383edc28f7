//! `property/changed-storm/<n>` with rustbus 0.19 (harness::ipc::storm is the canon).
//! rustbus has no proxy and no property cache: an application keeps the value of each
//! `PropertiesChanged` itself, and so does this client. The emitter builds each update
//! with `MessageBuilder::signal` and a body of rustbus's typed values (`s`, an `a{sv}`
//! whose variant is an enum deriving `Marshal`/`Unmarshal`/`Signature`, `as`); the
//! subscriber sends `standard_messages::add_match` with the storm's rule, keeps only
//! PropertiesChanged with its `RpcConn` filter, and reads them with `wait_signal`.
//! `RpcConn` reads the subscriber's socket only when asked: during the storm the
//! updates wait in the bus's queue and the socket.

use std::collections::HashMap;
use std::time::Instant;

use anyhow::{Context, Result};
use harness::ipc::storm as st;
use rustbus::connection::{Error as ConnError, Timeout};
use rustbus::{Marshal, Signature, Unmarshal};
use rustbus::{MessageBuilder, MessageType, RpcConn};

use crate::ipc::{add_match, send};

/// The value of `Level` as it travels: a variant holding `i`.
#[derive(Marshal, Unmarshal, Signature, Debug)]
enum Level {
    I32(i32),
}

/// Sends the update announcing `value`.
fn emit(conn: &mut RpcConn, value: i32) -> Result<()> {
    let mut sig = MessageBuilder::new()
        .signal(st::PROPERTIES_INTERFACE, st::PROPERTIES_CHANGED, st::STORM_PATH)
        .build();
    let changed = HashMap::from([(st::STORM_PROPERTY, Level::I32(value))]);
    sig.body.push_param(st::STORM_INTERFACE)?;
    sig.body.push_param(&changed)?;
    sig.body.push_param(Vec::<&str>::new())?;
    send(conn, &mut sig)?;
    Ok(())
}

/// The client of `property/changed-storm/<n>`: `tx` emits, `rx` subscribes.
pub fn client(mut tx: RpcConn, mut rx: RpcConn, n: usize) -> Result<Box<dyn FnMut() -> Result<u64>>> {
    rx.set_filter(Box::new(|msg| match msg.typ {
        MessageType::Signal => msg.dynheader.member.as_deref() == Some(st::PROPERTIES_CHANGED),
        _ => true,
    }));
    add_match(&mut rx, &st::changed_rule())?;
    let last = st::last_level(n);
    Ok(Box::new(move || {
        for i in 0..n {
            emit(&mut tx, st::level(i))?;
        }
        let deadline = Instant::now() + st::SETTLE;
        let mut updates = Vec::with_capacity(n);
        while updates.last() != Some(&last) {
            let left = deadline.saturating_duration_since(Instant::now());
            let sig = match rx.wait_signal(Timeout::Duration(left)) {
                Ok(sig) => sig,
                Err(ConnError::TimedOut) => break,
                Err(e) => return Err(e).context("reading the subscriber's connection"),
            };
            let (interface, changed, _): (String, HashMap<String, Level>, Vec<String>) =
                sig.body.parser().get3().context("a PropertiesChanged body")?;
            if interface == st::STORM_INTERFACE {
                let Some(Level::I32(value)) = changed.get(st::STORM_PROPERTY) else {
                    updates.push(i32::MIN); // received, without the value
                    continue;
                };
                updates.push(*value);
            }
        }
        let seen = st::StormSeen {
            received: updates.len(),
            last: updates.last().copied(),
            updates,
            holder: "the program (rustbus has no property cache)",
        };
        st::storm_digest(&seen, n)
    }))
}
