//! The IPC side through dbus-tokio 0.7: each connection is a dbus-rs
//! `nonblock::SyncConnection` made by `dbus_tokio::connection::from_channel`
//! from `Channel::open_private` + `register` (SASL and Hello are blocking in
//! dbus-rs, as in dbus-tokio's own `new_session_sync`), whose `IOResource` is a
//! task on a Tokio current-thread runtime; `block_on` on the calling thread
//! runs it. Server: the `Crossroads` of dbus-0.9's `service` module, fed by
//! `start_receive` on the async connection. Client: `nonblock::Proxy::method_call`,
//! the generated `nonblock::stdintf` `Properties::get` (no cache: each read is a
//! `Properties.Get` round trip), and `add_match(..).stream()` for signals.
//!
//! Peer to peer is not possible, for dbus-0.9's reason: dbus-rs (which
//! dbus-tokio drives) can only open client connections.

use std::os::fd::IntoRawFd;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, ensure, Context, Result};
use dbus::channel::{Channel, MatchingReceiver, Sender};
use dbus::message::MatchRule;
use dbus::nonblock::stdintf::org_freedesktop_dbus::{ObjectManager, Properties, RequestNameReply};
use dbus::nonblock::{MsgMatch, Proxy, SyncConnection};
use dbus_tokio::connection::{from_channel, IOResourceError};
use futures_util::{Stream, StreamExt};
use harness::ipc::{self as h, AppOp, IpcOp, Method, SubscriptionOp, Transport};
use harness::{payload, Digest};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

use crate::service::{self, digest_call, digest_items, ping_rule, ByteArray, NO_INTROSPECTION_PARSER, NO_P2P_SERVER};

/// The runtime is made on first use (the codec commands never need it).
#[derive(Default)]
pub struct DbusTokioIpc {
    runtime: Option<Runtime>,
}

impl DbusTokioIpc {
    fn runtime(&mut self) -> Result<&Runtime> {
        if self.runtime.is_none() {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()
                .context("building the Tokio runtime")?;
            self.runtime = Some(rt);
        }
        Ok(self.runtime.as_ref().expect("just made"))
    }
}

/// `EchoBytes` sizes from which a message is larger than what a Unix socket
/// takes in one write (the 128 KiB cells pass, the 1 MiB ones never finish).
const UNWRITABLE_AT_ONCE: usize = 1 << 20;

const NO_LARGE_WRITES: &str = "dbus-tokio 0.7.6 cannot send a message that libdbus does not write in one go: \
     connection::from_channel registers the socket with Tokio (AsyncFd) once, for WRITABLE only if libdbus's write \
     watch is on at that moment, which it is not on a fresh connection; IOResource then waits for write readiness \
     that is never reported, so the rest of a 1 MiB call (and of the server's 1 MiB reply) stays queued in libdbus \
     and the call times out (measured: 30 s timeout on dbus-daemon, dbus-broker and busd)";

/// `objects/get-managed-objects/<n>` sizes whose reply the server cannot write in one go.
const UNWRITABLE_OBJECTS: usize = 1000;

/// Method call timeout (libdbus's default is 25 s).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);

/// A connection and the task that does its I/O.
pub(crate) struct Bus {
    pub(crate) conn: Arc<SyncConnection>,
    io: JoinHandle<IOResourceError>,
}

impl Bus {
    /// Stops the I/O task and waits until it has dropped its handle of the
    /// connection: the last handle's drop closes the socket.
    async fn close(mut self) {
        self.io.abort();
        let _ = (&mut self.io).await;
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        self.io.abort();
    }
}

/// A new bus connection whose I/O task is spawned on the current runtime and
/// polled once: until it has been, dbus-tokio's waker refuses to wake it, and a
/// message libdbus cannot write at once (1 MiB) fails with "Failed to send message".
pub(crate) async fn connect(t: &Transport) -> Result<Bus> {
    let Transport::Bus { address, .. } = t else {
        bail!("{NO_P2P_SERVER}");
    };
    let mut channel = Channel::open_private(address).context("connecting to the bus")?;
    channel.register().context("Hello")?;
    let (resource, conn) = from_channel::<SyncConnection>(channel)?;
    let io = tokio::spawn(resource);
    tokio::task::yield_now().await;
    Ok(Bus { conn, io })
}

pub(crate) type BenchProxy = Proxy<'static, Arc<SyncConnection>>;

fn proxy(bus: &Bus, t: &Transport) -> BenchProxy {
    Proxy::new(t.service_name().to_owned(), h::OBJECT_PATH, TIMEOUT, bus.conn.clone())
}

/// A connection and a proxy on it for the service.
pub(crate) async fn connect_proxy(t: &Transport) -> Result<(Bus, BenchProxy)> {
    let bus = connect(t).await?;
    let proxy = proxy(&bus, t);
    Ok((bus, proxy))
}

async fn call(proxy: &BenchProxy, m: Method) -> Result<u64> {
    macro_rules! invoke {
        ($reply:ty, $args:expr) => {
            proxy
                .method_call::<$reply, _, _, _>(h::INTERFACE, m.member(), $args)
                .await?
        };
    }
    Ok(digest_call!(m, invoke))
}

/// Queues `msg`; the I/O task writes it. `flush` waits until it is on the
/// socket (before a connection is closed).
pub(crate) fn send(bus: &Bus, msg: dbus::Message, flush: bool) -> Result<()> {
    bus.conn.send(msg).map_err(|()| anyhow!("sending failed"))?;
    if flush {
        AsRef::<Channel>::as_ref(&*bus.conn).flush();
    }
    Ok(())
}

/// `add_match` for `Ping` (AddMatch on the bus and a local filter) and the
/// stream of what it receives. The `MsgMatch` must be kept: the connection's
/// filter holds it weakly, and the stream ends when it is dropped.
pub(crate) async fn subscribe_ping(
    bus: &Bus,
) -> Result<(MsgMatch, impl Stream<Item = (dbus::Message, (String,))> + Unpin)> {
    Ok(bus.conn.add_match(ping_rule()?).await?.stream())
}

async fn next_ping(stream: &mut (impl Stream<Item = (dbus::Message, (String,))> + Unpin)) -> Result<u64> {
    let (_, (text,)) = stream.next().await.context("the signal stream ended")?;
    Ok(service::ping_digest(&text))
}

pub(crate) type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for DbusTokioIpc {
    fn unsupported_ipc(&self, op: IpcOp, p2p: bool) -> Option<String> {
        if p2p {
            // Ops that need a bus are answered by the harness (`harness::ipc::needs_bus`).
            return Some(format!("dbus-tokio 0.7.6 drives dbus-rs connections: {NO_P2P_SERVER}"));
        }
        match op {
            IpcOp::EchoBytes(n) if n >= UNWRITABLE_AT_ONCE => Some(NO_LARGE_WRITES.into()),
            // The server's reply of 1000 objects (with crossroads's standard interfaces per
            // child) is such a message: measured in smoke, 2026-11-28.
            IpcOp::ManagedObjects(n) if n >= UNWRITABLE_OBJECTS => Some(format!(
                "{NO_LARGE_WRITES}. The server's GetManagedObjects reply for {n} objects is such a message: measured \
                 (smoke, 2026-11-28) \"Message did not receive a reply (timeout by message bus)\" on dbus-daemon and a \
                 reply timeout on busd (dbus-broker, which drains the server's socket as it writes, got it in 14 ms)"
            )),
            // dbus-tokio 0.7.6 itself is only the connection's I/O task (src/connection.rs):
            // introspection data is dbus-rs's nonblock `Introspectable::introspect`, a String.
            IpcOp::App(AppOp::Startup(_)) => Some(format!(
                "dbus-tokio 0.7.6 drives dbus-rs's nonblock API, which parses no introspection either: {NO_INTROSPECTION_PARSER}"
            )),
            _ => None,
        }
    }

    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        let Transport::Bus { service_name, .. } = transport else {
            bail!("{NO_P2P_SERVER}");
        };
        self.runtime()?.block_on(async {
            let mut bus = connect(transport).await.context("connecting the server to the bus")?;
            let reply = bus
                .conn
                // Neither allow nor take a replacement; DO_NOT_QUEUE: `Exists` when owned.
                .request_name(service_name.as_str(), false, false, true)
                .await
                .with_context(|| format!("requesting {service_name}"))?;
            ensure!(
                reply == RequestNameReply::PrimaryOwner,
                "requesting {service_name}: {reply:?}"
            );
            let mut cr = service::crossroads(service_name);
            crate::props::add_objects(&mut cr);
            bus.conn.start_receive(
                MatchRule::new_method_call(),
                Box::new(move |msg, conn| {
                    // Err only for a message that is not a method call: nothing to answer.
                    let _ = cr.handle_message(msg, conn);
                    true
                }),
            );
            ready();
            let lost = (&mut bus.io).await.context("the connection's I/O task")?;
            bail!("lost the bus connection: {lost}")
        })
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
        // The returned closure owns the runtime that drives its connection.
        let mut this = DbusTokioIpc {
            runtime: self.runtime.take(),
        };
        let (bus, subscription, mut stream) = this.runtime()?.block_on(async {
            let bus = connect(transport).await?;
            let (subscription, stream) = subscribe_ping(&bus).await?;
            for j in 0..extra_rules {
                bus.conn.add_match_no_cb(&h::nonmatching_rule(j)).await?;
            }
            anyhow::Ok((bus, subscription, stream))
        })?;
        Ok(Box::new(move || {
            let _keep = (&bus, &subscription);
            this.runtime()?.block_on(next_ping(&mut stream))
        }))
    }

    fn implements(&self, op: IpcOp) -> bool {
        !op.opt_in()
            || matches!(op, IpcOp::InFlight(_) | IpcOp::IdleConnections(_) | IpcOp::FdPassing(_))
            || matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_))
            || matches!(
                op,
                IpcOp::App(AppOp::InOnlyBytes(_) | AppOp::Connections(_) | AppOp::ProxyCreate(_))
            )
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

    /// `Channel::open_private` + `register` (Hello) made async, its I/O task on this
    /// adapter's runtime; dropping it aborts the task, whose end closes the socket
    /// (the next `block_on` runs the aborts: the next batch's first connect).
    fn idle_connection(&mut self, transport: &Transport) -> Result<Box<dyn std::any::Any>> {
        let rt = self.runtime()?;
        Ok(Box::new(rt.block_on(connect(transport))?))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        let rt = self.runtime()?;
        Ok(match op {
            IpcOp::App(a) => crate::apps::client(rt, &t, a)?,
            // The generated nonblock `stdintf` calls, awaited; served and digested by the shared `props`.
            IpcOp::PropertyGetAll(n) => {
                let bus = rt.block_on(connect(&t))?;
                let proxy = Proxy::new(
                    t.service_name().to_owned(),
                    h::props::props_path(n),
                    TIMEOUT,
                    bus.conn.clone(),
                );
                Box::new(move || {
                    let _keep = &bus;
                    crate::props::get_all_digest(&rt.block_on(proxy.get_all(h::props::PROPS_INTERFACE))?)
                })
            }
            IpcOp::ManagedObjects(n) => {
                let bus = rt.block_on(connect(&t))?;
                let proxy = Proxy::new(
                    t.service_name().to_owned(),
                    h::props::objects_path(n),
                    TIMEOUT,
                    bus.conn.clone(),
                );
                Box::new(move || {
                    let _keep = &bus;
                    crate::props::managed_objects_digest(&rt.block_on(proxy.get_managed_objects())?)
                })
            }
            IpcOp::FdPassing(n) => {
                let (bus, proxy) = rt.block_on(connect_proxy(&t))?;
                // libdbus (which dbus-tokio's I/O task drives) negotiated fd passing in
                // SASL, duplicates the fd into each call and sends it with SCM_RIGHTS.
                // SAFETY: the fd was just created and is handed over to dbus-rs's OwnedFd.
                let memfd = unsafe { dbus::arg::OwnedFd::new(h::fd_passing::payload_memfd(n)?.into_raw_fd()) };
                Box::new(move || {
                    let _keep = &bus;
                    let (digest,): (u64,) =
                        rt.block_on(proxy.method_call(h::fd_passing::FD_INTERFACE, h::fd_passing::READ_FD, (&memfd,)))?;
                    Ok(digest)
                })
            }
            IpcOp::Call(m) => {
                let (bus, proxy) = rt.block_on(connect_proxy(&t))?;
                Box::new(move || {
                    let _keep = &bus;
                    rt.block_on(call(&proxy, m))
                })
            }
            IpcOp::EchoBytes(n) => {
                let (bus, proxy) = rt.block_on(connect_proxy(&t))?;
                let payload = h::echo_payload(n);
                Box::new(move || {
                    let _keep = &bus;
                    let (reply,): (ByteArray,) =
                        rt.block_on(proxy.method_call(h::INTERFACE, h::ECHO_BYTES, (payload.as_slice(),)))?;
                    Ok(service::digest_bytes(&reply))
                })
            }
            IpcOp::PropertyGet | IpcOp::PropertyGetX100 => {
                let reads = if op == IpcOp::PropertyGet { 1 } else { 100 };
                let (bus, proxy) = rt.block_on(connect_proxy(&t))?;
                Box::new(move || {
                    let _keep = &bus;
                    rt.block_on(async {
                        let mut d = Digest::new();
                        for _ in 0..reads {
                            // No property cache: each read is a Properties.Get call.
                            let items: Vec<(String, String)> = proxy.get(h::INTERFACE, h::PROPERTY).await?;
                            digest_items(&mut d, &items);
                        }
                        Ok(d.finish())
                    })
                })
            }
            IpcOp::EmitReceive => {
                let (tx, rx, subscription, mut stream) = rt.block_on(async {
                    let tx = connect(&t).await?;
                    let rx = connect(&t).await?;
                    let (subscription, stream) = subscribe_ping(&rx).await?;
                    anyhow::Ok((tx, rx, subscription, stream))
                })?;
                Box::new(move || {
                    let _keep = (&rx, &subscription);
                    rt.block_on(async {
                        send(&tx, service::ping(), false)?;
                        next_ping(&mut stream).await
                    })
                })
            }
            IpcOp::Fanout(_) | IpcOp::NonmatchingRules(_) => {
                let bus = rt.block_on(connect(&t))?;
                Box::new(move || {
                    rt.block_on(async {
                        // Flushed: the harness then waits for the subscribers, not for this runtime.
                        send(&bus, service::ping(), true)?;
                        // The I/O task runs once more: dbus-tokio's waker fails a send until it has.
                        tokio::task::yield_now().await;
                        anyhow::Ok(())
                    })?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::ConnectHello => Box::new(move || {
                rt.block_on(async {
                    connect(&t).await?.close().await;
                    anyhow::Ok(())
                })?;
                Ok(Digest::new().finish())
            }),
            IpcOp::ConnectMarshalSend => {
                let body = payload::mixed();
                Box::new(move || {
                    rt.block_on(async {
                        let bus = connect(&t).await?;
                        send(&bus, service::mixed_signal(&body)?, true)?;
                        bus.close().await;
                        anyhow::Ok(())
                    })?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::InFlight(n) => {
                let (bus, proxy) = rt.block_on(connect_proxy(&t))?;
                Box::new(move || {
                    let _keep = &bus;
                    rt.block_on(async {
                        // `method_call` hands each call to libdbus at once (send_with_reply);
                        // its future only waits for the reply, awaited after all are sent.
                        let mut pending = Vec::with_capacity(n);
                        for i in 0..n {
                            let arg = (h::in_flight_arg(i),);
                            pending.push(proxy.method_call::<(i32,), _, _, _>(
                                h::INTERFACE,
                                Method::InOutInt.member(),
                                arg,
                            ));
                            // A send libdbus cannot write at once wakes the I/O task, and
                            // fails ("Failed to send message") if the task has not run since
                            // the last such wake: let it run (measured: 1000 calls failed).
                            tokio::task::yield_now().await;
                        }
                        let mut replies = Vec::with_capacity(n);
                        for reply in pending {
                            replies.push(reply.await?.0);
                        }
                        Ok(h::in_flight_digest(replies))
                    })
                })
            }
            IpcOp::PropertyColdStart | IpcOp::RawSocket(_) | IpcOp::IdleConnections(_) => {
                bail!("{op:?} is not a client operation")
            }
            IpcOp::Subscription(SubscriptionOp::Burst(n)) => crate::subs::burst(rt, &t, n)?,
            IpcOp::Subscription(SubscriptionOp::Delivered(scope)) => crate::subs::delivered(rt, &t, scope)?,
            IpcOp::Subscription(SubscriptionOp::NameOwnerChurn(scope)) => crate::subs::name_owner_churn(rt, &t, scope)?,
            IpcOp::Subscription(SubscriptionOp::PropertyStorm(n)) => crate::storm::client(rt, &t, n)?,
            IpcOp::Subscription(SubscriptionOp::MatchChurn) => {
                // The bus's AddMatch and RemoveMatch (nonblock `*_match_no_cb`), each reply awaited.
                let bus = rt.block_on(connect(&t))?;
                let rule = h::subscription::churn_rule();
                Box::new(move || {
                    rt.block_on(async {
                        bus.conn.add_match_no_cb(&rule).await.context("AddMatch")?;
                        bus.conn.remove_match_no_cb(&rule).await.context("RemoveMatch")
                    })?;
                    Ok(Digest::new().finish())
                })
            }
        })
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        self.runtime()?.block_on(async {
            let bus = connect(transport).await?;
            Ok(proxy(&bus, transport).get(h::INTERFACE, h::PROPERTY).await?)
        })
    }
}
