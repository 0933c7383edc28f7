//! The IPC side with sd-bus through the `systemd` crate 0.11 (`systemd::bus`).
//!
//! Clients build calls with `BusRef::new_method_call` (peer to peer, where a
//! call has no destination, with `raw::new_method_call_to_peer`), append the
//! arguments with the crate's typed `append` and block in `MessageRef::call`
//! (`sd_bus_call`: it writes the call, then reads and dispatches until the reply
//! comes). Replies are read with `MessageRef::iter` into typed values borrowing
//! the reply (`&str`, `&ObjectPath`, tuples, `Vec`s, `Variant`). The property is
//! read with a plain `org.freedesktop.DBus.Properties.Get` call: sd-bus has no
//! property cache and the crate does not wrap `sd_bus_get_property` (which
//! builds the same call), so every read is a round trip.
//!
//! Signals are built with `BusRef::new_signal` and sent with `send_no_reply`
//! and `flush`. Receivers install match rules with `sd_bus_add_match`
//! (`raw::add_match`, not wrapped by the crate) whose callback leaves the
//! message unhandled, so `BusRef::process` returns it; `BusRef::wait`
//! (`sd_bus_wait`, a poll on the connection) blocks in between.
//!
//! Everything runs on the calling thread: sd-bus is single-threaded and every
//! connection is driven by the thread that uses it.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail, ensure, Context, Result};
use harness::ipc::{self as h, AppOp, IpcOp, Method, SubscriptionOp, Transport};
use harness::payload::{self, Body};
use harness::Digest;
use systemd::bus::types::{UnixFd, Variant};
use systemd::bus::{self, Bus, BusRef, ContainerType, Message, MessageRef, MessageType, ObjectPath};

use crate::{raw, server};

/// Why `proxy/startup/<n>` (introspect, parse, build a proxy per object) cannot run here.
const NO_INTROSPECTION_PARSER: &str = "sd-bus (systemd 0.11.1) has no public introspection parser (busctl parses XML with code of its own, not in the library) and no proxy object: Introspect gives the XML as a string, nothing to build a proxy from";

pub struct SdBusIpc;

const PROPERTIES: &CStr = c"org.freedesktop.DBus.Properties";
const GET: &CStr = c"Get";
const OBJECT_MANAGER: &CStr = c"org.freedesktop.DBus.ObjectManager";

/// A D-Bus error reply (the crate's `bus::Error` holds raw pointers, so it is copied into text).
pub(crate) fn dbus_error(e: bus::Error) -> anyhow::Error {
    anyhow!("error reply {e}")
}

/// `signal/match-churn`: the bus's own `AddMatch` or `RemoveMatch` with `rule`,
/// its reply awaited (`sd_bus_call`). Not `sd_bus_add_match` and a slot unref:
/// sd-bus sends that RemoveMatch without waiting for its reply.
fn bus_rule_call(bus: &mut Bus, member: &CStr, rule: &str) -> Result<()> {
    let mut msg = bus.new_method_call(
        c"org.freedesktop.DBus",
        c"/org/freedesktop/DBus",
        c"org.freedesktop.DBus",
        member,
    )?;
    msg.append(rule)?;
    msg.call(0).map_err(dbus_error)?;
    Ok(())
}

/// A client connection: SASL and Hello on a bus, SASL only peer to peer.
pub(crate) fn connect(t: &Transport) -> Result<Bus> {
    raw::connect(&CString::new(t.address())?, !t.is_p2p())
}

/// A client of the benchmark service.
pub(crate) struct Client {
    bus: Bus,
    /// The service's name on a bus; none peer to peer.
    destination: Option<CString>,
    path: CString,
    interface: CString,
}

impl Client {
    pub(crate) fn new(t: &Transport) -> Result<Self> {
        Ok(Client {
            bus: connect(t)?,
            destination: match t {
                Transport::Bus { service_name, .. } => Some(CString::new(service_name.as_str())?),
                Transport::P2p { .. } => None,
            },
            path: CString::new(h::OBJECT_PATH)?,
            interface: CString::new(h::INTERFACE)?,
        })
    }

    /// Calls `interface.member` (the benchmark interface when `None`) with
    /// the arguments `args` appends; an error reply is an error.
    pub(crate) fn call(
        &mut self,
        interface: Option<&CStr>,
        member: &CStr,
        args: impl FnOnce(&mut MessageRef, &CStr) -> Result<()>,
    ) -> Result<Message> {
        let Client {
            bus,
            destination,
            path,
            interface: bench,
        } = self;
        let interface = interface.unwrap_or(bench);
        let mut msg = match destination {
            Some(d) => bus.new_method_call(d.as_c_str(), path.as_c_str(), interface, member)?,
            None => raw::new_method_call_to_peer(bus, path, interface, member)?,
        };
        args(&mut msg, bench)?;
        // 0: sd-bus's default method call timeout (25 s).
        msg.call(0).map_err(dbus_error)
    }

    /// `call/in-flight/<n>`: n `InOutInt` calls with `sd_bus_call_async`
    /// (`MessageRef::call_async`: each is written, or queued, at once; its
    /// callback gets the reply), then `sd_bus_process`/`sd_bus_wait` until
    /// every callback has run.
    fn in_flight(&mut self, n: usize, member: &CStr) -> Result<u64> {
        let replies: InFlightReplies = Arc::new(Mutex::new((0..n).map(|_| None).collect()));
        let waiting = Arc::new(AtomicUsize::new(n));
        for i in 0..n {
            let mut msg = match &self.destination {
                Some(d) => {
                    self.bus
                        .new_method_call(d.as_c_str(), self.path.as_c_str(), self.interface.as_c_str(), member)?
                }
                None => raw::new_method_call_to_peer(&self.bus, &self.path, &self.interface, member)?,
            };
            msg.append(h::in_flight_arg(i))?;
            let (replies, waiting) = (replies.clone(), waiting.clone());
            let on_reply = move |reply: &mut MessageRef| {
                let value = in_flight_reply(reply);
                replies.lock().expect("no callback panicked")[i] = Some(value);
                waiting.fetch_sub(1, Ordering::Relaxed);
                Ok(())
            };
            msg.call_async(on_reply, 0)?;
        }
        while waiting.load(Ordering::Relaxed) > 0 {
            if self.bus.process()?.is_none() {
                self.bus.wait(None)?;
            }
        }
        let replies = std::mem::take(&mut *replies.lock().expect("no callback panicked"));
        let values = replies
            .into_iter()
            .enumerate()
            .map(|(i, r)| r.with_context(|| format!("no reply to in-flight call {i}"))?)
            .collect::<Result<Vec<i32>>>()?;
        Ok(h::in_flight_digest(values))
    }

    /// One benchmark method call; the digest of what it returned.
    fn method(&mut self, m: Method, member: &CStr) -> Result<u64> {
        let mut reply = self.call(None, member, |msg, _| {
            match m {
                Method::InInt | Method::InOutInt => msg.append(h::IN_INT)?,
                Method::InString => msg.append(h::IN_STRING)?,
                Method::InOutString => msg.append(h::OUT_STRING)?,
                _ => {}
            }
            Ok(())
        })?;
        let mut d = Digest::new();
        let mut it = reply.iter()?;
        match m {
            Method::Void | Method::InInt | Method::InString => {}
            Method::OutInt | Method::InOutInt => d.i32(it.next()?.context("no int in the reply")?),
            Method::OutString | Method::InOutString => d.str(it.next::<&str>()?.context("no string in the reply")?),
            Method::ObjectRef => {
                let (name, path): (&str, &ObjectPath) = it.next()?.context("no (so) in the reply")?;
                d.str(name);
                d.str(path.to_str()?);
            }
            Method::RelationSet => {
                let set: Vec<(&str, &ObjectPath)> = it.next()?.context("no a(so) in the reply")?;
                for (name, path) in &set {
                    d.str(name);
                    d.str(path.to_str()?);
                }
                d.len(set.len());
            }
        }
        ensure!(it.at_end()?, "the reply has more arguments than expected");
        Ok(d.finish())
    }

    /// `call/fd-passing`: `ReadFd` with `fd` (sd-bus duplicates it into the
    /// message and passes it with SCM_RIGHTS); the digest the server answers.
    fn read_fd(&mut self, fd: RawFd, interface: &CStr) -> Result<u64> {
        let mut reply = self.call(Some(interface), c"ReadFd", |msg, _| Ok(msg.append(UnixFd(fd))?))?;
        let mut it = reply.iter()?;
        let digest: u64 = it.next()?.context("no t in the ReadFd reply")?;
        ensure!(it.at_end()?, "the reply has more arguments than expected");
        Ok(digest)
    }

    fn echo(&mut self, payload: &[u8]) -> Result<u64> {
        let mut reply = self.call(None, c"EchoBytes", |msg, _| raw::append_bytes(msg, payload))?;
        let mut d = Digest::new();
        d.bytes(raw::read_bytes(&mut reply)?);
        Ok(d.finish())
    }

    /// `Properties.Get(INTERFACE, "Items")`: the reply holds a variant of `a(ss)`.
    fn get_items(&mut self) -> Result<Message> {
        self.call(Some(PROPERTIES), GET, |msg, bench| {
            msg.append(bench)?;
            msg.append(h::PROPERTY)?;
            Ok(())
        })
    }

    fn read_items(&mut self, d: &mut Digest) -> Result<()> {
        let mut reply = self.get_items()?;
        let Variant(items): Variant<Vec<(&str, &str)>> = reply.iter()?.next()?.context("no variant in the reply")?;
        for (a, b) in &items {
            d.str(a);
            d.str(b);
        }
        d.len(items.len());
        Ok(())
    }

    fn items(&mut self) -> Result<Vec<(String, String)>> {
        let mut reply = self.get_items()?;
        let Variant(items) = reply.iter()?.next()?.context("no variant in the reply")?;
        Ok(items)
    }
}

/// The replies of a `call/in-flight` batch, by call, as the callbacks store them.
type InFlightReplies = Arc<Mutex<Vec<Option<Result<i32>>>>>;

/// The `i` of an `InOutInt` reply (an error reply is an error).
pub(crate) fn in_flight_reply(reply: &mut MessageRef) -> Result<i32> {
    if let Some(e) = reply.error() {
        bail!("error reply {e}");
    }
    reply.iter()?.next::<i32>()?.context("no int in the reply")
}

/// A held `connect/idle-connections` connection: closed when dropped.
struct IdleConnection(Bus);

impl Drop for IdleConnection {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Sends `Ping` and waits until it is written (sd-bus writes at once when
/// nothing is queued; `flush` writes what it could not).
fn emit_ping(bus: &mut BusRef) -> Result<()> {
    emit_ping_text(bus, h::SIGNAL_TEXT)?;
    bus.flush()?;
    Ok(())
}

/// Queues (or writes) one `Ping` with `text`; `flush` writes what is queued.
fn emit_ping_text(bus: &mut BusRef, text: &str) -> Result<()> {
    let mut sig = bus.new_signal(h::OBJECT_PATH, h::INTERFACE, h::SIGNAL)?;
    sig.append(text)?;
    sig.send_no_reply()?;
    Ok(())
}

/// A connection with the match rule for `Ping` and `extra_rules` rules that never match.
fn ping_receiver(t: &Transport, extra_rules: usize) -> Result<Bus> {
    let bus = connect(t)?;
    raw::add_match(&bus, &CString::new(h::ping_rule())?).context("AddMatch for Ping")?;
    for j in 0..extra_rules {
        raw::add_match(&bus, &CString::new(h::nonmatching_rule(j))?).with_context(|| format!("AddMatch {j}"))?;
    }
    Ok(bus)
}

/// The digest of the next `Ping`: its text. Other messages (NameAcquired) are dropped.
fn receive_ping(bus: &mut BusRef) -> Result<u64> {
    let mut d = Digest::new();
    d.str(&receive_ping_text(bus)?);
    Ok(d.finish())
}

/// (name, new owner) of the next NameOwnerChanged.
fn receive_name_owner_changed(bus: &mut BusRef) -> Result<(String, String)> {
    loop {
        match bus.process()? {
            Some(Some(mut msg)) => {
                if msg.type_() == MessageType::Signal
                    && msg.member().map(CStr::to_bytes) == Some(b"NameOwnerChanged".as_slice())
                {
                    let mut it = msg.iter()?;
                    let name = it
                        .next::<&str>()?
                        .context("NameOwnerChanged without a name")?
                        .to_owned();
                    let _old = it.next::<&str>()?;
                    let new = it
                        .next::<&str>()?
                        .context("NameOwnerChanged without a new owner")?
                        .to_owned();
                    return Ok((name, new));
                }
            }
            Some(None) => {}
            None => {
                bus.wait(None)?;
            }
        }
    }
}

/// The text of the next `Ping`.
fn receive_ping_text(bus: &mut BusRef) -> Result<String> {
    loop {
        match bus.process()? {
            Some(Some(mut msg)) => {
                let is_ping = msg.type_() == MessageType::Signal
                    && msg.interface().map(CStr::to_bytes) == Some(h::INTERFACE.as_bytes())
                    && msg.member().map(CStr::to_bytes) == Some(h::SIGNAL.as_bytes());
                if is_ping {
                    return Ok(msg.iter()?.next::<&str>()?.context("Ping without its text")?.to_owned());
                }
            }
            Some(None) => {}
            None => {
                bus.wait(None)?;
            }
        }
    }
}

/// The `marshal/mixed` signal built with the crate's typed `append` and
/// container API (`at` in one copy, `raw::append_u64s`), for `connect/marshal-send`.
fn mixed_signal(bus: &mut BusRef, body: &Body) -> Result<Message> {
    let Body::Units(units) = body else {
        bail!("connect/marshal-send sends the marshal/mixed body");
    };
    let mut sig = bus.new_signal(payload::PATH, payload::INTERFACE, payload::MEMBER)?;
    for u in units {
        sig.append(&u.s)?;
        sig.append(u.t)?;
        sig.append((u.st.0, &u.st.1))?;
        sig.open_container(ContainerType::Array, c"{si}")?;
        for (k, v) in &u.dict {
            sig.open_container(ContainerType::DictEntry, c"si")?;
            sig.append(k)?;
            sig.append(*v)?;
            sig.close_container()?;
        }
        sig.close_container()?;
        raw::append_u64s(&mut sig, &u.at)?;
        sig.append(u.as_.as_slice())?;
    }
    Ok(sig)
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for SdBusIpc {
    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        server::serve(transport, ready)
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
        let mut bus = ping_receiver(transport, extra_rules)?;
        Ok(Box::new(move || receive_ping(&mut bus)))
    }

    fn unsupported_ipc(&self, op: IpcOp, p2p: bool) -> Option<String> {
        if matches!(op, IpcOp::App(AppOp::Startup(_))) {
            return Some(NO_INTROSPECTION_PARSER.into());
        }
        (p2p && matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_)))
            .then(|| crate::props::NOT_PEER_TO_PEER.to_owned())
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

    /// sd-bus connects lazily: `unique_name` waits until SASL is done and Hello answered.
    fn idle_connection(&mut self, transport: &Transport) -> Result<Box<dyn std::any::Any>> {
        let bus = connect(transport)?;
        bus.unique_name()?;
        Ok(Box::new(IdleConnection(bus)))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        Ok(match op {
            IpcOp::App(a) => crate::apps::client(&t, a)?,
            IpcOp::PropertyGetAll(n) => {
                let mut c = Client::new(&t)?;
                c.path = CString::new(h::props::props_path(n))?;
                Box::new(move || {
                    let mut reply = c.call(Some(PROPERTIES), c"GetAll", |msg, _| {
                        Ok(msg.append(h::props::PROPS_INTERFACE)?)
                    })?;
                    crate::props::get_all_digest(&mut reply)
                })
            }
            IpcOp::ManagedObjects(n) => {
                let mut c = Client::new(&t)?;
                c.path = CString::new(h::props::objects_path(n))?;
                Box::new(move || {
                    let mut reply = c.call(Some(OBJECT_MANAGER), c"GetManagedObjects", |_, _| Ok(()))?;
                    crate::props::managed_objects_digest(&mut reply)
                })
            }
            IpcOp::FdPassing(n) => {
                let mut client = Client::new(&t)?;
                let memfd = h::fd_passing::payload_memfd(n)?;
                let interface = CString::new(h::fd_passing::FD_INTERFACE)?;
                Box::new(move || client.read_fd(memfd.as_raw_fd(), &interface))
            }
            IpcOp::Call(m) => {
                let mut client = Client::new(&t)?;
                let member = CString::new(m.member())?;
                Box::new(move || client.method(m, &member))
            }
            IpcOp::EchoBytes(n) => {
                let mut client = Client::new(&t)?;
                let payload = h::echo_payload(n);
                Box::new(move || client.echo(&payload))
            }
            IpcOp::PropertyGet | IpcOp::PropertyGetX100 => {
                let reads = if op == IpcOp::PropertyGet { 1 } else { 100 };
                let mut client = Client::new(&t)?;
                Box::new(move || {
                    let mut d = Digest::new();
                    for _ in 0..reads {
                        client.read_items(&mut d)?;
                    }
                    Ok(d.finish())
                })
            }
            IpcOp::EmitReceive => {
                let mut tx = connect(&t)?;
                let mut rx = ping_receiver(&t, 0)?;
                Box::new(move || {
                    emit_ping(&mut tx)?;
                    receive_ping(&mut rx)
                })
            }
            IpcOp::Fanout(_) | IpcOp::NonmatchingRules(_) => {
                let mut bus = connect(&t)?;
                Box::new(move || {
                    emit_ping(&mut bus)?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::ConnectHello => Box::new(move || {
                let mut bus = connect(&t)?;
                // Waits until SASL is done and Hello is answered (sd-bus's bus_ensure_running).
                bus.unique_name()?;
                // Closes the socket whatever else still holds a reference to the bus object.
                bus.close();
                Ok(Digest::new().finish())
            }),
            IpcOp::ConnectMarshalSend => {
                let body = payload::mixed();
                Box::new(move || {
                    let mut bus = connect(&t)?;
                    let mut sig = mixed_signal(&mut bus, &body)?;
                    sig.send_no_reply()?;
                    drop(sig);
                    // Waits until connected and every byte is written.
                    bus.flush()?;
                    bus.close();
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::InFlight(n) => {
                let mut client = Client::new(&t)?;
                let member = CString::new(Method::InOutInt.member())?;
                Box::new(move || client.in_flight(n, &member))
            }
            IpcOp::Subscription(SubscriptionOp::NameOwnerChurn(scope)) => {
                let names = h::subscription::churn_names();
                let mut tx = connect(&t)?;
                let mut rx = connect(&t)?;
                let rule = CString::new(h::subscription::name_owner_rule(scope, &names.1))?;
                raw::add_match(&rx, &rule).context("AddMatch")?;
                let cnames = (CString::new(names.0.as_str())?, CString::new(names.1.as_str())?);
                Box::new(move || {
                    for name in std::iter::repeat_n(&cnames.0, h::subscription::NAME_CHURNS).chain([&cnames.1]) {
                        tx.request_name(name.as_c_str(), 0)?;
                        tx.release_name(name.as_c_str())?;
                    }
                    let mut received = Vec::new();
                    loop {
                        let (name, new) = receive_name_owner_changed(&mut rx)?;
                        let end = name == names.1 && new.is_empty();
                        received.push((name, new));
                        if end {
                            break;
                        }
                    }
                    h::subscription::name_churn_digest(&received, scope, &names)
                })
            }
            IpcOp::Subscription(SubscriptionOp::Delivered(scope)) => {
                // sd_bus_add_match with the rule: AddMatch on the bus, and sd-bus's own match
                // tree (argN included) for what arrives.
                let mut tx = connect(&t)?;
                let mut rx = connect(&t)?;
                raw::add_match(&rx, &CString::new(h::subscription::delivered_rule(scope))?).context("AddMatch")?;
                let texts = h::subscription::delivered_texts();
                Box::new(move || {
                    for text in &texts {
                        emit_ping_text(&mut tx, text)?;
                    }
                    tx.flush()?;
                    let mut received = Vec::new();
                    loop {
                        let text = receive_ping_text(&mut rx)?;
                        let end = text == h::SIGNAL_TEXT;
                        received.push(text);
                        if end {
                            break;
                        }
                    }
                    h::subscription::delivered_digest(&received, scope)
                })
            }
            IpcOp::Subscription(SubscriptionOp::Burst(n)) => {
                // sd-bus reads the consumer's socket only inside `process`: during the burst
                // the signals wait in the bus's queue and the socket.
                let mut tx = connect(&t)?;
                let mut rx = ping_receiver(&t, 0)?;
                let texts: Vec<String> = (0..n).map(h::subscription::burst_text).collect();
                Box::new(move || {
                    for text in &texts {
                        emit_ping_text(&mut tx, text)?;
                    }
                    emit_ping_text(&mut tx, h::subscription::BURST_END)?;
                    tx.flush()?;
                    let mut received = Vec::with_capacity(n);
                    loop {
                        let text = receive_ping_text(&mut rx)?;
                        if text == h::subscription::BURST_END {
                            break;
                        }
                        received.push(text);
                    }
                    h::subscription::burst_digest(&received, n)
                })
            }
            IpcOp::Subscription(SubscriptionOp::PropertyStorm(n)) => {
                crate::storm::client(connect(&t)?, connect(&t)?, n)?
            }
            IpcOp::Subscription(SubscriptionOp::MatchChurn) => {
                let mut bus = connect(&t)?;
                let rule = h::subscription::churn_rule();
                Box::new(move || {
                    bus_rule_call(&mut bus, c"AddMatch", &rule)?;
                    bus_rule_call(&mut bus, c"RemoveMatch", &rule)?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::PropertyColdStart | IpcOp::RawSocket(_) | IpcOp::IdleConnections(_) => {
                bail!("{op:?} is not a client operation")
            }
        })
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        Client::new(transport)?.items()
    }
}
