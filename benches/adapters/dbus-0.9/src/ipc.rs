//! The IPC side over libdbus through dbus-rs 0.9's blocking API. Server: the
//! `dbus_crossroads::Crossroads` of `service` (the object server published by the
//! dbus-rs author) served on a `blocking::Connection` with `Crossroads::serve`.
//! Client: `blocking::Proxy::method_call` for calls, the generated
//! `stdintf::org_freedesktop_dbus::Properties::get` for `Items` (no cache: every
//! read is a `Properties.Get` round trip), `Connection::add_match` +
//! `Connection::process` for signals. Connections are `Channel::open_private`
//! followed by `Channel::register` (Hello), i.e. `Connection::new_address`.
//!
//! Peer to peer is not possible: dbus-rs 0.9.12 can only open client
//! connections, and the adapter's own server is what p2p cells call.

use std::os::fd::IntoRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{anyhow, bail, ensure, Context, Result};
use dbus::blocking::stdintf::org_freedesktop_dbus::{ObjectManager, Properties, RequestNameReply};
use dbus::blocking::{Connection, Proxy};
use dbus::channel::{Channel, MatchingReceiver, Sender};
use dbus::Message;
use harness::ipc::{self as h, AppOp, IpcOp, Method, SubscriptionOp, Transport};
use harness::{payload, Digest};

use crate::service::{self, digest_call, digest_items, ping_rule, ByteArray, NO_INTROSPECTION_PARSER, NO_P2P_SERVER};

pub struct DbusIpc;

/// Method call timeout (libdbus's default is 25 s).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

/// How long one `Connection::process` waits before looping.
const PROCESS_WAIT: Duration = Duration::from_secs(60);

/// A new bus connection: `Channel::open_private` (SASL) + `register` (Hello).
pub(crate) fn connect(t: &Transport) -> Result<Connection> {
    match t {
        Transport::Bus { address, .. } => {
            let mut channel = Channel::open_private(address).context("connecting to the bus")?;
            channel.register().context("Hello")?;
            Ok(Connection::from(channel))
        }
        Transport::P2p { .. } => bail!("{NO_P2P_SERVER}"),
    }
}

pub(crate) type BenchProxy = Proxy<'static, Box<Connection>>;

/// A connection and a proxy on it for the service (the proxy owns the connection).
pub(crate) fn connect_proxy(t: &Transport) -> Result<BenchProxy> {
    let conn = connect(t)?;
    Ok(Proxy::new(
        t.service_name().to_owned(),
        h::OBJECT_PATH,
        TIMEOUT,
        Box::new(conn),
    ))
}

fn call(proxy: &BenchProxy, m: Method) -> Result<u64> {
    macro_rules! invoke {
        ($reply:ty, $args:expr) => {
            proxy.method_call::<$reply, _, _, _>(h::INTERFACE, m.member(), $args)?
        };
    }
    Ok(digest_call!(m, invoke))
}

/// A proxy of the props or objects family's `path` (the proxy owns the connection).
fn props_proxy(conn: Connection, destination: &str, path: String) -> BenchProxy {
    Proxy::new(destination.to_owned(), path, TIMEOUT, Box::new(conn))
}

/// Emits `Ping` and flushes it to the socket.
fn emit_ping(conn: &Connection) -> Result<()> {
    conn.send(service::ping())
        .map_err(|()| anyhow!("sending Ping failed"))?;
    conn.channel().flush();
    Ok(())
}

/// `Connection::add_match` for `Ping` (AddMatch on the bus, and a local filter
/// whose callback counts the signals received).
fn subscribe_ping(conn: &Connection, counter: Arc<AtomicUsize>) -> Result<()> {
    conn.add_match(ping_rule()?, move |(text,): (String,), _: &Connection, _: &Message| {
        if text == h::SIGNAL_TEXT {
            counter.fetch_add(1, Ordering::Release);
        }
        true
    })?;
    Ok(())
}

/// `Connection::process` until the counter reaches `target`.
fn process_until(conn: &Connection, counter: &AtomicUsize, target: usize) -> Result<()> {
    while counter.load(Ordering::Acquire) < target {
        conn.process(PROCESS_WAIT)?;
    }
    Ok(())
}

/// `call/in-flight/<n>`: every `InOutInt` queued with `Channel::send` (libdbus
/// writes it without waiting), then replies popped from the channel and matched
/// to their calls by reply serial (the bus's own signals, such as NameAcquired, are skipped).
fn in_flight(conn: &Connection, destination: &str, n: usize) -> Result<u64> {
    let channel = conn.channel();
    let mut index_of = std::collections::HashMap::with_capacity(n);
    for i in 0..n {
        let msg = Message::new_method_call(destination, h::OBJECT_PATH, h::INTERFACE, "InOutInt")
            .map_err(|e| anyhow!("building call {i}: {e}"))?
            .append1(h::in_flight_arg(i));
        let serial = channel
            .send(msg)
            .map_err(|()| anyhow!("sending call {i} of {n}: connection closed"))?;
        index_of.insert(serial, i);
    }
    channel.flush();
    let mut replies = vec![None; n];
    let mut left = n;
    while left > 0 {
        let mut msg = channel
            .blocking_pop_message(TIMEOUT)?
            .with_context(|| format!("{left} of {n} replies missing after {TIMEOUT:?}"))?;
        let Some(&i) = msg.get_reply_serial().and_then(|s| index_of.get(&s)) else {
            continue;
        };
        ensure!(replies[i].is_none(), "two replies to call {i}");
        replies[i] = Some(msg.as_result()?.read1::<i32>()?);
        left -= 1;
    }
    Ok(h::in_flight_digest(replies.into_iter().flatten()))
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for DbusIpc {
    fn unsupported_ipc(&self, op: IpcOp, p2p: bool) -> Option<String> {
        if matches!(op, IpcOp::App(AppOp::Startup(_))) {
            return Some(NO_INTROSPECTION_PARSER.into());
        }
        if !p2p {
            return None;
        }
        // Ops that need a bus are answered by the harness (`harness::ipc::needs_bus`).
        Some(NO_P2P_SERVER.into())
    }

    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        let Transport::Bus { service_name, .. } = transport else {
            bail!("{NO_P2P_SERVER}");
        };
        let conn = connect(transport).context("connecting the server to the bus")?;
        let reply = conn
            // Neither allow nor take a replacement; DO_NOT_QUEUE: `Exists` when owned.
            .request_name(service_name.as_str(), false, false, true)
            .with_context(|| format!("requesting {service_name}"))?;
        ensure!(
            reply == RequestNameReply::PrimaryOwner,
            "requesting {service_name}: {reply:?}"
        );
        let mut cr = service::crossroads(service_name);
        crate::props::add_objects(&mut cr);
        ready();
        // Calls that arrived before this wait in libdbus's queue.
        cr.serve(&conn)?;
        unreachable!("Crossroads::serve returns only on error")
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
        let conn = connect(transport)?;
        let counter = Arc::new(AtomicUsize::new(0));
        subscribe_ping(&conn, counter.clone())?;
        for j in 0..extra_rules {
            conn.add_match_no_cb(&h::nonmatching_rule(j))?;
        }
        let mut received = 0;
        Ok(Box::new(move || {
            received += 1;
            process_until(&conn, &counter, received)?;
            // The callback counts only Pings whose text is the expected one.
            Ok(service::ping_digest(h::SIGNAL_TEXT))
        }))
    }

    fn implements(&self, op: IpcOp) -> bool {
        !op.opt_in()
            || matches!(
                op,
                IpcOp::App(AppOp::InOnlyBytes(_) | AppOp::Connections(_) | AppOp::ProxyCreate(_))
            )
            || matches!(op, IpcOp::InFlight(_) | IpcOp::IdleConnections(_) | IpcOp::FdPassing(_))
            || matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_))
            || matches!(
                op,
                IpcOp::Subscription(
                    SubscriptionOp::MatchChurn
                        | SubscriptionOp::Burst(_)
                        | SubscriptionOp::Delivered(_)
                        | SubscriptionOp::NameOwnerChurn(_)
                        | SubscriptionOp::PropertyStorm(_)
                )
            )
    }

    /// `Channel::open_private` + `register` (Hello); dropping it closes the private connection.
    fn idle_connection(&mut self, transport: &Transport) -> Result<Box<dyn std::any::Any>> {
        Ok(Box::new(connect(transport)?))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        Ok(match op {
            IpcOp::App(a) => crate::apps::client(&t, a)?,
            // The generated blocking `stdintf` calls; served and digested by the shared `props`.
            IpcOp::PropertyGetAll(n) => {
                let proxy = props_proxy(connect(&t)?, t.service_name(), h::props::props_path(n));
                Box::new(move || crate::props::get_all_digest(&proxy.get_all(h::props::PROPS_INTERFACE)?))
            }
            IpcOp::ManagedObjects(n) => {
                let proxy = props_proxy(connect(&t)?, t.service_name(), h::props::objects_path(n));
                Box::new(move || crate::props::managed_objects_digest(&proxy.get_managed_objects()?))
            }
            IpcOp::FdPassing(n) => {
                let proxy = connect_proxy(&t)?;
                // libdbus duplicates the fd into each call and passes it with SCM_RIGHTS.
                // SAFETY: the fd was just created and is handed over to dbus-rs's OwnedFd.
                let memfd = unsafe { dbus::arg::OwnedFd::new(h::fd_passing::payload_memfd(n)?.into_raw_fd()) };
                Box::new(move || {
                    let (digest,): (u64,) =
                        proxy.method_call(h::fd_passing::FD_INTERFACE, h::fd_passing::READ_FD, (&memfd,))?;
                    Ok(digest)
                })
            }
            IpcOp::Call(m) => {
                let proxy = connect_proxy(&t)?;
                Box::new(move || call(&proxy, m))
            }
            IpcOp::EchoBytes(n) => {
                let proxy = connect_proxy(&t)?;
                let payload = h::echo_payload(n);
                Box::new(move || {
                    let (reply,): (ByteArray,) = proxy.method_call(h::INTERFACE, "EchoBytes", (payload.as_slice(),))?;
                    Ok(service::digest_bytes(&reply))
                })
            }
            IpcOp::PropertyGet | IpcOp::PropertyGetX100 => {
                let reads = if op == IpcOp::PropertyGet { 1 } else { 100 };
                let proxy = connect_proxy(&t)?;
                Box::new(move || {
                    let mut d = Digest::new();
                    for _ in 0..reads {
                        // dbus-rs has no property cache: each read is a Properties.Get call.
                        let items: Vec<(String, String)> = proxy.get(h::INTERFACE, h::PROPERTY)?;
                        digest_items(&mut d, &items);
                    }
                    Ok(d.finish())
                })
            }
            IpcOp::EmitReceive => {
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                let received = Arc::new(Mutex::new(None::<String>));
                let slot = received.clone();
                rx.add_match(ping_rule()?, move |(text,): (String,), _: &Connection, _: &Message| {
                    *slot.lock().expect("not poisoned") = Some(text);
                    true
                })?;
                Box::new(move || {
                    emit_ping(&tx)?;
                    loop {
                        if let Some(text) = received.lock().expect("not poisoned").take() {
                            return Ok(service::ping_digest(&text));
                        }
                        rx.process(PROCESS_WAIT)?;
                    }
                })
            }
            IpcOp::Fanout(_) | IpcOp::NonmatchingRules(_) => {
                let conn = connect(&t)?;
                Box::new(move || {
                    emit_ping(&conn)?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::ConnectHello => Box::new(move || {
                // Dropping the Channel closes (dbus_connection_close) and unrefs the connection.
                drop(connect(&t)?);
                Ok(Digest::new().finish())
            }),
            IpcOp::ConnectMarshalSend => {
                let body = payload::mixed();
                Box::new(move || {
                    let conn = connect(&t)?;
                    conn.send(service::mixed_signal(&body)?)
                        .map_err(|()| anyhow!("sending the signal failed"))?;
                    conn.channel().flush(); // on the socket before the connection closes
                    drop(conn);
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::InFlight(n) => {
                let conn = connect(&t)?;
                let destination = t.service_name().to_owned();
                Box::new(move || in_flight(&conn, &destination, n))
            }
            IpcOp::Subscription(SubscriptionOp::NameOwnerChurn(scope)) => {
                // The rule text to the bus (add_match_no_cb: dbus-rs's MatchRule has no argN),
                // a local receiver for NameOwnerChanged (start_receive) for what it delivers.
                let names = h::subscription::churn_names();
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                rx.add_match_no_cb(&h::subscription::name_owner_rule(scope, &names.1))
                    .context("AddMatch")?;
                let received = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
                let slot = received.clone();
                rx.start_receive(
                    dbus::message::MatchRule::new_signal("org.freedesktop.DBus", "NameOwnerChanged"),
                    Box::new(move |msg: Message, _: &Connection| {
                        if let (Some(name), _, Some(new)) = msg.get3::<String, String, String>() {
                            slot.lock().expect("not poisoned").push((name, new));
                        }
                        true
                    }),
                );
                Box::new(move || {
                    for name in std::iter::repeat_n(&names.0, h::subscription::NAME_CHURNS).chain([&names.1]) {
                        tx.request_name(name.as_str(), false, false, true)
                            .context("RequestName")?;
                        tx.release_name(name.as_str()).context("ReleaseName")?;
                    }
                    let got = loop {
                        {
                            let mut got = received.lock().expect("not poisoned");
                            if got.last().is_some_and(|(n, new)| *n == names.1 && new.is_empty()) {
                                break std::mem::take(&mut *got);
                            }
                        }
                        rx.process(PROCESS_WAIT)?;
                    };
                    h::subscription::name_churn_digest(&got, scope, &names)
                })
            }
            IpcOp::Subscription(SubscriptionOp::Delivered(scope)) => {
                // dbus-rs's MatchRule has no argN: the rule text goes to the bus as it is
                // (add_match_no_cb, so the bus filters by arg0), and a local receiver for
                // Ping (start_receive, no AddMatch) hands over whatever the bus delivered.
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                rx.add_match_no_cb(&h::subscription::delivered_rule(scope))
                    .context("AddMatch")?;
                let received = Arc::new(Mutex::new(Vec::<String>::new()));
                let slot = received.clone();
                rx.start_receive(
                    ping_rule()?,
                    Box::new(move |msg: Message, _: &Connection| {
                        if let Some(text) = msg.get1::<String>() {
                            slot.lock().expect("not poisoned").push(text);
                        }
                        true
                    }),
                );
                let texts = h::subscription::delivered_texts();
                Box::new(move || {
                    for text in &texts {
                        tx.send(service::ping_with(text))
                            .map_err(|()| anyhow!("sending Ping failed"))?;
                    }
                    tx.channel().flush();
                    let texts = loop {
                        {
                            let mut got = received.lock().expect("not poisoned");
                            if got.last().map(String::as_str) == Some(h::SIGNAL_TEXT) {
                                break std::mem::take(&mut *got);
                            }
                        }
                        rx.process(PROCESS_WAIT)?;
                    };
                    h::subscription::delivered_digest(&texts, scope)
                })
            }
            IpcOp::Subscription(SubscriptionOp::Burst(n)) => {
                // libdbus reads the consumer's socket only inside `process`: during the burst
                // the signals wait in the bus's queue and the socket.
                let tx = connect(&t)?;
                let rx = connect(&t)?;
                let received = Arc::new(Mutex::new(Vec::<String>::new()));
                let slot = received.clone();
                rx.add_match(ping_rule()?, move |(text,): (String,), _: &Connection, _: &Message| {
                    slot.lock().expect("not poisoned").push(text);
                    true
                })?;
                let texts: Vec<String> = (0..n).map(h::subscription::burst_text).collect();
                Box::new(move || {
                    for text in &texts {
                        tx.send(service::ping_with(text))
                            .map_err(|()| anyhow!("sending Ping failed"))?;
                    }
                    tx.send(service::ping_with(h::subscription::BURST_END))
                        .map_err(|()| anyhow!("sending Ping failed"))?;
                    tx.channel().flush();
                    let texts = loop {
                        {
                            let mut got = received.lock().expect("not poisoned");
                            if got.last().map(String::as_str) == Some(h::subscription::BURST_END) {
                                got.pop();
                                break std::mem::take(&mut *got);
                            }
                        }
                        rx.process(PROCESS_WAIT)?;
                    };
                    h::subscription::burst_digest(&texts, n)
                })
            }
            IpcOp::Subscription(SubscriptionOp::PropertyStorm(n)) => {
                crate::storm::client(connect(&t)?, connect(&t)?, n)?
            }
            IpcOp::Subscription(SubscriptionOp::MatchChurn) => {
                // The bus's AddMatch and RemoveMatch, each a blocking call that waits
                // for its reply (no callback registered: only the rule on the bus).
                let conn = connect(&t)?;
                let rule = h::subscription::churn_rule();
                Box::new(move || {
                    conn.add_match_no_cb(&rule).context("AddMatch")?;
                    conn.remove_match_no_cb(&rule).context("RemoveMatch")?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::PropertyColdStart | IpcOp::RawSocket(_) | IpcOp::IdleConnections(_) => {
                bail!("{op:?} is not a client operation")
            }
        })
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        Ok(connect_proxy(transport)?.get(h::INTERFACE, h::PROPERTY)?)
    }
}
