//! The subscription families (`signal/*` under `harness::ipc::subscription`:
//! name-owner churn, delivered-by-rule, burst, match churn) with dbus-bytestream
//! 0.1: `ipc::client`'s arm for `IpcOp::Subscription` (the property storm is
//! storm.rs). The library has no match-rule or signal API: a rule is the text
//! of a plain `AddMatch` / `RemoveMatch` call to the bus (`call_sync`), so the
//! `arg0` scopes go to the bus as they are and the bus filters; signals are
//! whatever `Connection::read_msg` returns next (messages `call_sync` read past
//! while waiting for its reply are queued by the library and come back first).
//! The connection is read only when asked: during a burst the signals wait in
//! the bus's queue and the socket.

use anyhow::{anyhow, bail, ensure, Result};
use dbus_bytestream::connection::Connection;
use dbus_bytestream::message::{Message, HEADER_FIELD_INTERFACE, HEADER_FIELD_MEMBER, MESSAGE_TYPE_SIGNAL};
use dbus_serialize::types::{BasicValue, Value};
use harness::ipc::{self as h, SubscriptionOp, Transport};
use harness::Digest;

use crate::ipc::{
    add_match, bus_error, call, connect, dbus_call, expect_no_body, header, ping_text, single, string_of,
};
use crate::ipc::{DBUS_NAME, DO_NOT_QUEUE, PRIMARY_OWNER};

type Op = Box<dyn FnMut() -> Result<u64>>;

/// The next signal `interface.member` read from `conn` (everything else is skipped).
pub fn next_signal(conn: &Connection, interface: &str, member: &str) -> Result<Message> {
    loop {
        let msg = conn
            .read_msg()
            .map_err(|e| bus_error(&format!("waiting for {member}"), e))?;
        if msg.message_type == MESSAGE_TYPE_SIGNAL
            && header(&msg, HEADER_FIELD_INTERFACE) == Some(interface)
            && header(&msg, HEADER_FIELD_MEMBER) == Some(member)
        {
            return Ok(msg);
        }
    }
}

/// The text of the next `Ping`.
fn next_ping(conn: &Connection) -> Result<String> {
    let msg = next_signal(conn, h::INTERFACE, h::SIGNAL)?;
    let body = msg.get_body().map_err(|e| anyhow!("Ping body: {e}"))?;
    Ok(string_of(&single(body)?)?.to_owned())
}

fn send_ping(conn: &Connection, text: &str) -> Result<()> {
    conn.send(ping_text(text)).map_err(|e| bus_error("emitting Ping", e))?;
    Ok(())
}

/// RequestName (DO_NOT_QUEUE; it must make `conn` the primary owner), then ReleaseName.
fn own_and_release(conn: &Connection, name: &str) -> Result<()> {
    let request = dbus_call("RequestName").add_arg(&name).add_arg(&DO_NOT_QUEUE);
    match single(call(conn, request, "RequestName")?)? {
        Value::BasicValue(BasicValue::Uint32(PRIMARY_OWNER)) => {}
        other => bail!("RequestName {name}: got {other:?}, not primary ownership"),
    }
    single(call(conn, dbus_call("ReleaseName").add_arg(&name), "ReleaseName")?)?;
    Ok(())
}

/// The client side of `op`.
pub fn client(t: &Transport, op: SubscriptionOp) -> Result<Op> {
    Ok(match op {
        SubscriptionOp::NameOwnerChurn(scope) => {
            let names = h::subscription::churn_names();
            let tx = connect(t)?;
            let rx = connect(t)?;
            add_match(&rx, &h::subscription::name_owner_rule(scope, &names.1))?;
            Box::new(move || {
                for name in std::iter::repeat_n(&names.0, h::subscription::NAME_CHURNS).chain([&names.1]) {
                    own_and_release(&tx, name)?;
                }
                let mut received = Vec::new();
                loop {
                    let sig = next_signal(&rx, DBUS_NAME, "NameOwnerChanged")?;
                    let values = sig
                        .get_body()
                        .map_err(|e| anyhow!("NameOwnerChanged body: {e}"))?
                        .unwrap_or_default();
                    ensure!(values.len() == 3, "NameOwnerChanged: {values:?}");
                    let (name, new) = (string_of(&values[0])?.to_owned(), string_of(&values[2])?.to_owned());
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
            let tx = connect(t)?;
            let rx = connect(t)?;
            add_match(&rx, &h::subscription::delivered_rule(scope))?;
            let texts = h::subscription::delivered_texts();
            Box::new(move || {
                for text in &texts {
                    send_ping(&tx, text)?;
                }
                let mut received = Vec::new();
                loop {
                    let text = next_ping(&rx)?;
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
            let tx = connect(t)?;
            let rx = connect(t)?;
            add_match(&rx, &h::ping_rule())?;
            let texts: Vec<String> = (0..n).map(h::subscription::burst_text).collect();
            Box::new(move || {
                for text in &texts {
                    send_ping(&tx, text)?;
                }
                send_ping(&tx, h::subscription::BURST_END)?;
                let mut received = Vec::with_capacity(n);
                loop {
                    let text = next_ping(&rx)?;
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
            // Both are plain calls; call_sync does not tell an error reply from a return,
            // but an error reply (MatchRuleNotFound) has a body where these have none.
            let conn = connect(t)?;
            let rule = h::subscription::churn_rule();
            Box::new(move || {
                add_match(&conn, &rule)?;
                let body = call(&conn, dbus_call("RemoveMatch").add_arg(&rule.as_str()), "RemoveMatch")?;
                expect_no_body(body, "RemoveMatch")?;
                Ok(Digest::new().finish())
            })
        }
    })
}
