//! How applications use dbus-tokio 0.7 (issue 31, `harness::ipc::application`), all on
//! the adapter's current-thread runtime: `call/in-only-bytes/<n>` (the sink, the
//! `dbus_crossroads` object of `sink` shared with dbus-0.9, served on a second
//! connection of this process through `start_receive`: its I/O task runs while the
//! call is awaited, so no thread is needed), `call/connections-in-process/<k>` (k
//! connections, each with its `nonblock::Proxy`, called in turn) and
//! `proxy/create-call/<server>` (a `nonblock::Proxy` built per operation over the
//! open connection and called once, against the harness's own server).

use anyhow::{bail, ensure, Context, Result};
use dbus::channel::MatchingReceiver;
use dbus::message::MatchRule;
use dbus::nonblock::stdintf::org_freedesktop_dbus::RequestNameReply;
use dbus::nonblock::Proxy;
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::proxied::{self as px, ProxyServer};
use harness::ipc::{self as h, raw_server, IpcOp, Method, Transport};
use tokio::runtime::Runtime;

use crate::ipc::{connect, connect_proxy, Bus, Op, TIMEOUT};

/// The client side of the application families (`ipc::client`'s arm for `IpcOp::App`).
pub fn client<'a>(rt: &'a Runtime, t: &Transport, op: AppOp) -> Result<Op<'a>> {
    match op {
        AppOp::InOnlyBytes(n) => in_only_bytes(rt, t, n),
        AppOp::Connections(k) => connections(rt, t, k),
        AppOp::ProxyCreate(server) => proxy_create(rt, t, server),
        // `ipc::unsupported_ipc` says why (never asked for).
        AppOp::Startup(_) => bail!(h::not_implemented(IpcOp::App(op))),
    }
}

/// `proxy/create-call/<server>`: per op a new `nonblock::Proxy` (destination, path,
/// timeout and a clone of the connection's `Arc`: building it sends nothing) and
/// one `Void` through it.
fn proxy_create<'a>(rt: &'a Runtime, t: &Transport, server: ProxyServer) -> Result<Op<'a>> {
    let served = raw_server::serve_proxied_on(t, server)?;
    let bus = rt.block_on(connect(t))?;
    Ok(Box::new(move || {
        rt.block_on(async {
            let proxy = Proxy::new(served.name.as_str(), px::PROXIED_PATH, TIMEOUT, bus.conn.clone());
            proxy
                .method_call::<(), _, _, _>(px::PROXIED_INTERFACE, px::PROXIED_METHOD, ())
                .await?;
            anyhow::Ok(())
        })?;
        Ok(app::take_tally(&served.tally))
    }))
}

/// A new connection owning `name` ([`app::sink_name`]) that serves the sink from its
/// I/O task (`start_receive` of every method call into the `Crossroads`).
async fn serve_sink(t: &Transport, name: &str, tally: SharedTally) -> Result<Bus> {
    let bus = connect(t).await.context("connecting the sink")?;
    let reply = bus
        .conn
        .request_name(name, false, false, true)
        .await
        .with_context(|| format!("RequestName {name}"))?;
    ensure!(
        reply == RequestNameReply::PrimaryOwner,
        "RequestName {name}: {reply:?}, not the primary owner"
    );
    let mut cr = crate::sink::crossroads(tally);
    bus.conn.start_receive(
        MatchRule::new_method_call(),
        Box::new(move |msg, conn| {
            // Err only for a message that is not a method call: nothing to answer.
            let _ = cr.handle_message(msg, conn);
            true
        }),
    );
    Ok(bus)
}

/// `call/in-only-bytes/<n>`: `SinkBytes` through a `nonblock::Proxy` addressed to the
/// name the serving connection owns, its empty reply awaited as `()`.
fn in_only_bytes<'a>(rt: &'a Runtime, t: &Transport, n: usize) -> Result<Op<'a>> {
    let Transport::Bus { service_name, .. } = t else {
        bail!("call/in-only-bytes goes through a bus");
    };
    let tally = SharedTally::default();
    let name = app::sink_name(service_name);
    let (sink, bus) = rt.block_on(async {
        let sink = serve_sink(t, &name, tally.clone()).await?;
        anyhow::Ok((sink, connect(t).await?))
    })?;
    let proxy = Proxy::new(name, app::SINK_PATH, TIMEOUT, bus.conn.clone());
    let payload = h::echo_payload(n);
    Ok(Box::new(move || {
        let _keep = (&sink, &bus);
        rt.block_on(proxy.method_call::<(), _, _, _>(app::SINK_INTERFACE, app::SINK_BYTES, (payload.as_slice(),)))?;
        Ok(app::take_tally(&tally))
    }))
}

/// `call/connections-in-process/<k>`: one `InOutInt` through each connection's proxy
/// in turn, each reply awaited before the next call.
fn connections<'a>(rt: &'a Runtime, t: &Transport, k: usize) -> Result<Op<'a>> {
    let connected = rt.block_on(async {
        let mut all = Vec::with_capacity(k);
        for i in 0..k {
            all.push(
                connect_proxy(t)
                    .await
                    .with_context(|| format!("connection {i} of {k}"))?,
            );
        }
        anyhow::Ok(all)
    })?;
    Ok(Box::new(move || {
        rt.block_on(async {
            let mut replies = Vec::with_capacity(k);
            for (i, (_bus, proxy)) in connected.iter().enumerate() {
                let (v,): (i32,) = proxy
                    .method_call(h::INTERFACE, Method::InOutInt.member(), (h::in_flight_arg(i),))
                    .await?;
                replies.push(v);
            }
            Ok(h::in_flight_digest(replies))
        })
    }))
}
