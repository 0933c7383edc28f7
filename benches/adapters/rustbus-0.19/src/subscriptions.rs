//! The subscription families (`signal/*` under `harness::ipc::subscription`:
//! name-owner churn, delivered-by-rule, burst, match churn) and the property
//! storm with rustbus 0.19: `ipc::client`'s arm for `IpcOp::Subscription`.
//! Its own file so that ipc.rs keeps the connection, the calls and the
//! server. rustbus has no rule type and no signal stream: every rule goes to
//! the bus as `standard_messages::add_match`, an `RpcConn` filter keeps the
//! signals an operation waits for, and `wait_signal` takes them one by one.

use anyhow::{Context, Result};
use harness::ipc::{self as h, SubscriptionOp, Transport};
use harness::Digest;
use rustbus::connection::Timeout;
use rustbus::{standard_messages, MessageType};

use crate::ipc::{add_match, call_msg, connect, emit_ping_text, ping_receiver, ping_receiver_with};

type Op = Box<dyn FnMut() -> Result<u64>>;

/// The client side of `op`.
pub fn client(t: &Transport, op: SubscriptionOp) -> Result<Op> {
    Ok(match op {
        SubscriptionOp::NameOwnerChurn(scope) => {
            let names = h::subscription::churn_names();
            let mut tx = connect(t)?;
            let mut rx = connect(t)?;
            rx.set_filter(Box::new(|msg| {
                msg.typ != MessageType::Signal || msg.dynheader.member.as_deref() == Some("NameOwnerChanged")
            }));
            add_match(&mut rx, &h::subscription::name_owner_rule(scope, &names.1))?;
            Box::new(move || {
                for name in std::iter::repeat_n(&names.0, h::subscription::NAME_CHURNS).chain([&names.1]) {
                    // DBUS_NAME_FLAG_DO_NOT_QUEUE
                    call_msg(&mut tx, &mut standard_messages::request_name(name, 4)).context("RequestName")?;
                    call_msg(&mut tx, &mut standard_messages::release_name(name)).context("ReleaseName")?;
                }
                let mut received = Vec::new();
                loop {
                    let sig = rx.wait_signal(Timeout::Infinite)?;
                    let (name, _, new): (String, String, String) = sig.body.parser().get3()?;
                    let end = name == names.1 && new.is_empty();
                    received.push((name, new));
                    if end {
                        break;
                    }
                }
                h::subscription::name_churn_digest(&received, scope, &names)
            })
        }
        SubscriptionOp::Delivered(scope) => {
            // The rule goes to the bus as AddMatch (rustbus has no rule type of its own);
            // the connection's filter keeps Pings, whatever their text.
            let mut tx = connect(t)?;
            let mut rx = ping_receiver_with(t, &h::subscription::delivered_rule(scope))?;
            let texts = h::subscription::delivered_texts();
            Box::new(move || {
                for text in &texts {
                    emit_ping_text(&mut tx, text)?;
                }
                let mut received = Vec::new();
                loop {
                    let sig = rx.wait_signal(Timeout::Infinite)?;
                    let text: String = sig.body.parser().get()?;
                    let end = text == h::SIGNAL_TEXT;
                    received.push(text);
                    if end {
                        break;
                    }
                }
                h::subscription::delivered_digest(&received, scope)
            })
        }
        SubscriptionOp::Burst(n) => {
            // RpcConn reads the consumer's socket only when asked: during the burst the
            // signals wait in the bus's queue and the socket.
            let mut tx = connect(t)?;
            let mut rx = ping_receiver(t)?;
            let texts: Vec<String> = (0..n).map(h::subscription::burst_text).collect();
            Box::new(move || {
                for text in &texts {
                    emit_ping_text(&mut tx, text)?;
                }
                emit_ping_text(&mut tx, h::subscription::BURST_END)?;
                let mut received = Vec::with_capacity(n);
                loop {
                    let sig = rx.wait_signal(Timeout::Infinite)?;
                    let text: String = sig.body.parser().get()?;
                    if text == h::subscription::BURST_END {
                        break;
                    }
                    received.push(text);
                }
                h::subscription::burst_digest(&received, n)
            })
        }
        SubscriptionOp::PropertyStorm(n) => crate::storm::client(connect(t)?, connect(t)?, n)?,
        SubscriptionOp::MatchChurn => {
            // standard_messages::add_match and remove_match, each reply awaited
            // (an error reply, such as MatchRuleNotFound, fails the operation).
            let mut conn = connect(t)?;
            let rule = h::subscription::churn_rule();
            Box::new(move || {
                add_match(&mut conn, &rule)?;
                call_msg(&mut conn, &mut standard_messages::remove_match(&rule)).context("RemoveMatch")?;
                Ok(Digest::new().finish())
            })
        }
    })
}
