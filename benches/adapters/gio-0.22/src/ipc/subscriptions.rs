//! The subscription families (`signal/*` under `harness::ipc::subscription`: match
//! churn, burst, delivered-by-rule, name-owner churn) on GDBus; the property storm is
//! `storm.rs`. Subscriptions are `subscribe_to_signal` (GDBus puts the fields, `arg0`
//! included, in the rule it sends the bus, and filters again itself); their callbacks
//! run on GLib's default main context, which the operation iterates on the calling
//! thread until its last signal arrived. GDBus's worker thread reads every socket
//! whether or not the context is iterated: in a burst the consumer's signals wait in
//! GDBus's queue of callbacks, not in the bus or the socket (unlike rustbus, sd-bus or
//! libdbus, which read only when asked).

use std::cell::RefCell;
use std::rc::Rc;

use anyhow::{Context, Result};
use gio::{DBusConnection, DBusSignalFlags};
use glib::variant::ToVariant;
use glib::MainContext;
use harness::ipc::subscription::{self as sub, RuleScope};
use harness::ipc::{self as h, SubscriptionOp, Transport};
use harness::Digest;

use super::signals::{emit_ping_text, subscribe_ping_with, sync_with_bus, Inbox};
use super::{call_bus, connect, BUS};

type Op = Box<dyn FnMut() -> Result<u64>>;

/// The client side of `op`.
pub fn client(t: &Transport, op: SubscriptionOp) -> Result<Op> {
    match op {
        SubscriptionOp::MatchChurn => match_churn(t),
        SubscriptionOp::Burst(n) => burst(t, n),
        SubscriptionOp::Delivered(scope) => delivered(t, scope),
        SubscriptionOp::NameOwnerChurn(scope) => name_owner_churn(t, scope),
        SubscriptionOp::PropertyStorm(n) => super::storm::client(t, n),
    }
}

/// Iterates the default main context until `done`, or until `rx` was closed (a bus
/// that disconnected the consumer: what arrived is then checked and fails with counts).
fn iterate_until(rx: &DBusConnection, mut done: impl FnMut() -> bool) {
    let context = MainContext::default();
    while !done() && !rx.is_closed() {
        context.iteration(true);
    }
    // Callbacks already queued before the close.
    while !done() && context.iteration(false) {}
}

/// `signal/match-churn`: AddMatch and RemoveMatch of the churn rule, each reply awaited.
/// GDBus's `subscribe_to_signal` sends AddMatch without waiting for its reply (and
/// RemoveMatch when the subscription goes), so the round trips are GDBus's `call_sync`
/// to the bus driver; an error reply (MatchRuleNotFound) fails the operation.
fn match_churn(t: &Transport) -> Result<Op> {
    let conn = connect(t)?;
    let rule = sub::churn_rule();
    Ok(Box::new(move || {
        call_bus(&conn, "AddMatch", Some(&(rule.as_str(),).to_variant()), "()")?;
        call_bus(&conn, "RemoveMatch", Some(&(rule.as_str(),).to_variant()), "()")?;
        Ok(Digest::new().finish())
    }))
}

/// `signal/burst/<n>`: n Pings and the end mark into a subscriber whose context is
/// not iterated, then iterated until the end mark.
fn burst(t: &Transport, n: usize) -> Result<Op> {
    let tx = connect(t)?;
    let rx = connect(t)?;
    let inbox = Inbox::default();
    let subscription = subscribe_ping_with(&rx, None, inbox.clone());
    sync_with_bus(&rx)?;
    let texts: Vec<String> = (0..n).map(sub::burst_text).collect();
    Ok(Box::new(move || {
        let _subscribed = &subscription;
        for text in &texts {
            emit_ping_text(&tx, text)?;
        }
        emit_ping_text(&tx, sub::BURST_END)?;
        iterate_until(&rx, || inbox.borrow().back().is_some_and(|t| t == sub::BURST_END));
        let mut received: Vec<String> = inbox.borrow_mut().drain(..).collect();
        if received.last().is_some_and(|t| t == sub::BURST_END) {
            received.pop();
        }
        sub::burst_digest(&received, n)
    }))
}

/// `signal/delivered/<scope>`: the 10 Pings into a subscription of the scope's rule,
/// read up to the matching one.
fn delivered(t: &Transport, scope: RuleScope) -> Result<Op> {
    let tx = connect(t)?;
    let rx = connect(t)?;
    let inbox = Inbox::default();
    let arg0 = (scope == RuleScope::Arg0).then_some(h::SIGNAL_TEXT);
    let subscription = subscribe_ping_with(&rx, arg0, inbox.clone());
    sync_with_bus(&rx)?;
    let texts = sub::delivered_texts();
    Ok(Box::new(move || {
        let _subscribed = &subscription;
        for text in &texts {
            emit_ping_text(&tx, text)?;
        }
        iterate_until(&rx, || inbox.borrow().back().is_some_and(|t| t == h::SIGNAL_TEXT));
        let received: Vec<String> = inbox.borrow_mut().drain(..).collect();
        sub::delivered_digest(&received, scope)
    }))
}

/// `signal/name-owner-churn/<scope>`: a name requested and released, then the sentinel,
/// into a NameOwnerChanged subscription (`arg0` the sentinel when the scope says so).
fn name_owner_churn(t: &Transport, scope: RuleScope) -> Result<Op> {
    let names = sub::churn_names();
    let tx = connect(t)?;
    let rx = connect(t)?;
    let changes: Rc<RefCell<Vec<(String, String)>>> = Rc::default();
    let seen = changes.clone();
    let arg0 = (scope == RuleScope::Arg0).then_some(names.1.as_str());
    let subscription = rx.subscribe_to_signal(
        Some(BUS),
        Some(BUS),
        Some("NameOwnerChanged"),
        None,
        arg0,
        DBusSignalFlags::NONE,
        move |signal| {
            // A change of another type is recorded as empty: its name then counts as another's.
            let (name, _old, new) =
                crate::variant::get::<(String, String, String)>(signal.parameters).unwrap_or_default();
            seen.borrow_mut().push((name, new));
        },
    );
    sync_with_bus(&rx)?;
    Ok(Box::new(move || {
        let _subscribed = &subscription;
        for name in std::iter::repeat_n(&names.0, sub::NAME_CHURNS).chain([&names.1]) {
            // DBUS_NAME_FLAG_DO_NOT_QUEUE
            call_bus(&tx, "RequestName", Some(&(name.as_str(), 4u32).to_variant()), "(u)").context("RequestName")?;
            call_bus(&tx, "ReleaseName", Some(&(name.as_str(),).to_variant()), "(u)").context("ReleaseName")?;
        }
        let released = |c: &(String, String)| c.0 == names.1 && c.1.is_empty();
        iterate_until(&rx, || changes.borrow().iter().any(released));
        let received = std::mem::take(&mut *changes.borrow_mut());
        sub::name_churn_digest(&received, scope, &names)
    }))
}
