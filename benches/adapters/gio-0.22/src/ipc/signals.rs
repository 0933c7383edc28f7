//! `Ping` over GDBus: `emit_signal` to send, `subscribe_to_signal`
//! (g_dbus_connection_signal_subscribe, which adds the match rule on the bus)
//! to receive. Signal callbacks run on GLib's global default main context,
//! iterated here on the calling thread until a Ping arrived.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use anyhow::{Context, Result};
use gio::{DBusConnection, DBusSignalFlags, SignalSubscription};
use glib::variant::ToVariant;
use harness::ipc::{self as h, Transport};
use harness::Digest;

use super::{call_bus, connect};
use crate::variant;

pub fn emit_ping(conn: &DBusConnection) -> Result<()> {
    emit_ping_text(conn, h::SIGNAL_TEXT)
}

/// A `Ping` carrying `text`.
pub(super) fn emit_ping_text(conn: &DBusConnection, text: &str) -> Result<()> {
    conn.emit_signal(
        None,
        h::OBJECT_PATH,
        h::INTERFACE,
        h::SIGNAL,
        Some(&(text,).to_variant()),
    )
    .context("emitting Ping")
}

/// The texts of the Pings received and not yet taken.
pub(super) type Inbox = Rc<RefCell<VecDeque<String>>>;

/// Subscribes to `Ping` (the rule is `harness::ipc::ping_rule`).
fn subscribe_ping(conn: &DBusConnection, inbox: Inbox) -> SignalSubscription {
    subscribe_ping_with(conn, None, inbox)
}

/// Subscribes to `Ping`, only those whose first argument is `arg0` when given (GDBus
/// puts it in the bus's rule: `harness::ipc::ping_rule` with `arg0='…'`).
pub(super) fn subscribe_ping_with(conn: &DBusConnection, arg0: Option<&str>, inbox: Inbox) -> SignalSubscription {
    conn.subscribe_to_signal(
        None,
        Some(h::INTERFACE),
        Some(h::SIGNAL),
        Some(h::OBJECT_PATH),
        arg0,
        DBusSignalFlags::NONE,
        move |signal| {
            // A Ping of another type is recorded as empty: its digest then fails.
            let text = variant::get::<(String,)>(signal.parameters)
                .map(|(t,)| t)
                .unwrap_or_default();
            inbox.borrow_mut().push_back(text);
        },
    )
}

/// GDBus sends AddMatch without waiting for its reply: a call to the bus
/// afterwards returns only once the bus has handled everything sent before.
pub(super) fn sync_with_bus(conn: &DBusConnection) -> Result<()> {
    call_bus(conn, "GetId", None, "(s)").context("waiting for the match rules")?;
    Ok(())
}

/// Iterates the main context until a Ping arrived; the digest of its text.
fn next_ping(inbox: &Inbox) -> u64 {
    let context = glib::MainContext::default();
    loop {
        if let Some(text) = inbox.borrow_mut().pop_front() {
            let mut d = Digest::new();
            d.str(&text);
            return d.finish();
        }
        context.iteration(true);
    }
}

pub fn subscriber(t: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
    let conn = connect(t)?;
    let inbox = Inbox::default();
    let subscription = subscribe_ping(&conn, inbox.clone());
    // Rules on the bus only, without a GDBus subscription (which would also
    // match every incoming signal against each of them in the client).
    for j in 0..extra_rules {
        call_bus(&conn, "AddMatch", Some(&(h::nonmatching_rule(j),).to_variant()), "()")?;
    }
    sync_with_bus(&conn)?;
    Ok(Box::new(move || {
        let _keep = (&conn, &subscription);
        Ok(next_ping(&inbox))
    }))
}

pub fn emit_receive<'a>(t: &Transport) -> Result<Box<dyn FnMut() -> Result<u64> + 'a>> {
    let tx = connect(t)?;
    let rx = connect(t)?;
    let inbox = Inbox::default();
    let subscription = subscribe_ping(&rx, inbox.clone());
    sync_with_bus(&rx)?;
    Ok(Box::new(move || {
        let _keep = (&rx, &subscription);
        emit_ping(&tx)?;
        Ok(next_ping(&inbox))
    }))
}
