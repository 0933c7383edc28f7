//! How applications use zbus (issue 31, `harness::ipc::application`), written once for
//! zbus 4, 5, 6 and 6 on Tokio (compiled by adapter-zbus-4, -5, -6 and -6-tokio through
//! `#[path]`): a service the process serves itself on a second connection
//! (`call/in-only-bytes/<n>`), K connections of one process called in turn
//! (`call/connections-in-process/<k>`), and a proxy built and called once against the
//! harness's own server (`proxy/create-call/<server>`); `proxy/startup/<n>` is in
//! adapter-shared/zbus/startup.rs. Async zbus throughout, driven by
//! the including driver's `ipc::for_apps` (`zbus::block_on` for 4 and 5, whose connections
//! run on zbus's own executor thread each; `crate::runtime::block_on` for 6), which also
//! makes the connections and the generated `BenchProxy` the way the version spells it.

use anyhow::{bail, Context, Result};
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::proxied::{self as px, ProxyServer};
use harness::ipc::{self as h, raw_server, Transport};
use serde_bytes::{ByteBuf, Bytes};
use zbus::interface;

use crate::builders::serving;
use crate::ipc::for_apps::{block_on, connection, proxy};

type Op = Box<dyn FnMut() -> Result<u64>>;

/// The object the process serves itself: `SinkBytes(ay)`, an empty reply.
struct Sink(SharedTally);

// The interface name is `harness::ipc::application::SINK_INTERFACE` (a literal here: the macro needs one).
#[interface(name = "io.killing.spark.Sink")]
impl Sink {
    /// `ay` through serde_bytes: one slice.
    fn sink_bytes(&self, data: ByteBuf) {
        app::record(&self.0, &data);
    }
}

/// The client side of the application families (`ipc::client`'s arm for `IpcOp::App`).
pub fn client(t: &Transport, op: AppOp) -> Result<Op> {
    match op {
        AppOp::InOnlyBytes(n) => in_only_bytes(t, n),
        AppOp::Connections(k) => connections(t, k),
        AppOp::ProxyCreate(server) => proxy_create(t, server),
        AppOp::Startup(n) => crate::startup::client(t, n),
    }
}

/// `proxy/create-call/<server>`: per op a new `zbus::Proxy` (`Proxy::new`, zbus's defaults:
/// `CacheProperties::Lazily`) of the harness's object, one `Void` through it, dropped.
fn proxy_create(t: &Transport, server: ProxyServer) -> Result<Op> {
    let served = raw_server::serve_proxied_on(t, server)?;
    let conn = connection(t).context("connecting the client")?;
    Ok(Box::new(move || {
        block_on(async {
            let proxy = zbus::Proxy::new(&conn, served.name.as_str(), px::PROXIED_PATH, px::PROXIED_INTERFACE).await?;
            proxy.call_method(px::PROXIED_METHOD, &()).await?;
            anyhow::Ok(())
        })?;
        Ok(app::take_tally(&served.tally))
    }))
}

/// `call/in-only-bytes/<n>`: the `Sink` object served by the object server of one
/// connection, which owns [`app::sink_name`], called through a `zbus::Proxy` on a
/// second one (addressed to that name); one op is the call and its empty reply.
fn in_only_bytes(t: &Transport, n: usize) -> Result<Op> {
    let Transport::Bus {
        socket, service_name, ..
    } = t
    else {
        bail!("call/in-only-bytes goes through a bus");
    };
    let name = app::sink_name(service_name);
    let tally = SharedTally::default();
    // Served by the builder, not `object_server().at` after it: crate::builders::serving says why.
    let server = block_on(serving(
        socket,
        app::SINK_PATH,
        Sink(tally.clone()),
        Some(name.as_str()),
    ))
    .context("connecting the serving connection")?;
    let client = connection(t).context("connecting the calling connection")?;
    let proxy = block_on(zbus::Proxy::new(&client, name, app::SINK_PATH, app::SINK_INTERFACE))
        .context("building the sink's proxy")?;
    let payload = h::echo_payload(n);
    Ok(Box::new(move || {
        let _serving = &server;
        block_on(proxy.call_method(app::SINK_BYTES, &(Bytes::new(&payload),))).context("SinkBytes")?;
        Ok(app::take_tally(&tally))
    }))
}

/// `call/connections-in-process/<k>`: k connections, each with the generated async
/// `BenchProxy`; one op is one `InOutInt` on each in turn, each awaited.
fn connections(t: &Transport, k: usize) -> Result<Op> {
    let proxies = (0..k)
        .map(|i| proxy(t).with_context(|| format!("connection {i} of {k}")))
        .collect::<Result<Vec<_>>>()?;
    Ok(Box::new(move || {
        block_on(async {
            let mut replies = Vec::with_capacity(k);
            for (i, p) in proxies.iter().enumerate() {
                replies.push(p.in_out_int(h::in_flight_arg(i)).await?);
            }
            anyhow::Ok(h::in_flight_digest(replies))
        })
    }))
}
