//! `property/changed-storm/<n>` for zbus 4, 5 and 6 (compiled by adapter-zbus-4, -5, -6
//! and -6-tokio through `#[path]`; harness::ipc::storm is the canon). One connection
//! serves the storm object as an `#[interface]` with the property `Level` and announces
//! each new value with the generated `level_changed` (PropertiesChanged); a second
//! connection holds a `#[proxy]` built with `CacheProperties::Yes`: zbus's own property
//! cache, filled by `GetAll` when the proxy is built and kept up to date by a task of
//! zbus's that reads PropertiesChanged. The program reads the value the way an
//! application does, from the cache (`cached_level`), and counts what the proxy
//! announces on its `receive_level_changed` stream (zbus does not queue those: a slow
//! listener sees only the newest value, so they may be coalesced).
//!
//! Beside the proxy, a `MessageStream` of the subscriber's connection with a queue
//! larger than the storm counts the PropertiesChanged messages the connection received
//! (the instrument, not the library's subscriber: it cannot overflow). After the `n`
//! updates the emitter's and then the subscriber's connection make one round trip to
//! the bus (`GetId`): every update the bus routed is then read off the subscriber's
//! socket. The operation waits (at most `storm::SETTLE` plus a millisecond per update)
//! for the cache to announce the last value. The code is async and runs under the
//! including crate's `crate::compat::block_on` (zbus 4 and 5: `zbus::block_on`, their
//! connections running on zbus's executor threads; zbus 6: `crate::runtime`).
//!
//! A notification of the stream says the cache changed since the stream last yielded; the
//! value is read from the cache when the program asks (`get`), so a notification may find
//! the value the one before already read (see [`StormClient::run`]): such a repeat is not
//! counted as an announcement (the check wants the announced values strictly rising).
//!
//! Whether a new `PropertyStream` yields the cached value first differs by major: zbus 5
//! and 6 queue one notification when the stream is made (`receive_property_changed`
//! notifies its listener when the cache holds a value), zbus 4.4 does not, so waiting
//! for that first item hung zbus 4's set-up until the runner's cell timeout (300 s).
//! Neither is awaited: notifications already queued are taken without waiting, when the
//! stream is made and before each storm (what the previous storm left after its last
//! value was read). The set-up is bounded too ([`SETUP`]): a proxy that never builds
//! fails the cell with what it waited for.

use std::future::Future;
use std::num::NonZeroUsize;
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
use zbus::proxy::CacheProperties;
use zbus::{fdo, interface, Connection, MessageStream};

use crate::builders::{serving, to_socket, IntoResult};
use crate::compat::{block_on, SignalEmitter};

/// The storm's object: `Level`, read from the value the emitter last set.
struct StormObject {
    level: Arc<AtomicI32>,
}

#[interface(name = "io.killing.spark.Storm")]
impl StormObject {
    #[zbus(property)]
    fn level(&self) -> i32 {
        self.level.load(Ordering::SeqCst)
    }
}

/// The caching proxy. zbus 4 and 5 also generate a blocking `StormProxyBlocking`
/// this client does not use (zbus 4's macro cannot be told not to, zbus 6 has none).
#[allow(dead_code)]
mod caching_proxy {
    use zbus::proxy;

    #[proxy(
        interface = "io.killing.spark.Storm",
        default_service = "io.killing.spark.Storm",
        default_path = "/io/killing/spark/storm"
    )]
    pub trait Storm {
        #[zbus(property)]
        fn level(&self) -> zbus::Result<i32>;
    }
}

use caching_proxy::StormProxy;

/// A queue length as `MessageStream::for_match_rule` takes it (`usize` in zbus 4 and 5, `NonZeroUsize` in 6).
trait QueueLength {
    fn of(n: usize) -> Self;
}

impl QueueLength for Option<usize> {
    fn of(n: usize) -> Self {
        Some(n)
    }
}

impl QueueLength for Option<NonZeroUsize> {
    fn of(n: usize) -> Self {
        NonZeroUsize::new(n)
    }
}

async fn connect(socket: &Path) -> zbus::Result<Connection> {
    to_socket(socket)?.build().await
}

/// A future ready `after` its first poll. zbus's runtimes differ (async-io, zruntime,
/// Tokio), so a thread of std's wakes it; the thread ends when the future is dropped.
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

/// How long the set-up (two connections, the object, the caching proxy's `GetAll`
/// and subscriptions) may take before the cell fails instead of waiting for the
/// runner's cell timeout.
const SETUP: Duration = Duration::from_secs(30);

/// Takes the change notifications `changes` already holds, without waiting (none is
/// a value of the storm to come).
fn take_queued(changes: &mut Pin<Box<zbus::proxy::PropertyStream<'static, i32>>>) {
    while let Some(Some(_)) = changes.next().now_or_never() {}
}

/// What one storm operation holds: both connections, the object's value, the proxy.
struct StormClient {
    level: Arc<AtomicI32>,
    announcer: StormObject,
    emitter: SignalEmitter<'static>,
    bus_tx: fdo::DBusProxy<'static>,
    bus_rx: fdo::DBusProxy<'static>,
    proxy: StormProxy<'static>,
    changes: Pin<Box<zbus::proxy::PropertyStream<'static, i32>>>,
    counter: MessageStream,
    _connections: (Connection, Connection),
}

/// The set-up's step now, so that a set-up past [`SETUP`] says where it waited.
type Step = std::sync::Mutex<&'static str>;

fn reached(step: &Step, what: &'static str) {
    *step.lock().unwrap_or_else(|e| e.into_inner()) = what;
}

async fn setup(socket: &Path, n: usize, step: &Step) -> Result<StormClient> {
    reached(step, "connecting the emitter and serving the storm object");
    let level = Arc::new(AtomicI32::new(st::INITIAL_LEVEL));
    // Served by the builder: a GetAll read before a later `object_server().at` had
    // started reading method calls went unanswered (crate::builders::serving says why).
    let tx = serving(socket, st::STORM_PATH, StormObject { level: level.clone() }, None)
        .await
        .context("connecting the emitter")?;
    let owner = tx.unique_name().context("the emitter has no unique name")?.to_string();
    reached(step, "connecting the subscriber");
    let rx = connect(socket).await.context("connecting the subscriber")?;
    reached(step, "building the caching proxy (its match rule and GetAll)");
    // CacheProperties::Yes: `build` subscribes to PropertiesChanged and waits for GetAll.
    let proxy = StormProxy::builder(&rx)
        .destination(owner)
        .into_result()?
        .cache_properties(CacheProperties::Yes)
        .build()
        .await
        .context("building the caching proxy")?;
    anyhow::ensure!(
        proxy.cached_level()? == Some(st::INITIAL_LEVEL),
        "the proxy's cache does not hold the initial value after GetAll"
    );
    reached(step, "making the stream of Level's changes");
    let mut changes = Box::pin(proxy.receive_level_changed().await);
    take_queued(&mut changes); // zbus 5 and 6 yield the cached value first, zbus 4 does not
    let rule = st::changed_rule();
    let rule = zbus::MatchRule::try_from(rule.as_str())?.into_owned();
    reached(step, "adding the counter's match rule");
    let counter = MessageStream::for_match_rule(rule, &rx, QueueLength::of(n + 64)).await?;
    reached(step, "making the bus proxies");
    let bus_tx = fdo::DBusProxy::new(&tx).await?;
    let bus_rx = fdo::DBusProxy::new(&rx).await?;
    Ok(StormClient {
        level: level.clone(),
        announcer: StormObject { level },
        emitter: SignalEmitter::new(&tx, st::STORM_PATH)?.into_owned(),
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
        // The previous storm's notifications after its last value was read (the stream's
        // listener is armed again after each item): stale, not this storm's.
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
                // The stream listens again when it yields, before `get` reads the cache: an
                // update between the two is read with this notification and notifies the
                // next one, which reads the same value again. One change, told once.
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
            msg?;
            received += 1;
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
    let mut storm = block_on(async {
        match select(pin!(setup(socket, n, &step)), pin!(Deadline::after(SETUP))).await {
            Either::Left((storm, _)) => storm,
            Either::Right(_) => Err(anyhow::anyhow!(
                "the storm's set-up did not finish within {} s; it was {}",
                SETUP.as_secs(),
                step.lock().unwrap_or_else(|e| e.into_inner())
            )),
        }
    })?;
    Ok(Box::new(move || block_on(storm.run(n))))
}
