//! `property/changed-storm/<n>` with dbus-rs 0.9 (harness::ipc::storm is the canon).
//! dbus-rs has no property cache and no proxy that keeps one: an application keeps
//! the value of each `PropertiesChanged` itself. So does this client; the messages
//! (the generated `PropertiesPropertiesChanged`) are `storm_messages`, shared with
//! dbus-tokio-0.7. The subscriber installs the struct's `match_rule` with
//! `Connection::add_match` (AddMatch on the bus, and a local filter) and keeps the
//! last `Level` of every message its callback is handed. libdbus reads the
//! subscriber's socket only inside `process`: during the storm the updates wait in
//! the bus's queue and the socket, then `process` hands them over until the last
//! value arrives (or `storm::SETTLE` passes).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use dbus::blocking::Connection;
use dbus::channel::Sender;
use dbus::Message;
use harness::ipc::storm as st;

use crate::storm_messages::{self as sm, PropertiesPropertiesChanged};

/// The values of the updates the subscriber's callback was handed, in order.
type Received = Arc<Mutex<Vec<i32>>>;

/// The client of `property/changed-storm/<n>`: `tx` emits, `rx` subscribes.
pub fn client(tx: Connection, rx: Connection, n: usize) -> Result<Box<dyn FnMut() -> Result<u64>>> {
    let path = sm::path()?;
    let received: Received = Arc::new(Mutex::new(Vec::new()));
    let slot = received.clone();
    rx.add_match(
        sm::rule(&path),
        move |pc: PropertiesPropertiesChanged, _: &Connection, _: &Message| {
            if let Some(value) = sm::level_of(&pc) {
                slot.lock().expect("not poisoned").push(value);
            }
            true
        },
    )
    .context("AddMatch for PropertiesChanged")?;
    let last = st::last_level(n);
    Ok(Box::new(move || {
        for i in 0..n {
            tx.send(sm::update(&path, st::level(i)))
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
        st::storm_digest(&sm::seen(updates), n)
    }))
}
