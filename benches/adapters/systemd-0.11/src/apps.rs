//! How applications use sd-bus (issue 31, `harness::ipc::application`): a service the
//! process serves itself (`call/in-only-bytes/<n>`: an object vtable on a second
//! connection, driven by `sd_bus_process`/`sd_bus_wait` on a thread of its own, since
//! sd-bus is single-threaded per connection and `sd_bus_call` holds the calling thread
//! until the reply), and K connections of one process called in turn
//! (`call/connections-in-process/<k>`, each a `Bus` of its own), and
//! `proxy/create-call/<server>` against the harness's own server: sd-bus has no proxy
//! object, so per op the call is built (`sd_bus_message_new_method_call`) and made
//! (`sd_bus_call`), as `sd_bus_call_method` does.

use std::ffi::{CStr, CString};
use std::sync::mpsc;

use anyhow::{bail, Context, Result};
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::proxied::{self as px, ProxyServer};
use harness::ipc::{self as h, raw_server, Transport};
use systemd::bus::{Vtable, VtableFlags};

use crate::ipc::{connect, dbus_error, in_flight_reply, Client};
use crate::{raw, server};

type Op = Box<dyn FnMut() -> Result<u64>>;

/// The client side of the application families (`ipc::client`'s arm for `IpcOp::App`).
pub fn client(t: &Transport, op: AppOp) -> Result<Op> {
    match op {
        AppOp::InOnlyBytes(n) => in_only_bytes(t, n),
        AppOp::Connections(k) => connections(t, k),
        AppOp::ProxyCreate(server) => proxy_create(t, server),
        // `ipc::unsupported_ipc` says why (never asked for).
        AppOp::Startup(_) => bail!(harness::ipc::not_implemented(harness::ipc::IpcOp::App(op))),
    }
}

/// `proxy/create-call/<server>`: sd-bus has no proxy object; the call is built per op.
fn proxy_create(t: &Transport, server: ProxyServer) -> Result<Op> {
    let served = raw_server::serve_proxied_on(t, server)?;
    let name = CString::new(served.name.as_str())?;
    let mut bus = connect(t)?;
    let (path, iface, member) = (
        CString::new(px::PROXIED_PATH)?,
        CString::new(px::PROXIED_INTERFACE)?,
        CString::new(px::PROXIED_METHOD)?,
    );
    Ok(Box::new(move || {
        let mut msg = bus.new_method_call(name.as_c_str(), path.as_c_str(), iface.as_c_str(), member.as_c_str())?;
        msg.call(0).map_err(dbus_error).context("Void")?;
        Ok(app::take_tally(&served.tally))
    }))
}

/// `SinkBytes(ay)` as an sd-bus object vtable: the bytes recorded, an empty reply.
fn sink_vtable(tally: SharedTally) -> systemd::Result<Vtable> {
    Vtable::new().method(app::SINK_BYTES, "ay", "", VtableFlags::UNPRIVILEGED, move |req| {
        server::reply(req, |req, _| {
            app::record(&tally, raw::read_bytes(req).map_err(server::io_error)?);
            Ok(())
        })
    })
}

/// Serves the sink on a new connection that owns `name` ([`app::sink_name`]),
/// driven by a thread of its own until the process exits.
fn serve_sink(t: &Transport, name: &CStr, tally: SharedTally) -> Result<()> {
    let (tx, rx) = mpsc::channel::<Result<()>>();
    let (t, name) = (t.clone(), name.to_owned());
    std::thread::Builder::new()
        .name("sink".into())
        .spawn(move || {
            let connected = connect(&t).and_then(|mut bus| {
                bus.add_object_vtable(app::SINK_PATH, app::SINK_INTERFACE, sink_vtable(tally)?)
                    .context("registering the sink's vtable")?;
                // sd_bus_request_name is synchronous: it waits for SASL, Hello and the answer.
                bus.request_name(name.as_c_str(), 0)
                    .with_context(|| format!("RequestName {}", name.to_string_lossy()))?;
                Ok(bus)
            });
            let mut bus = match connected {
                Ok(bus) => {
                    let _ = tx.send(Ok(()));
                    bus
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            if let Err(e) = server::run(&mut bus) {
                eprintln!("the sink's connection failed: {e:#}");
            }
        })
        .context("starting the sink's thread")?;
    rx.recv().context("the sink's thread ended before it was connected")?
}

/// `call/in-only-bytes/<n>`: `sd_bus_call` of `SinkBytes` to the serving connection's
/// well-known name, the bytes appended as one fixed array; its empty reply awaited.
fn in_only_bytes(t: &Transport, n: usize) -> Result<Op> {
    let Transport::Bus { service_name, .. } = t else {
        bail!("call/in-only-bytes goes through a bus");
    };
    let tally = SharedTally::default();
    let name = CString::new(app::sink_name(service_name))?;
    serve_sink(t, &name, tally.clone())?;
    let mut bus = connect(t)?;
    let (path, iface, member) = (
        CString::new(app::SINK_PATH)?,
        CString::new(app::SINK_INTERFACE)?,
        CString::new(app::SINK_BYTES)?,
    );
    let payload = h::echo_payload(n);
    Ok(Box::new(move || {
        let mut msg = bus.new_method_call(name.as_c_str(), path.as_c_str(), iface.as_c_str(), member.as_c_str())?;
        raw::append_bytes(&mut msg, &payload)?;
        // 0: sd-bus's default method call timeout (25 s).
        msg.call(0).map_err(dbus_error).context("SinkBytes")?;
        Ok(app::take_tally(&tally))
    }))
}

/// `call/connections-in-process/<k>`: one `InOutInt` (`sd_bus_call`) on each connection in turn.
fn connections(t: &Transport, k: usize) -> Result<Op> {
    let mut clients = (0..k)
        .map(|i| Client::new(t).with_context(|| format!("connection {i} of {k}")))
        .collect::<Result<Vec<_>>>()?;
    Ok(Box::new(move || {
        let mut replies = Vec::with_capacity(k);
        for (i, c) in clients.iter_mut().enumerate() {
            let mut reply = c.call(None, c"InOutInt", |msg, _| Ok(msg.append(h::in_flight_arg(i))?))?;
            replies.push(in_flight_reply(&mut reply)?);
        }
        Ok(h::in_flight_digest(replies))
    }))
}
