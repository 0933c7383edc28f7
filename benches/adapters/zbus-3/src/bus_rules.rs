//! What src/ipc.rs does differently on zbus 3 and 2: match rules, name requests,
//! the end of a connection, p2p (zbus-2 has its own of this file).

use std::sync::Arc;

use anyhow::Result;
use harness::ipc as h;
use zbus::blocking::{self, fdo, MessageIterator};
use zbus::{MatchRule, Message, MessageType};

pub type PingMessage = Arc<Message>;

/// zbus 3 serves peer to peer.
pub const P2P_UNSUPPORTED: Option<&str> = None;

/// The `Ping` signals on `conn`: AddMatch on a bus, and zbus also filters
/// locally by the same rule.
pub fn ping_messages(conn: &blocking::Connection) -> Result<MessageIterator> {
    let rule = MatchRule::try_from(h::ping_rule().as_str())?.into_owned();
    Ok(MessageIterator::for_match_rule(rule, conn, None)?)
}

pub fn next_ping(messages: &mut MessageIterator) -> Option<zbus::Result<PingMessage>> {
    messages.next()
}

/// The signals of `rule` on `conn` (`signal/delivered`, `signal/name-owner-churn`): AddMatch
/// on the bus, and zbus filters locally by the same rule, its `arg0` included.
pub fn signal_messages(conn: &blocking::Connection, rule: &str, _signal: (&str, &str)) -> Result<MessageIterator> {
    Ok(MessageIterator::for_match_rule(
        MatchRule::try_from(rule)?.into_owned(),
        conn,
        None,
    )?)
}

/// The next message of [`signal_messages`] (the rule already filtered it).
pub fn next_signal(messages: &mut MessageIterator, _signal: (&str, &str)) -> Option<zbus::Result<PingMessage>> {
    messages.next()
}

/// One more match rule on the bus.
pub fn add_rule(dbus: &fdo::DBusProxy<'_>, rule: &str) -> Result<()> {
    dbus.add_match_rule(MatchRule::try_from(rule)?)?;
    Ok(())
}

/// RemoveMatch of a rule added with [`add_rule`] (`signal/match-churn`).
pub fn remove_rule(dbus: &fdo::DBusProxy<'_>, rule: &str) -> Result<()> {
    dbus.remove_match_rule(MatchRule::try_from(rule)?)?;
    Ok(())
}

/// DO_NOT_QUEUE alone: fails (zbus::Error::NameTaken) when the name is owned.
pub fn request_name(conn: &blocking::Connection, name: &str) -> zbus::Result<()> {
    conn.request_name_with_flags(name, zbus::fdo::RequestNameFlags::DoNotQueue.into())?;
    Ok(())
}

/// ReleaseName of a name [`request_name`] got.
pub fn release_name(conn: &blocking::Connection, name: &str) -> Result<()> {
    conn.release_name(name)?;
    Ok(())
}

/// Blocks until the peer has closed `conn`. zbus 3 has no `Connection::closed()`;
/// a message stream ends when the socket does (its reader sends the error to
/// every stream, matching or not, then drops them), so this waits on one whose
/// rule (`org.freedesktop.DBus.Local.Disconnected`, which zbus never delivers)
/// costs only a rule check per incoming message. Subscribing to a connection
/// that is already gone fails, which also means closed.
pub fn wait_closed(conn: &blocking::Connection) {
    let rule = MatchRule::builder()
        .msg_type(MessageType::Signal)
        .interface("org.freedesktop.DBus.Local")
        .and_then(|b| b.member("Disconnected"))
        .map(|b| b.build());
    if let Ok(Ok(messages)) = rule.map(|rule| MessageIterator::for_match_rule(rule, conn, None)) {
        for _ in messages {}
    }
}

/// The instrument of `property/changed-storm/<n>` (adapter-shared/zbus/storm_2_3.rs):
/// the storm's PropertiesChanged on `conn`, by its match rule, with a queue larger than
/// the storm (it is read after each storm, so it must not overflow).
pub async fn storm_counter(conn: &zbus::Connection, n: usize) -> Result<zbus::MessageStream> {
    let rule = MatchRule::try_from(harness::ipc::storm::changed_rule().as_str())?.into_owned();
    Ok(zbus::MessageStream::for_match_rule(rule, conn, Some(n + 64)).await?)
}
