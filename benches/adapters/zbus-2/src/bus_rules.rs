//! What zbus-3's src/ipc.rs does differently on zbus 2: match rules, name
//! requests, the end of a connection, p2p.

use std::sync::Arc;

use anyhow::{bail, Result};
use harness::ipc as h;
use zbus::blocking::{self, fdo, MessageIterator};
use zbus::fdo::{RequestNameFlags, RequestNameReply};
use zbus::names::WellKnownName;
use zbus::{Message, MessageType};

pub type PingMessage = Arc<Message>;

/// Why zbus 2 cannot serve peer to peer (seen here: `call/void` hung on p2p).
pub const P2P_UNSUPPORTED: Option<&str> = Some(
    "zbus 2.3.2's p2p server handshake (raw::handshake::ServerHandshake::read_command) reads the socket \
     40 bytes at a time until its buffer ends in CR LF, so a client's first message that arrives in the \
     same read as BEGIN is taken into the handshake and never answered: the connection hangs (fixed in \
     zbus 3)",
);

/// The `Ping` signals on `conn`. zbus 2 has no match rules of its own (no
/// `MatchRule`, no `MessageIterator::for_match_rule`): a `MessageIterator` sees
/// every message the connection reads, so this one is made before the rule is
/// added on the bus with `AddMatch` (a p2p peer has no bus to hold it), and
/// `next_ping` skips what is not a `Ping`.
pub fn ping_messages(conn: &blocking::Connection) -> Result<MessageIterator> {
    let messages = MessageIterator::from(conn);
    if conn.is_bus() {
        fdo::DBusProxy::new(conn)?.add_match(&h::ping_rule())?;
    }
    Ok(messages)
}

fn is_signal(msg: &Message, (interface, member): (&str, &str)) -> bool {
    msg.message_type() == MessageType::Signal
        && msg.interface().is_some_and(|i| i == interface)
        && msg.member().is_some_and(|m| m == member)
}

pub fn next_ping(messages: &mut MessageIterator) -> Option<zbus::Result<PingMessage>> {
    next_signal(messages, (h::INTERFACE, h::SIGNAL))
}

/// The messages of `conn` once `rule` is on the bus (`signal/delivered`,
/// `signal/name-owner-churn`); [`next_signal`] keeps the `signal` (interface, member)
/// ones. zbus 2 matches no arguments itself: an `arg0` rule is filtered by the bus only.
pub fn signal_messages(conn: &blocking::Connection, rule: &str, _signal: (&str, &str)) -> Result<MessageIterator> {
    let messages = MessageIterator::from(conn);
    fdo::DBusProxy::new(conn)?.add_match(rule)?;
    Ok(messages)
}

/// The next `signal` (interface, member) among [`signal_messages`].
pub fn next_signal(messages: &mut MessageIterator, signal: (&str, &str)) -> Option<zbus::Result<PingMessage>> {
    messages.find(|msg| msg.as_ref().map_or(true, |m| is_signal(m, signal)))
}

/// One more match rule on the bus.
pub fn add_rule(dbus: &fdo::DBusProxy<'_>, rule: &str) -> Result<()> {
    dbus.add_match(rule)?;
    Ok(())
}

/// RemoveMatch of a rule added with [`add_rule`] (`signal/match-churn`).
pub fn remove_rule(dbus: &fdo::DBusProxy<'_>, rule: &str) -> Result<()> {
    dbus.remove_match(rule)?;
    Ok(())
}

/// DO_NOT_QUEUE alone, through the bus' own RequestName: zbus 2's
/// `request_name` adds REPLACE_EXISTING and has no variant with flags.
pub fn request_name(conn: &blocking::Connection, name: &str) -> Result<()> {
    let reply =
        fdo::DBusProxy::new(conn)?.request_name(WellKnownName::try_from(name)?, RequestNameFlags::DoNotQueue.into())?;
    if reply == RequestNameReply::Exists {
        bail!("{name} is owned by another connection");
    }
    Ok(())
}

/// ReleaseName of a name [`request_name`] got.
pub fn release_name(conn: &blocking::Connection, name: &str) -> Result<()> {
    fdo::DBusProxy::new(conn)?.release_name(WellKnownName::try_from(name)?)?;
    Ok(())
}

/// Blocks until the peer has closed `conn`. zbus 2 has no `Connection::closed()`;
/// a message stream ends when the socket does (its reader closes the channel
/// every stream reads from), so this reads one to its end.
pub fn wait_closed(conn: &blocking::Connection) {
    for _ in MessageIterator::from(conn) {}
}

/// The instrument of `property/changed-storm/<n>` (adapter-shared/zbus/storm_2_3.rs). zbus 2
/// has no match rules of its own: a `MessageStream` of `conn` sees every message it reads,
/// and every stream of a connection shares one queue (64 by default) that blocks the
/// socket reader when full, so the queue is raised above the storm first (the stream is
/// read after each storm); the caching proxy has already asked the bus for the signals.
pub async fn storm_counter(conn: &zbus::Connection, n: usize) -> Result<zbus::MessageStream> {
    let mut conn = conn.clone();
    conn.set_max_queued(n + 1024);
    Ok(zbus::MessageStream::from(&conn))
}
