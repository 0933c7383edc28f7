//! `property/changed-storm/<n>` with async-rustbus 0.2 (harness::ipc::storm is the
//! canon). async-rustbus has no proxy and no property cache: an application keeps the
//! value of each `PropertiesChanged` itself, and so does this client. The emitter
//! builds each update with `MessageBuilder::signal` and a body of rustbus 0.17's typed
//! values (`s`, an `a{sv}` whose variant is [`I32Variant`], `as`) and sends it with
//! `send_msg_wo_rsp`; the subscriber registers a `MatchRule` (path, interface,
//! member) with `insert_sig_match` and reads the updates with `get_signal`. The
//! library's `MatchRule` has no `arg0`, so the storm's rule goes to the bus without
//! it and the subscriber checks the changed interface itself (nothing else emits
//! PropertiesChanged at the storm's path, so the bus delivers the same signals). The
//! runtime is current-thread: during the storm the updates wait in the bus's queue
//! and the subscriber's socket.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result};
use async_rustbus::rustbus_core::message_builder::MessageBuilder;
use async_rustbus::{MatchRule, RpcConn};
use harness::ipc::storm as st;
use harness::ipc::Transport;
use rustbus::signature::{Container, Type};
use rustbus::wire::marshal::traits::SignatureBuffer;
use rustbus::wire::marshal::MarshalContext;
use rustbus::wire::unmarshal::traits::Variant;
use rustbus::{Marshal, Signature};
use tokio::runtime::Runtime;

use crate::ipc::connect;
use crate::{MarshalError, WireResult};

/// An `i32` written as a variant (rustbus_derive 0.4, which rustbus 0.17 uses,
/// derives structs only).
struct I32Variant(i32);

impl Signature for I32Variant {
    fn signature() -> Type {
        Type::Container(Container::Variant)
    }
    fn alignment() -> usize {
        1
    }
    fn sig_str(buf: &mut SignatureBuffer) {
        buf.push_static("v")
    }
    fn has_sig(sig: &str) -> bool {
        sig.starts_with('v')
    }
}

impl Marshal for I32Variant {
    fn marshal(&self, ctx: &mut MarshalContext) -> Result<(), MarshalError> {
        self.0.marshal_as_variant(ctx)
    }
}

/// Sends the update announcing `value`.
async fn emit(conn: &RpcConn, value: i32) -> Result<()> {
    let mut sig = MessageBuilder::new()
        .signal(st::PROPERTIES_INTERFACE, st::PROPERTIES_CHANGED, st::STORM_PATH)
        .build();
    let changed = HashMap::from([(st::STORM_PROPERTY, I32Variant(value))]);
    sig.body.push_param(st::STORM_INTERFACE).wire()?;
    sig.body.push_param(&changed).wire()?;
    sig.body.push_param(Vec::<&str>::new()).wire()?;
    conn.send_msg_wo_rsp(&sig).await?;
    Ok(())
}

/// The storm's rule as the library can say it (`st::changed_rule` less its `arg0`).
fn changed_match() -> MatchRule {
    let mut rule = MatchRule::new();
    rule.path(st::STORM_PATH)
        .interface(st::PROPERTIES_INTERFACE)
        .member(st::PROPERTIES_CHANGED);
    rule
}

/// The client of `property/changed-storm/<n>`: one connection emits, another subscribes.
pub fn client(rt: Runtime, t: &Transport, n: usize) -> Result<Box<dyn FnMut() -> Result<u64>>> {
    let rule = changed_match();
    let tx = rt.block_on(connect(t))?;
    let rx = rt.block_on(async {
        let rx = connect(t).await?;
        rx.insert_sig_match(&rule)
            .await
            .context("AddMatch for PropertiesChanged")?;
        anyhow::Ok(rx)
    })?;
    let last = st::last_level(n);
    Ok(Box::new(move || {
        rt.block_on(async {
            for i in 0..n {
                emit(&tx, st::level(i)).await?;
            }
            let deadline = tokio::time::Instant::now() + st::SETTLE;
            let mut updates = Vec::with_capacity(n);
            while updates.last() != Some(&last) {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                let sig = match tokio::time::timeout(left.max(Duration::from_millis(1)), rx.get_signal(&rule)).await {
                    Ok(sig) => sig.context("reading the subscriber's connection")?,
                    Err(_) => break,
                };
                let (interface, changed, _): (String, HashMap<String, Variant>, Vec<String>) =
                    sig.body.parser().get3().wire().context("a PropertiesChanged body")?;
                if interface == st::STORM_INTERFACE {
                    // i32::MIN: received, without the value.
                    let value = changed.get(st::STORM_PROPERTY).and_then(|v| v.get::<i32>().ok());
                    updates.push(value.unwrap_or(i32::MIN));
                }
            }
            let seen = st::StormSeen {
                received: updates.len(),
                last: updates.last().copied(),
                updates,
                holder: "the program (async-rustbus has no property cache)",
            };
            st::storm_digest(&seen, n)
        })
    }))
}
