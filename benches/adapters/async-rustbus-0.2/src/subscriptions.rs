//! The subscription families (`signal/*` under `harness::ipc::subscription`:
//! name-owner churn, delivered-by-rule, burst, match churn) with async-rustbus
//! 0.2: `ipc::client`'s arm for `IpcOp::Subscription` (the property storm is
//! storm.rs). Its own file so that ipc.rs keeps the connection, the calls and
//! the server. Each subscription is the library's own: a `MatchRule`
//! registered with `insert_sig_match` (which sends the bus its AddMatch and
//! gives the rule a queue) and read with `get_signal`, and removed with
//! `remove_sig_match`. async-rustbus's `MatchRule` has only sender, path,
//! path_namespace, interface and member: the `arg0` scopes are answered by
//! `ipc::unsupported_ipc` with [`NO_ARG_MATCH`].

use anyhow::{Context, Result};
use async_rustbus::{MatchRule, RpcConn};
use harness::ipc::subscription::RuleScope;
use harness::ipc::{self as h, SubscriptionOp, Transport};
use harness::Digest;
use tokio::runtime::Runtime;

use crate::ipc::{connect, emit_ping_text, ping_match};
use crate::WireResult;

type Op = Box<dyn FnMut() -> Result<u64>>;

/// Why an `arg0` rule cannot be subscribed to with this library.
pub const NO_ARG_MATCH: &str = "async-rustbus 0.2.0 has no argN match: its MatchRule (routing.rs) has only \
     sender, path, path_namespace, interface and member, insert_sig_match sends the bus that rule's \
     match_string() and queue_sig routes signals by those fields only, so an arg0-filtered subscription cannot be \
     asked for";

/// Whether `op` needs a rule the library cannot express.
pub fn needs_arg_match(op: SubscriptionOp) -> bool {
    matches!(
        op,
        SubscriptionOp::Delivered(RuleScope::Arg0) | SubscriptionOp::NameOwnerChurn(RuleScope::Arg0)
    )
}

/// The bus's `NameOwnerChanged`, as the broad rule of `signal/name-owner-churn/broad` says.
fn name_owner_match() -> MatchRule {
    let mut rule = MatchRule::new();
    rule.sender("org.freedesktop.DBus")
        .interface("org.freedesktop.DBus")
        .member("NameOwnerChanged");
    rule
}

/// The rule `signal/match-churn` adds and removes (`subscription::churn_rule`).
fn churn_match() -> MatchRule {
    let mut rule = MatchRule::new();
    rule.path(h::OBJECT_PATH).interface(h::INTERFACE).member("ChurnSignal");
    rule
}

/// A connection subscribed to `rule`.
async fn subscribed(t: &Transport, rule: &MatchRule) -> Result<RpcConn> {
    let conn = connect(t).await?;
    conn.insert_sig_match(rule)
        .await
        .with_context(|| format!("AddMatch {}", rule.match_string()))?;
    Ok(conn)
}

/// The next signal of `rule`'s queue: its first argument, a string.
async fn next_text(conn: &RpcConn, rule: &MatchRule) -> Result<String> {
    let sig = conn.get_signal(rule).await?;
    sig.body.parser().get::<String>().wire()
}

/// The client side of `op`, on `rt`.
pub fn client(rt: Runtime, t: &Transport, op: SubscriptionOp) -> Result<Op> {
    Ok(match op {
        SubscriptionOp::NameOwnerChurn(scope) => {
            let names = h::subscription::churn_names();
            let rule = name_owner_match();
            let tx = rt.block_on(connect(t))?;
            let rx = rt.block_on(subscribed(t, &rule))?;
            Box::new(move || {
                rt.block_on(async {
                    for name in std::iter::repeat_n(&names.0, h::subscription::NAME_CHURNS).chain([&names.1]) {
                        // RpcConn::request_name asks with DO_NOT_QUEUE.
                        anyhow::ensure!(
                            tx.request_name(name).await?,
                            "RequestName {name}: not the primary owner"
                        );
                        tx.release_name(name).await.context("ReleaseName")?;
                    }
                    let mut received = Vec::new();
                    loop {
                        let sig = rx.get_signal(&rule).await?;
                        let (name, _, new): (String, String, String) = sig.body.parser().get3().wire()?;
                        let end = name == names.1 && new.is_empty();
                        received.push((name, new));
                        if end {
                            break;
                        }
                    }
                    h::subscription::name_churn_digest(&received, scope, &names)
                })
            })
        }
        SubscriptionOp::Delivered(scope) => {
            // Only the broad rule reaches here (needs_arg_match): Ping, whatever its text.
            let rule = ping_match();
            let tx = rt.block_on(connect(t))?;
            let rx = rt.block_on(subscribed(t, &rule))?;
            let texts = h::subscription::delivered_texts();
            Box::new(move || {
                rt.block_on(async {
                    for text in &texts {
                        emit_ping_text(&tx, text).await?;
                    }
                    let mut received = Vec::new();
                    loop {
                        let text = next_text(&rx, &rule).await?;
                        let end = text == h::SIGNAL_TEXT;
                        received.push(text);
                        if end {
                            break;
                        }
                    }
                    h::subscription::delivered_digest(&received, scope)
                })
            })
        }
        SubscriptionOp::Burst(n) => {
            // The runtime is current-thread: while the burst is sent nothing reads the
            // consumer's socket, so the signals wait in the bus's queue and the socket.
            let rule = ping_match();
            let tx = rt.block_on(connect(t))?;
            let rx = rt.block_on(subscribed(t, &rule))?;
            let texts: Vec<String> = (0..n).map(h::subscription::burst_text).collect();
            Box::new(move || {
                rt.block_on(async {
                    for text in &texts {
                        emit_ping_text(&tx, text).await?;
                    }
                    emit_ping_text(&tx, h::subscription::BURST_END).await?;
                    let mut received = Vec::with_capacity(n);
                    loop {
                        let text = next_text(&rx, &rule).await?;
                        if text == h::subscription::BURST_END {
                            break;
                        }
                        received.push(text);
                    }
                    h::subscription::burst_digest(&received, n)
                })
            })
        }
        SubscriptionOp::PropertyStorm(n) => crate::storm::client(rt, t, n)?,
        SubscriptionOp::MatchChurn => {
            // insert_sig_match and remove_sig_match each await the bus's reply (an error
            // reply, such as MatchRuleNotFound, is an error).
            let conn = rt.block_on(connect(t))?;
            let rule = churn_match();
            Box::new(move || {
                rt.block_on(async {
                    conn.insert_sig_match(&rule).await.context("AddMatch")?;
                    conn.remove_sig_match(&rule).await.context("RemoveMatch")?;
                    anyhow::Ok(())
                })?;
                Ok(Digest::new().finish())
            })
        }
    })
}
