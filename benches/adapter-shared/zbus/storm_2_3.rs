//! `property/changed-storm/<n>` for zbus 2 and 3 (compiled as `ipc::storm` of
//! adapter-zbus-2 and -3 through ipc_2_3.rs; harness::ipc::storm is the canon), the same
//! operation as zbus 4 to 6's storm.rs with the macros of zbus 2 and 3: one connection
//! serves the storm object as a `#[dbus_interface]` with the property `Level` and announces
//! each new value with the generated `level_changed` (PropertiesChanged); a second
//! connection holds a `#[dbus_proxy]` built with `CacheProperties::Yes`, zbus's own
//! property cache (filled by `GetAll` when the proxy is built, kept up to date by a task
//! of zbus's that reads PropertiesChanged). The program reads the value from the cache
//! (`cached_level`) and counts what the proxy announces on its `receive_level_changed`
//! stream (zbus 2 and 3 do not queue those either: "If the listener is slower than the
//! receiver, it will only receive the last update", `Proxy::receive_property_changed`).
//!
//! Beside the proxy, a `MessageStream` of the subscriber's connection counts the
//! PropertiesChanged messages it received (the instrument; each adapter's
//! `bus_rules::storm_counter` makes it: zbus 3 for the storm's match rule with a queue
//! larger than the storm, zbus 2, which has no match rules of its own, as a stream of
//! every message after raising the connection's queue, shared by every stream of it,
//! above the storm). After the `n` updates the emitter's and then the subscriber's
//! connection make one round trip to the bus (`GetId`); the operation waits (at most
//! `storm::SETTLE` plus a millisecond per update) for the cache to announce the last
//! value. Async code under `zbus::block_on`; each connection runs on its own zbus
//! executor thread (the `async-io` feature's internal executor).
//!
//! As in storm.rs, a notification that finds the value the one before already read is not
//! counted again, and notifications already queued are taken without waiting when the
//! stream is made and before each storm.

use std::future::Future;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use futures_util::future::{join, select, Either};
use futures_util::{FutureExt, StreamExt};
use harness::ipc::storm as st;
use harness::ipc::Transport;
use zbus::{
    dbus_interface, fdo, CacheProperties, Connection, ConnectionBuilder, Message, MessageStream, MessageType,
    SignalContext,
};

use crate::bus_rules;

/// The storm's object: `Level`, read from the value the emitter last set.
struct StormObject {
    level: Arc<AtomicI32>,
}

#[dbus_interface(name = "io.killing.spark.Storm")]
impl StormObject {
    #[dbus_interface(property)]
    fn level(&self) -> i32 {
        self.level.load(Ordering::SeqCst)
    }
}

/// The caching proxy (the macro also generates a blocking `StormProxyBlocking`, unused).
#[allow(dead_code)]
mod caching_proxy {
    use zbus::dbus_proxy;

    #[dbus_proxy(
        interface = "io.killing.spark.Storm",
        default_service = "io.killing.spark.Storm",
        default_path = "/io/killing/spark/storm"
    )]
    trait Storm {
        #[dbus_proxy(property)]
        fn level(&self) -> zbus::Result<i32>;
    }
}

use caching_proxy::StormProxy;

/// A future ready `after` its first poll, woken by a thread of std's (ends when dropped).
struct Deadline {
    after: Duration,
    at: Option<Instant>,
    stop: Arc<AtomicBool>,
}

impl Deadline {
    fn after(after: Duration) -> Self {
        Deadline {
            after,
            at: None,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl Future for Deadline {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        let now = Instant::now();
        match self.at {
            Some(at) if now >= at => return Poll::Ready(()),
            Some(_) => {}
            None => {
                let at = now + self.after;
                self.at = Some(at);
                let (waker, stop) = (cx.waker().clone(), self.stop.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) && Instant::now() < at {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    waker.wake();
                });
            }
        }
        Poll::Pending
    }
}

impl Drop for Deadline {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// How long the set-up may take before the cell fails instead of waiting for the runner's cell timeout.
const SETUP: Duration = Duration::from_secs(30);

type Changes = Pin<Box<zbus::PropertyStream<'static, i32>>>;

/// Takes the change notifications `changes` already holds, without waiting.
fn take_queued(changes: &mut Changes) {
    while let Some(Some(_)) = changes.next().now_or_never() {}
}

/// Whether `msg` is a PropertiesChanged of the storm's object.
fn is_storm_change(msg: &Message) -> bool {
    msg.message_type() == MessageType::Signal
        && msg.path().is_some_and(|p| p.as_str() == st::STORM_PATH)
        && msg.interface().is_some_and(|i| i.as_str() == st::PROPERTIES_INTERFACE)
        && msg.member().is_some_and(|m| m.as_str() == st::PROPERTIES_CHANGED)
}

/// What one storm operation holds: both connections, the object's value, the proxy.
struct StormClient {
    level: Arc<AtomicI32>,
    announcer: StormObject,
    emitter: SignalContext<'static>,
    bus_tx: fdo::DBusProxy<'static>,
    bus_rx: fdo::DBusProxy<'static>,
    proxy: StormProxy<'static>,
    changes: Changes,
    counter: MessageStream,
    _connections: (Connection, Connection),
}

type Step = std::sync::Mutex<&'static str>;

fn reached(step: &Step, what: &'static str) {
    *step.lock().unwrap_or_else(|e| e.into_inner()) = what;
}

/// A builder on a new connection to the bus's socket (zbus does not decode an
/// address's `%XX` escapes: crate::ipc::to_socket).
fn to_bus(socket: &Path) -> zbus::Result<ConnectionBuilder<'static>> {
    Ok(ConnectionBuilder::unix_stream(UnixStream::connect(socket)?))
}

async fn setup(socket: &Path, n: usize, step: &Step) -> Result<StormClient> {
    reached(step, "connecting the emitter and serving the storm object");
    let level = Arc::new(AtomicI32::new(st::INITIAL_LEVEL));
    let tx = to_bus(socket)?
        .serve_at(st::STORM_PATH, StormObject { level: level.clone() })?
        .build()
        .await
        .context("connecting the emitter")?;
    let owner = tx.unique_name().context("the emitter has no unique name")?.to_string();
    reached(step, "connecting the subscriber");
    let rx = to_bus(socket)?.build().await.context("connecting the subscriber")?;
    reached(step, "building the caching proxy (its match rule and GetAll)");
    let proxy = StormProxy::builder(&rx)
        .destination(owner)?
        .cache_properties(CacheProperties::Yes)
        .build()
        .await
        .context("building the caching proxy")?;
    anyhow::ensure!(
        proxy.cached_level()? == Some(st::INITIAL_LEVEL),
        "the proxy's cache does not hold the initial value after GetAll"
    );
    reached(step, "making the stream of Level's changes");
    let mut changes: Changes = Box::pin(proxy.receive_level_changed().await);
    take_queued(&mut changes);
    reached(step, "making the counter's stream");
    let counter = bus_rules::storm_counter(&rx, n).await?;
    reached(step, "making the bus proxies");
    let bus_tx = fdo::DBusProxy::new(&tx).await?;
    let bus_rx = fdo::DBusProxy::new(&rx).await?;
    Ok(StormClient {
        level: level.clone(),
        announcer: StormObject { level },
        emitter: SignalContext::new(&tx, st::STORM_PATH)?.into_owned(),
        bus_tx,
        bus_rx,
        proxy,
        changes,
        counter,
        _connections: (tx, rx),
    })
}

impl StormClient {
    async fn run(&mut self, n: usize) -> Result<u64> {
        let last = st::last_level(n);
        take_queued(&mut self.changes);
        let StormClient {
            level,
            announcer,
            emitter,
            bus_tx,
            bus_rx,
            changes,
            ..
        } = self;
        let emit = async {
            for i in 0..n {
                level.store(st::level(i), Ordering::SeqCst);
                announcer.level_changed(&*emitter).await?;
            }
            bus_tx.get_id().await?; // the bus has routed every update
            bus_rx.get_id().await?; // and the subscriber's connection has read them
            anyhow::Ok(())
        };
        let mut updates = Vec::new();
        let announced = async {
            while let Some(change) = changes.next().await {
                let value = change.get().await?;
                // Read with the notification before: one change, told once.
                if updates.last() != Some(&value) {
                    updates.push(value);
                }
                if value == last {
                    break;
                }
            }
            anyhow::Ok(())
        };
        let budget = st::SETTLE + Duration::from_millis(n as u64);
        let finished = match select(pin!(join(emit, announced)), pin!(Deadline::after(budget))).await {
            Either::Left(((emitted, announced), _)) => {
                emitted.context("emitting the storm")?;
                announced.context("reading the proxy's announcements")?;
                true
            }
            Either::Right(_) => false,
        };
        let mut received = 0;
        while let Some(Some(msg)) = self.counter.next().now_or_never() {
            let msg = msg?;
            if is_storm_change(&msg) {
                received += 1;
            }
        }
        let seen = st::StormSeen {
            received,
            updates,
            last: self.proxy.cached_level()?,
            holder: if finished {
                "zbus's property cache (CacheProperties::Yes)"
            } else {
                "zbus's property cache (CacheProperties::Yes; the last value not announced in time)"
            },
        };
        st::storm_digest(&seen, n)
    }
}

/// The client of `property/changed-storm/<n>` on a bus.
pub fn client(t: &Transport, n: usize) -> Result<Box<dyn FnMut() -> Result<u64>>> {
    let Transport::Bus { socket, .. } = t else {
        anyhow::bail!("property/changed-storm needs a bus");
    };
    let step = Step::new("starting");
    let mut storm = zbus::block_on(async {
        match select(pin!(setup(socket, n, &step)), pin!(Deadline::after(SETUP))).await {
            Either::Left((storm, _)) => storm,
            Either::Right(_) => Err(anyhow::anyhow!(
                "the storm's set-up did not finish within {} s; it was {}",
                SETUP.as_secs(),
                step.lock().unwrap_or_else(|e| e.into_inner())
            )),
        }
    })?;
    Ok(Box::new(move || zbus::block_on(storm.run(n))))
}
