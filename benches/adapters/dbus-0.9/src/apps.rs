//! How applications use dbus-rs 0.9 (issue 31, `harness::ipc::application`): a service
//! the process serves itself (`call/in-only-bytes/<n>`: a `dbus_crossroads` object on a
//! second connection, served on a thread of its own by `Crossroads::serve`, since a
//! blocking `Proxy::method_call` holds the calling thread until the reply), and K
//! connections of one process called in turn (`call/connections-in-process/<k>`, each
//! a `blocking::Proxy` on its own connection), and a `blocking::Proxy` built and called
//! once against the harness's own server (`proxy/create-call/<server>`).

use std::sync::mpsc;

use anyhow::{bail, Context, Result};
use dbus::blocking::stdintf::org_freedesktop_dbus::RequestNameReply;
use dbus::blocking::Proxy;
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::proxied::{self as px, ProxyServer};
use harness::ipc::{self as h, raw_server, Transport};

use crate::ipc::{connect, connect_proxy, TIMEOUT};

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

/// `proxy/create-call/<server>`: per op a new `blocking::Proxy` (destination, path and
/// timeout over a borrowed connection: building it sends nothing) and one `Void` through it.
fn proxy_create(t: &Transport, server: ProxyServer) -> Result<Op> {
    let served = raw_server::serve_proxied_on(t, server)?;
    let conn = connect(t)?;
    Ok(Box::new(move || {
        let proxy = Proxy::new(served.name.as_str(), px::PROXIED_PATH, TIMEOUT, &conn);
        proxy.method_call::<(), _, _, _>(px::PROXIED_INTERFACE, px::PROXIED_METHOD, ())?;
        Ok(app::take_tally(&served.tally))
    }))
}

/// Serves `SinkBytes` at the sink's path on a new connection that owns `name`
/// ([`app::sink_name`]), driven by a thread of its own until the process exits.
fn serve_sink(t: &Transport, name: &str, tally: SharedTally) -> Result<()> {
    let (tx, rx) = mpsc::channel::<Result<()>>();
    let (t, name) = (t.clone(), name.to_string());
    std::thread::Builder::new()
        .name("sink".into())
        .spawn(move || {
            let owned = connect(&t).and_then(|conn| {
                let reply = conn
                    .request_name(name.as_str(), false, false, true)
                    .with_context(|| format!("RequestName {name}"))?;
                anyhow::ensure!(
                    reply == RequestNameReply::PrimaryOwner,
                    "RequestName {name}: {reply:?}, not the primary owner"
                );
                Ok(conn)
            });
            let conn = match owned {
                Ok(c) => c,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            let cr = crate::sink::crossroads(tally);
            // Calls that arrive before `serve` starts wait in libdbus's queue.
            let _ = tx.send(Ok(()));
            if let Err(e) = cr.serve(&conn) {
                eprintln!("the sink's connection failed: {e}");
            }
        })
        .context("starting the sink's thread")?;
    rx.recv().context("the sink's thread ended before it was connected")?
}

/// `call/in-only-bytes/<n>`: `Proxy::method_call` of `SinkBytes` (its empty reply read
/// as `()`), addressed to the name the serving connection owns.
fn in_only_bytes(t: &Transport, n: usize) -> Result<Op> {
    let Transport::Bus { service_name, .. } = t else {
        bail!("call/in-only-bytes goes through a bus");
    };
    let tally = SharedTally::default();
    let name = app::sink_name(service_name);
    serve_sink(t, &name, tally.clone())?;
    let proxy = Proxy::new(name, app::SINK_PATH, TIMEOUT, Box::new(connect(t)?));
    let payload = h::echo_payload(n);
    Ok(Box::new(move || {
        proxy.method_call::<(), _, _, _>(app::SINK_INTERFACE, app::SINK_BYTES, (payload.as_slice(),))?;
        Ok(app::take_tally(&tally))
    }))
}

/// `call/connections-in-process/<k>`: one `InOutInt` through each connection's proxy in turn.
fn connections(t: &Transport, k: usize) -> Result<Op> {
    let proxies = (0..k)
        .map(|i| connect_proxy(t).with_context(|| format!("connection {i} of {k}")))
        .collect::<Result<Vec<_>>>()?;
    Ok(Box::new(move || {
        let mut replies = Vec::with_capacity(k);
        for (i, p) in proxies.iter().enumerate() {
            let (v,): (i32,) = p.method_call(h::INTERFACE, "InOutInt", (h::in_flight_arg(i),))?;
            replies.push(v);
        }
        Ok(h::in_flight_digest(replies))
    }))
}
