//! Issue 31's subscription families over dbus-tokio (`harness::ipc::subscription`
//! is the canon): `signal/burst/<n>`, `signal/delivered/<scope>` and
//! `signal/name-owner-churn/<scope>`, each with an emitting and a subscribed
//! connection of this process on the adapter's current-thread runtime.
//!
//! What the library does meanwhile: each connection's dbus-tokio `IOResource`
//! task reads its socket whenever the runtime runs it (here: at every yield of
//! the emitting loop), and dbus-rs's nonblock dispatch hands each matching
//! message to the subscription: `MsgMatch::stream` (an unbounded channel) for
//! `Ping`, or a `start_receive` callback feeding the adapter's own unbounded
//! channel where the rule is text dbus-rs's `MatchRule` cannot hold (argN). So a
//! burst is read into unbounded memory rather than left in the bus's queue, and
//! nothing is dropped by the library.

use anyhow::{anyhow, Context, Result};
use dbus::channel::MatchingReceiver;
use dbus::message::MatchRule;
use dbus::Message;
use futures_util::StreamExt;
use harness::ipc::subscription::{self as sub, RuleScope};
use harness::ipc::{self as h, Transport};
use tokio::runtime::Runtime;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

use crate::ipc::{connect, send, subscribe_ping, Bus, Op, TIMEOUT};
use crate::service::{self, ping_rule};

/// The next item of `rx`, or an error after [`TIMEOUT`] or when it has ended.
async fn next<T>(rx: &mut UnboundedReceiver<T>, what: &str) -> Result<T> {
    tokio::time::timeout(TIMEOUT, rx.recv())
        .await
        .map_err(|_| anyhow!("no {what} within {TIMEOUT:?}"))?
        .with_context(|| format!("the {what} channel ended"))
}

/// Queues every message on `tx`, letting its I/O task run after each (a send
/// libdbus cannot write at once wakes that task, and fails if the task has not
/// run since the last such wake: `ipc`'s in-flight note), then flushes with
/// libdbus's blocking `Channel::flush`, as the fanout emitter does: once the
/// socket's send buffer fills, dbus-tokio 0.7.6 never reports write readiness
/// (`ipc::NO_LARGE_WRITES`), so the tail of a long burst would stay queued in
/// libdbus (measured without it: 9730 to 9972 of 10000 Pings arrived, and 855 and
/// 935 of 1000 storm updates on dbus-broker and busd).
pub(crate) async fn send_all(tx: &Bus, msgs: impl IntoIterator<Item = Message>) -> Result<()> {
    let mut last = None;
    for msg in msgs {
        if let Some(previous) = last.replace(msg) {
            send(tx, previous, false)?;
            tokio::task::yield_now().await;
        }
    }
    if let Some(msg) = last {
        send(tx, msg, true)?;
    }
    Ok(())
}

/// `rule` (text, argN included) to the bus with `add_match_no_cb`, and a local
/// receiver for `local` (no AddMatch) whose messages `pick` turns into items of
/// the returned channel.
fn receive<T: Send + 'static>(
    rx: &Bus,
    local: MatchRule<'static>,
    pick: impl Fn(&Message) -> Option<T> + Send + Sync + 'static,
) -> UnboundedReceiver<T> {
    let (slot, items) = unbounded_channel();
    rx.conn.start_receive(
        local,
        Box::new(move |msg, _| {
            if let Some(item) = pick(&msg) {
                let _ = slot.send(item);
            }
            true
        }),
    );
    items
}

/// `signal/delivered/<scope>`: the rule text goes to the bus as it is (dbus-rs's
/// `MatchRule` has no argN), so the bus filters by arg0; the local receiver
/// hands over whatever the bus delivered.
pub fn delivered<'a>(rt: &'a Runtime, t: &Transport, scope: RuleScope) -> Result<Op<'a>> {
    let (tx, rx, mut texts_in) = rt.block_on(async {
        let tx = connect(t).await?;
        let rx = connect(t).await?;
        rx.conn
            .add_match_no_cb(&sub::delivered_rule(scope))
            .await
            .context("AddMatch")?;
        let texts_in = receive(&rx, ping_rule()?, |msg| msg.get1::<String>());
        anyhow::Ok((tx, rx, texts_in))
    })?;
    let texts = sub::delivered_texts();
    Ok(Box::new(move || {
        let _keep = &rx;
        rt.block_on(async {
            send_all(&tx, texts.iter().map(|text| service::ping_with(text))).await?;
            let mut got = Vec::new();
            loop {
                let text = next(&mut texts_in, "Ping").await?;
                let end = text == h::SIGNAL_TEXT;
                got.push(text);
                if end {
                    break;
                }
            }
            sub::delivered_digest(&got, scope)
        })
    }))
}

/// `signal/name-owner-churn/<scope>`: the async `request_name` / `release_name`
/// on one connection, each awaited; `NameOwnerChanged` as `delivered` receives.
pub fn name_owner_churn<'a>(rt: &'a Runtime, t: &Transport, scope: RuleScope) -> Result<Op<'a>> {
    let names = sub::churn_names();
    let (tx, rx, mut changes) = rt.block_on(async {
        let tx = connect(t).await?;
        let rx = connect(t).await?;
        rx.conn
            .add_match_no_cb(&sub::name_owner_rule(scope, &names.1))
            .await
            .context("AddMatch")?;
        let changes = receive(
            &rx,
            MatchRule::new_signal("org.freedesktop.DBus", "NameOwnerChanged"),
            |msg| match msg.get3::<String, String, String>() {
                (Some(name), _, Some(new)) => Some((name, new)),
                _ => None,
            },
        );
        anyhow::Ok((tx, rx, changes))
    })?;
    Ok(Box::new(move || {
        let _keep = &rx;
        rt.block_on(async {
            for name in std::iter::repeat_n(&names.0, sub::NAME_CHURNS).chain([&names.1]) {
                tx.conn
                    .request_name(name.as_str(), false, false, true)
                    .await
                    .context("RequestName")?;
                tx.conn.release_name(name.as_str()).await.context("ReleaseName")?;
            }
            let mut got = Vec::new();
            loop {
                let (name, new) = next(&mut changes, "NameOwnerChanged").await?;
                let end = name == names.1 && new.is_empty();
                got.push((name, new));
                if end {
                    break;
                }
            }
            sub::name_churn_digest(&got, scope, &names)
        })
    }))
}

/// `signal/burst/<n>`: n `Ping`s and the end marker queued on one connection, then
/// the subscription's stream (`add_match(..).stream()`) read up to the marker.
pub fn burst<'a>(rt: &'a Runtime, t: &Transport, n: usize) -> Result<Op<'a>> {
    let (tx, rx, subscription, mut stream) = rt.block_on(async {
        let tx = connect(t).await?;
        let rx = connect(t).await?;
        let (subscription, stream) = subscribe_ping(&rx).await?;
        anyhow::Ok((tx, rx, subscription, stream))
    })?;
    let texts: Vec<String> = (0..n).map(sub::burst_text).collect();
    Ok(Box::new(move || {
        let _keep = (&rx, &subscription);
        rt.block_on(async {
            let burst = texts.iter().map(String::as_str).chain([sub::BURST_END]);
            send_all(&tx, burst.map(service::ping_with)).await?;
            let mut got = Vec::with_capacity(n);
            // Until the end marker; without it for TIMEOUT, what arrived is checked as it is,
            // so signals that never came are reported lost, with the counts.
            while let Ok(next) = tokio::time::timeout(TIMEOUT, stream.next()).await {
                let (_, (text,)) = next.context("the signal stream ended")?;
                if text == sub::BURST_END {
                    break;
                }
                got.push(text);
            }
            sub::burst_digest(&got, n)
        })
    }))
}
