//! `property/changed-storm/<n>` with tokio-dbus 0.2 (harness::ipc::storm is
//! the canon). tokio-dbus has no proxy and no property cache: an application
//! keeps the value of each `PropertiesChanged` itself, and so does this
//! client. The emitter writes each update with the typed `BodyBuf` writers
//! (`s`, an `a{sv}` whose entry holds `Variant::I32`, an empty `as`) and
//! flushes it; the subscriber sends the storm's rule (`storm::changed_rule`,
//! with its `arg0`) to the bus with AddMatch and reads the updates with
//! `Connection::wait`, under the canon's settle deadline. The runtime is
//! current-thread: during the storm the updates wait in the bus's queue and
//! the subscriber's socket.

use std::time::Duration;

use anyhow::{Context, Result};
use harness::ipc::storm as st;
use harness::ipc::Transport;
use tokio::runtime::Runtime;
use tokio_dbus::{ty, MessageKind, ObjectPath, Variant};

use super::{Op, Peer};

impl Peer {
    /// Sends the update announcing `value`.
    async fn emit_level(&mut self, value: i32) -> Result<()> {
        self.buf.body.clear();
        self.buf.body.store(st::STORM_INTERFACE)?;
        let mut changed = self.buf.body.store_array::<ty::Dict<ty::Str, ty::Variant>>()?;
        changed
            .store_entry()
            .store(st::STORM_PROPERTY)
            .store(Variant::I32(value))
            .finish();
        changed.finish();
        self.buf.body.store_array::<ty::Str>()?.finish();
        let msg = self
            .buf
            .send
            .signal(ObjectPath::new(st::STORM_PATH)?, st::PROPERTIES_CHANGED)
            .with_interface(st::PROPERTIES_INTERFACE)
            .with_body(&self.buf.body);
        self.buf.send.write_message(msg)?;
        self.conn.flush(&mut self.buf).await?;
        Ok(())
    }

    /// The next PropertiesChanged of the storm's interface: `Some(level)`, or
    /// `Some(i32::MIN)` when it did not carry the level; other messages are dropped.
    async fn next_level(&mut self) -> Result<i32> {
        loop {
            self.conn.wait(&mut self.buf).await?;
            let msg = self.buf.recv.last_message()?;
            let MessageKind::Signal { member, .. } = msg.kind() else {
                continue;
            };
            if member != st::PROPERTIES_CHANGED || msg.interface() != Some(st::PROPERTIES_INTERFACE) {
                continue;
            }
            let mut b = msg.body();
            if b.read::<str>()? != st::STORM_INTERFACE {
                continue;
            }
            let mut changed = b.load_array::<ty::Dict<ty::Str, ty::Variant>>()?;
            let mut level = i32::MIN;
            while let Some((name, value)) = changed.load_entry()? {
                if let (true, Variant::I32(v)) = (name == st::STORM_PROPERTY, value) {
                    level = v;
                }
            }
            return Ok(level);
        }
    }
}

/// The client of `property/changed-storm/<n>`: one connection emits, another subscribes.
pub(super) fn client<'a>(rt: Runtime, t: &Transport, n: usize) -> Result<Op<'a>> {
    let mut tx = rt.block_on(Peer::connect(t)).context("the emitter")?;
    let mut rx = rt.block_on(async {
        let mut rx = Peer::connect(t).await?;
        rx.add_match(&st::changed_rule()).await?;
        anyhow::Ok(rx)
    })?;
    let last = st::last_level(n);
    Ok(Box::new(move || {
        rt.block_on(async {
            for i in 0..n {
                tx.emit_level(st::level(i)).await?;
            }
            let deadline = tokio::time::Instant::now() + st::SETTLE;
            let mut updates = Vec::with_capacity(n);
            while updates.last() != Some(&last) {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                match tokio::time::timeout(left.max(Duration::from_millis(1)), rx.next_level()).await {
                    Ok(level) => updates.push(level.context("reading the subscriber's connection")?),
                    Err(_) => break,
                }
            }
            let seen = st::StormSeen {
                received: updates.len(),
                last: updates.last().copied(),
                updates,
                holder: "the program (tokio-dbus has no property cache)",
            };
            st::storm_digest(&seen, n)
        })
    }))
}
