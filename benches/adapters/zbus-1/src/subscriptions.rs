//! Issue 31's subscription families on zbus 1's synchronous API (`signal/match-churn`,
//! `signal/burst/<n>`, `signal/delivered/<scope>`, `signal/name-owner-churn/<scope>`;
//! `harness::ipc::subscription` is the canon). zbus 1 has no match rules of its own: the
//! rule goes to the bus with `fdo::DBusProxy::add_match` (the rule text), and the
//! subscriber reads its connection with `Connection::receive_specific`, keeping the
//! signal's interface and member (an `arg0` is filtered by the bus only), as zbus 2 does.
//! `receive_specific` queues what it does not return, up to the connection's
//! `max_queued` (64 by default), and drops the rest; nothing else arrives on these
//! connections. Everything runs on the calling thread (zbus 1 has no executor): a
//! subscriber is read only after the signals are sent, as in zbus 2 and 3's blocking API.

use anyhow::{bail, Context, Result};
use harness::ipc::subscription::{self as sub, SubscriptionOp};
use harness::ipc::{self as h, Transport};
use harness::Digest;
use zbus::fdo::{self, RequestNameFlags, RequestNameReply};
use zbus::{Connection, Message, MessageType};

use crate::ipc::connect;

type Op = Box<dyn FnMut() -> Result<u64>>;

const PING: (&str, &str) = (h::INTERFACE, h::SIGNAL);
const CHANGED: (&str, &str) = ("org.freedesktop.DBus", "NameOwnerChanged");

/// The next signal `(interface, member)` on `conn`.
fn next_signal(conn: &Connection, (interface, member): (&str, &str)) -> zbus::Result<Message> {
    conn.receive_specific(|msg| {
        let header = msg.header()?;
        Ok(header.message_type()? == MessageType::Signal
            && header.interface()? == Some(interface)
            && header.member()? == Some(member))
    })
}

fn emit_ping_text(conn: &Connection, text: &str) -> zbus::Result<()> {
    conn.emit_signal(None, h::OBJECT_PATH, h::INTERFACE, h::SIGNAL, &text)
}

/// A connection with `rule` on the bus.
fn subscribed(t: &Transport, rule: &str) -> Result<Connection> {
    let conn = connect(t)?;
    fdo::DBusProxy::new(&conn)?.add_match(rule)?;
    Ok(conn)
}

/// The client of a subscription family on a bus.
pub fn client(t: &Transport, op: SubscriptionOp) -> Result<Op> {
    Ok(match op {
        SubscriptionOp::MatchChurn => {
            // The bus's own AddMatch/RemoveMatch through the blocking DBusProxy, each reply awaited.
            let conn = connect(t)?;
            let rule = sub::churn_rule();
            Box::new(move || {
                let dbus = fdo::DBusProxy::new(&conn)?;
                dbus.add_match(&rule)?;
                dbus.remove_match(&rule)?;
                Ok(Digest::new().finish())
            })
        }
        SubscriptionOp::Burst(n) => {
            // The subscriber is not read while the burst is emitted.
            let tx = connect(t)?;
            let rx = subscribed(t, &h::ping_rule())?;
            let texts: Vec<String> = (0..n).map(sub::burst_text).collect();
            Box::new(move || {
                for text in &texts {
                    emit_ping_text(&tx, text)?;
                }
                emit_ping_text(&tx, sub::BURST_END)?;
                let mut received = Vec::with_capacity(n);
                loop {
                    let text: String = next_signal(&rx, PING)?.body()?;
                    if text == sub::BURST_END {
                        break;
                    }
                    received.push(text);
                }
                sub::burst_digest(&received, n)
            })
        }
        SubscriptionOp::Delivered(scope) => {
            // The scope's rule on the bus; the Pings read up to the matching one.
            let tx = connect(t)?;
            let rx = subscribed(t, &sub::delivered_rule(scope))?;
            let texts = sub::delivered_texts();
            Box::new(move || {
                for text in &texts {
                    emit_ping_text(&tx, text)?;
                }
                let mut received = Vec::new();
                loop {
                    let text: String = next_signal(&rx, PING)?.body()?;
                    let end = text == h::SIGNAL_TEXT;
                    received.push(text);
                    if end {
                        break;
                    }
                }
                sub::delivered_digest(&received, scope)
            })
        }
        SubscriptionOp::NameOwnerChurn(scope) => {
            // A name requested and released, then the sentinel, into the scope's
            // NameOwnerChanged rule; read up to the sentinel's release.
            let names = sub::churn_names();
            let tx = connect(t)?;
            let rx = subscribed(t, &sub::name_owner_rule(scope, &names.1))?;
            Box::new(move || {
                let dbus = fdo::DBusProxy::new(&tx)?;
                for name in std::iter::repeat_n(&names.0, sub::NAME_CHURNS).chain([&names.1]) {
                    // DO_NOT_QUEUE alone: never take the name from another owner.
                    let reply = dbus
                        .request_name(name, RequestNameFlags::DoNotQueue.into())
                        .context("RequestName")?;
                    if reply != RequestNameReply::PrimaryOwner {
                        bail!("RequestName {name}: {reply:?}");
                    }
                    dbus.release_name(name).context("ReleaseName")?;
                }
                let mut received = Vec::new();
                loop {
                    let (name, _old, new): (String, String, String) = next_signal(&rx, CHANGED)?.body()?;
                    let end = name == names.1 && new.is_empty();
                    received.push((name, new));
                    if end {
                        break;
                    }
                }
                sub::name_churn_digest(&received, scope, &names)
            })
        }
        SubscriptionOp::PropertyStorm(n) => crate::storm::client(t, n)?,
    })
}
