//! Issue 31's application families on GDBus (`harness::ipc::application`):
//! - `proxy/create-call/<server>`: per op a new `DBusProxy` of the harness's own server
//!   (`harness::ipc::raw_server`, in this process, owning `<service>.Proxied`), built with
//!   GDBus's default flags, one `Void` through it, dropped. GDBus's defaults load the
//!   properties (`GetAll`) and subscribe to the object's signals and to its name's owner
//!   when the proxy is built; what that costs shows in the cell's bus messages per op.
//! - `call/in-only-bytes/<n>`: the `Sink` object registered (`register_object`) on a
//!   second connection of the process that owns `<service>.Sink` and answers on a thread
//!   of its own ([`super::own_context`]: the calling thread blocks in `call_sync`), called
//!   through the bus with `call_sync`.
//! - `call/connections-in-process/<k>`: k connections, each `call_sync`s `InOutInt` in turn.
//! - `proxy/startup/<n>`: `super::startup`.

use anyhow::{bail, Context, Result};
use gio::prelude::*;
use gio::{DBusCallFlags, DBusNodeInfo, DBusProxy, DBusProxyFlags};
use glib::variant::ToVariant;
use glib::{Variant, VariantTy};
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::proxied::{self as px, ProxyServer};
use harness::ipc::{self as h, raw_server, Transport};

use super::own_context::Served;
use super::{call_bus, call_sync, connect, Service, NO_CANCEL, TIMEOUT_MS};

type Op = Box<dyn FnMut() -> Result<u64>>;

/// The client side of the application families this adapter has code for.
pub fn client(t: &Transport, op: AppOp) -> Result<Op> {
    match op {
        AppOp::ProxyCreate(server) => proxy_create(t, server),
        AppOp::InOnlyBytes(n) => in_only_bytes(t, n),
        AppOp::Connections(k) => connections(t, k),
        AppOp::Startup(n) => super::startup::client(t, n),
    }
}

/// The sink's interface as the serving connection registers it.
fn sink_xml() -> String {
    format!(
        "<node><interface name=\"{}\"><method name=\"{}\"><arg type=\"ay\" direction=\"in\"/></method>\
         </interface></node>",
        app::SINK_INTERFACE,
        app::SINK_BYTES
    )
}

/// The `Sink` served on its own thread by a connection that owns `name`.
fn serve_sink(t: &Transport, name: String, tally: SharedTally) -> Result<Served> {
    Served::start(t, move |conn| {
        let node = DBusNodeInfo::for_xml(&sink_xml()).context("parsing the sink's XML")?;
        let iface = node
            .lookup_interface(app::SINK_INTERFACE)
            .context("the sink interface is not in its XML")?;
        conn.register_object(app::SINK_PATH, &iface)
            .method_call(move |_conn, _sender, _path, _iface, _member, args, invocation| {
                // GDBus checked the arguments against the XML: one `ay`.
                match args.child_value(0).fixed_array::<u8>() {
                    Ok(bytes) => {
                        app::record(&tally, bytes);
                        invocation.return_value(None);
                    }
                    Err(e) => invocation.return_dbus_error("org.freedesktop.DBus.Error.InvalidArgs", &e.to_string()),
                }
            })
            .build()
            .context("registering the sink")?;
        // DO_NOT_QUEUE (4); 1: the primary owner.
        let owned = call_bus(conn, "RequestName", Some(&(name.as_str(), 4u32).to_variant()), "(u)")?;
        anyhow::ensure!(
            owned.child_value(0).get::<u32>() == Some(1),
            "{name} is owned by another connection"
        );
        Ok(())
    })
}

/// `call/in-only-bytes/<n>`: `SinkBytes` through the bus to the process's own sink.
fn in_only_bytes(t: &Transport, n: usize) -> Result<Op> {
    let Transport::Bus { service_name, .. } = t else {
        bail!("call/in-only-bytes goes through a bus");
    };
    let name = app::sink_name(service_name);
    let tally = SharedTally::default();
    let sink = serve_sink(t, name.clone(), tally.clone()).context("serving the sink")?;
    let client = connect(t).context("connecting the calling connection")?;
    let args = Variant::tuple_from_iter([Variant::array_from_fixed_array(&h::echo_payload(n))]);
    let empty = VariantTy::new("()").expect("a valid type");
    Ok(Box::new(move || {
        let _serving = &sink;
        call_sync(
            &client,
            (Some(name.as_str()), app::SINK_PATH, app::SINK_INTERFACE),
            app::SINK_BYTES,
            Some(&args),
            empty,
        )
        .context("SinkBytes")?;
        Ok(app::take_tally(&tally))
    }))
}

/// `call/connections-in-process/<k>`: k connections to the benchmark service; one op is
/// one `InOutInt` on each in turn (call i sends `in_flight_arg(i)`), each awaited.
fn connections(t: &Transport, k: usize) -> Result<Op> {
    let services = (0..k)
        .map(|i| Service::connect(t).with_context(|| format!("connection {i} of {k}")))
        .collect::<Result<Vec<_>>>()?;
    let reply = VariantTy::new("(i)").expect("a valid type");
    Ok(Box::new(move || {
        let mut replies = Vec::with_capacity(k);
        for (i, s) in services.iter().enumerate() {
            let out = s.call(
                h::Method::InOutInt.member(),
                Some(&(h::in_flight_arg(i),).to_variant()),
                reply,
            )?;
            replies.push(crate::variant::get::<(i32,)>(&out)?.0);
        }
        Ok(h::in_flight_digest(replies))
    }))
}

fn proxy_create(t: &Transport, server: ProxyServer) -> Result<Op> {
    let served = raw_server::serve_proxied_on(t, server)?;
    let conn = connect(t)?;
    Ok(Box::new(move || {
        let proxy = DBusProxy::new_sync(
            &conn,
            DBusProxyFlags::NONE,
            None,
            Some(served.name.as_str()),
            px::PROXIED_PATH,
            px::PROXIED_INTERFACE,
            NO_CANCEL,
        )
        .context("creating the DBusProxy")?;
        proxy
            .call_sync(px::PROXIED_METHOD, None, DBusCallFlags::NONE, TIMEOUT_MS, NO_CANCEL)
            .context("Void")?;
        drop(proxy);
        Ok(app::take_tally(&served.tally))
    }))
}
