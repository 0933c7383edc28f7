//! The subscription families `signal/burst/<n>`, `signal/delivered/<scope>`
//! and `signal/name-owner-churn/<scope>` with tokio-dbus 0.2
//! (`harness::ipc::subscription`; match churn is `Peer::match_churn` in
//! ipc.rs). Its own file so that ipc.rs keeps the connection and the calls.
//! tokio-dbus has no match-rule type: the harness's rule strings go to the bus
//! as they are (AddMatch through `Peer::bus_call`), so the `arg0` scopes are
//! the bus's filtering. Each operation uses two connections on the one
//! current-thread runtime: the sender writes everything (each message
//! flushed) before the subscriber is read, so a burst waits in the bus's queue
//! and the subscriber's socket.

use anyhow::{Context, Result};
use harness::ipc::subscription as sub;
use harness::ipc::{self as h, SubscriptionOp, Transport};
use tokio::runtime::Runtime;
use tokio_dbus::org_freedesktop_dbus::{self, NameFlag};
use tokio_dbus::MessageKind;

use super::{Op, Peer, PATH, PRIMARY_OWNER};

impl Peer {
    /// Emits `Ping(text)` and writes it out.
    async fn emit_text(&mut self, text: &str) -> Result<()> {
        self.buf.body.clear();
        self.buf.body.store(text)?;
        let msg = self
            .buf
            .send
            .signal(PATH, h::SIGNAL)
            .with_interface(h::INTERFACE)
            .with_body(&self.buf.body);
        self.buf.send.write_message(msg)?;
        self.conn.flush(&mut self.buf).await?;
        Ok(())
    }

    /// The text of the next `Ping`; other messages (NameAcquired) are dropped.
    async fn next_ping_text(&mut self) -> Result<String> {
        loop {
            self.conn.wait(&mut self.buf).await?;
            let msg = self.buf.recv.last_message()?;
            if let MessageKind::Signal { member, .. } = msg.kind() {
                if member == h::SIGNAL && msg.interface() == Some(h::INTERFACE) {
                    return Ok(msg.body().read::<str>()?.to_owned());
                }
            }
        }
    }

    /// The (name, new owner) of the next NameOwnerChanged from the bus.
    async fn next_owner_change(&mut self) -> Result<(String, String)> {
        loop {
            self.conn.wait(&mut self.buf).await?;
            let msg = self.buf.recv.last_message()?;
            if let MessageKind::Signal { member, .. } = msg.kind() {
                if member == "NameOwnerChanged" && msg.interface() == Some(org_freedesktop_dbus::INTERFACE) {
                    let mut b = msg.body();
                    let name = b.read::<str>()?.to_owned();
                    let _old = b.read::<str>()?;
                    let new = b.read::<str>()?.to_owned();
                    return Ok((name, new));
                }
            }
        }
    }

    /// RequestName (DO_NOT_QUEUE, must be the primary owner) then ReleaseName.
    async fn own_and_release(&mut self, name: &str) -> Result<()> {
        self.bus_call("RequestName", |b| {
            b.store(name)?;
            b.store(NameFlag::DO_NOT_QUEUE)
        })
        .await?;
        let code = self.reply_body("u")?.load::<u32>()?;
        anyhow::ensure!(code == PRIMARY_OWNER, "RequestName {name}: reply {code}");
        self.bus_call("ReleaseName", |b| b.store(name)).await
    }
}

/// A connected peer on `rt` subscribed to `rule`.
fn subscribed(rt: &Runtime, t: &Transport, rule: &str) -> Result<Peer> {
    rt.block_on(async {
        let mut peer = Peer::connect(t).await?;
        peer.add_match(rule).await?;
        anyhow::Ok(peer)
    })
}

/// The client side of the burst, delivered and name-owner-churn families, on `rt`.
pub(super) fn client<'a>(rt: Runtime, t: &Transport, op: SubscriptionOp) -> Result<Op<'a>> {
    let mut tx = rt.block_on(Peer::connect(t)).context("the sender")?;
    Ok(match op {
        SubscriptionOp::NameOwnerChurn(scope) => {
            let names = sub::churn_names();
            let mut rx = subscribed(&rt, t, &sub::name_owner_rule(scope, &names.1))?;
            Box::new(move || {
                rt.block_on(async {
                    for name in std::iter::repeat_n(&names.0, sub::NAME_CHURNS).chain([&names.1]) {
                        tx.own_and_release(name).await?;
                    }
                    let mut received = Vec::new();
                    loop {
                        let (name, new) = rx.next_owner_change().await?;
                        let end = name == names.1 && new.is_empty();
                        received.push((name, new));
                        if end {
                            break;
                        }
                    }
                    sub::name_churn_digest(&received, scope, &names)
                })
            })
        }
        SubscriptionOp::Delivered(scope) => {
            let mut rx = subscribed(&rt, t, &sub::delivered_rule(scope))?;
            let texts = sub::delivered_texts();
            Box::new(move || {
                rt.block_on(async {
                    for text in &texts {
                        tx.emit_text(text).await?;
                    }
                    let mut received = Vec::new();
                    loop {
                        let text = rx.next_ping_text().await?;
                        let end = text == h::SIGNAL_TEXT;
                        received.push(text);
                        if end {
                            break;
                        }
                    }
                    sub::delivered_digest(&received, scope)
                })
            })
        }
        SubscriptionOp::Burst(n) => {
            let mut rx = subscribed(&rt, t, &h::ping_rule())?;
            let texts: Vec<String> = (0..n).map(sub::burst_text).collect();
            Box::new(move || {
                rt.block_on(async {
                    for text in &texts {
                        tx.emit_text(text).await?;
                    }
                    tx.emit_text(sub::BURST_END).await?;
                    let mut received = Vec::with_capacity(n);
                    loop {
                        let text = rx.next_ping_text().await?;
                        if text == sub::BURST_END {
                            break;
                        }
                        received.push(text);
                    }
                    sub::burst_digest(&received, n)
                })
            })
        }
        SubscriptionOp::MatchChurn | SubscriptionOp::PropertyStorm(_) => {
            anyhow::bail!("{op:?} is not a client of subscriptions.rs")
        }
    })
}
