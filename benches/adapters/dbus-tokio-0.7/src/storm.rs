//! `property/changed-storm/<n>` over dbus-tokio (harness::ipc::storm is the canon).
//! The messages are dbus-0.9's (`storm_messages`, shared): dbus-rs has no property
//! cache, so the program keeps each announced value. The emitter queues the n
//! updates on its connection (yielding to its I/O task after each, then flushing:
//! `subs::send_all`); the subscriber
//! is `add_match(rule).stream::<PropertiesPropertiesChanged>()`, which dbus-rs's
//! nonblock dispatch feeds from the connection's I/O task (an unbounded channel:
//! the updates are read while the storm is still being sent), read until the last
//! value arrives or `storm::SETTLE` passes.

use anyhow::{Context, Result};
use futures_util::StreamExt;
use harness::ipc::storm as st;
use harness::ipc::Transport;
use tokio::runtime::Runtime;

use crate::ipc::{connect, Op};
use crate::storm_messages::{self as sm, PropertiesPropertiesChanged};
use crate::subs::send_all;

pub fn client<'a>(rt: &'a Runtime, t: &Transport, n: usize) -> Result<Op<'a>> {
    let path = sm::path()?;
    let (tx, rx, subscription, mut stream) = rt.block_on(async {
        let tx = connect(t).await?;
        let rx = connect(t).await?;
        let (subscription, stream) = rx
            .conn
            .add_match(sm::rule(&path))
            .await
            .context("AddMatch for PropertiesChanged")?
            .stream::<PropertiesPropertiesChanged>();
        anyhow::Ok((tx, rx, subscription, stream))
    })?;
    let last = st::last_level(n);
    Ok(Box::new(move || {
        let _keep = (&rx, &subscription);
        rt.block_on(async {
            // Yielding after each, flushed at the end (`subs::send_all` says why).
            send_all(&tx, (0..n).map(|i| sm::update(&path, st::level(i)))).await?;
            let deadline = tokio::time::Instant::now() + st::SETTLE;
            let mut updates = Vec::new();
            while updates.last() != Some(&last) {
                match tokio::time::timeout_at(deadline, stream.next()).await {
                    Ok(Some((_, pc))) => updates.extend(sm::level_of(&pc)),
                    Ok(None) => anyhow::bail!("the PropertiesChanged stream ended"),
                    Err(_) => break,
                }
            }
            st::storm_digest(&sm::seen(updates), n)
        })
    }))
}
