//! `property/changed-storm/<n>` on GDBus (harness::ipc::storm is the canon): the
//! subscriber holds a `DBusProxy` built with GDBus's default flags, GDBus's own
//! property cache: `GetAll` when it is built, then every `PropertiesChanged` of its
//! name, path and interface applied to the cache and announced as the proxy's
//! `g-properties-changed` signal. The program reads the value the way an application
//! does, from the cache (`cached_property`), and takes each announcement's `Level`.
//! GDBus announces every message (no coalescing): announcements count one to one.
//!
//! The emitter serves the storm object (`Level`, read from the value it last set)
//! with `register_object` on a connection of its own, whose callbacks run on a thread
//! with its own main context ([`Served`]): the proxy's `GetAll` is answered there
//! while the calling thread blocks in `DBusProxy::new_sync`, as a service in another
//! process would answer it. The updates are sent from the calling thread
//! (`emit_signal` is thread-safe).
//!
//! Beside the proxy, a `subscribe_to_signal` of the subscriber's connection counts the
//! PropertiesChanged messages the connection received (the instrument, not the
//! library's cache). The calling thread iterates GLib's default main context, where
//! both are dispatched, until both saw the last value (or `storm::SETTLE` passed).

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use gio::prelude::*;
use gio::{DBusNodeInfo, DBusProxy, DBusProxyFlags, DBusSignalFlags};
use glib::variant::ToVariant;
use glib::{MainContext, Variant, VariantDict};
use harness::ipc::storm as st;
use harness::ipc::Transport;

use super::own_context::Served;
use super::{connect, signals::sync_with_bus, NO_CANCEL};

/// The values of `Level` in order: announced by the proxy, or counted off the connection.
type Values = Arc<Mutex<Vec<i32>>>;

/// The storm interface as the emitter registers it: `Level`, read-only.
fn storm_xml() -> String {
    format!(
        "<node><interface name=\"{}\"><property name=\"{}\" type=\"i\" access=\"read\"/></interface></node>",
        st::STORM_INTERFACE,
        st::STORM_PROPERTY
    )
}

/// `Level` in a PropertiesChanged's `a{sv}` of changed properties, if it is there.
fn level_in(changed: &Variant) -> Option<i32> {
    VariantDict::new(Some(changed))
        .lookup_value(st::STORM_PROPERTY, None)?
        .get::<i32>()
}

/// The emitting connection, serving the storm object (`Level`) on a thread of its own.
fn start_emitter(t: &Transport, level: Arc<AtomicI32>) -> Result<Served> {
    Served::start(t, move |conn| {
        let node = DBusNodeInfo::for_xml(&storm_xml()).context("parsing the storm's XML")?;
        let iface = node
            .lookup_interface(st::STORM_INTERFACE)
            .context("the storm interface is not in its XML")?;
        conn.register_object(st::STORM_PATH, &iface)
            .property(move |_conn, _sender, _path, _iface, _property| level.load(Ordering::SeqCst).to_variant())
            .build()
            .context("registering the storm object")?;
        Ok(())
    })
    .context("connecting the emitter")
}

/// The `i`-th update as the emitter sends it: `(s a{sv} as)`.
fn update(value: i32) -> Variant {
    let changed = VariantDict::new(None);
    changed.insert_value(st::STORM_PROPERTY, &value.to_variant());
    Variant::tuple_from_iter([
        st::STORM_INTERFACE.to_variant(),
        changed.end(),
        Vec::<String>::new().to_variant(),
    ])
}

/// The client of `property/changed-storm/<n>` on a bus.
pub fn client(t: &Transport, n: usize) -> Result<Box<dyn FnMut() -> Result<u64>>> {
    if t.is_p2p() {
        anyhow::bail!("property/changed-storm needs a bus");
    }
    let level = Arc::new(AtomicI32::new(st::INITIAL_LEVEL));
    let emitter = start_emitter(t, level.clone())?;
    let owner = emitter
        .conn
        .unique_name()
        .context("the emitter has no unique name")?
        .to_string();
    let rx = connect(t).context("connecting the subscriber")?;
    let received = Values::default();
    let counted = received.clone();
    let counter = rx.subscribe_to_signal(
        None,
        Some(st::PROPERTIES_INTERFACE),
        Some(st::PROPERTIES_CHANGED),
        Some(st::STORM_PATH),
        Some(st::STORM_INTERFACE),
        DBusSignalFlags::NONE,
        move |signal| {
            // A message without the value counts as received and holds nothing new.
            let value = level_in(&signal.parameters.child_value(1)).unwrap_or(i32::MIN);
            counted.lock().expect("not poisoned").push(value);
        },
    );
    // GDBus's defaults: GetAll now, PropertiesChanged of the owner kept in the cache.
    let proxy = DBusProxy::new_sync(
        &rx,
        DBusProxyFlags::NONE,
        None,
        Some(owner.as_str()),
        st::STORM_PATH,
        st::STORM_INTERFACE,
        NO_CANCEL,
    )
    .context("building the caching proxy")?;
    let cached = |proxy: &DBusProxy| proxy.cached_property(st::STORM_PROPERTY).and_then(|v| v.get::<i32>());
    anyhow::ensure!(
        cached(&proxy) == Some(st::INITIAL_LEVEL),
        "the proxy's cache does not hold the initial value after GetAll"
    );
    let announced = Values::default();
    let told = announced.clone();
    proxy.connect_g_properties_changed(move |_proxy, changed, _invalidated| {
        if let Some(value) = level_in(changed) {
            told.lock().expect("not poisoned").push(value);
        }
    });
    sync_with_bus(&rx)?; // the counter's AddMatch is in place
    let last = st::last_level(n);
    let context = MainContext::default();
    Ok(Box::new(move || {
        let _subscribed = (&counter, &emitter);
        received.lock().expect("not poisoned").clear();
        announced.lock().expect("not poisoned").clear();
        for i in 0..n {
            level.store(st::level(i), Ordering::SeqCst);
            emitter
                .conn
                .emit_signal(
                    None,
                    st::STORM_PATH,
                    st::PROPERTIES_INTERFACE,
                    st::PROPERTIES_CHANGED,
                    Some(&update(st::level(i))),
                )
                .context("emitting PropertiesChanged")?;
        }
        emitter.conn.flush_sync(NO_CANCEL).context("flushing the updates")?;
        // A tick keeps `iteration(true)` from blocking past the deadline when nothing comes.
        let tick = glib::timeout_add_local(Duration::from_millis(20), || glib::ControlFlow::Continue);
        let deadline = Instant::now() + st::SETTLE;
        let done = || {
            announced.lock().expect("not poisoned").last() == Some(&last)
                && received.lock().expect("not poisoned").last() == Some(&last)
        };
        while !done() && Instant::now() < deadline {
            context.iteration(true);
        }
        tick.remove();
        let seen = st::StormSeen {
            received: received.lock().expect("not poisoned").len(),
            updates: std::mem::take(&mut *announced.lock().expect("not poisoned")),
            last: cached(&proxy),
            holder: "GDBus's property cache (DBusProxy, g-properties-changed)",
        };
        st::storm_digest(&seen, n)
    }))
}
