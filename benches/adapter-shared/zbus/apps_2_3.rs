//! How applications use zbus 2 and 3 (issue 31, `harness::ipc::application`; compiled
//! as `ipc::apps` of adapter-zbus-2 and -3 through ipc_2_3.rs), with their blocking API:
//! a service the process serves itself on a second connection (`call/in-only-bytes/<n>`),
//! K connections of one process called in turn (`call/connections-in-process/<k>`), and a
//! blocking `Proxy` built and called once against the harness's own server
//! (`proxy/create-call/<server>`); `proxy/startup/<n>` is in startup_1_3.rs. zbus 4 to 6
//! have theirs in apps.rs.

use anyhow::{bail, Context, Result};
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::proxied::{self as px, ProxyServer};
use harness::ipc::{self as h, raw_server, Transport};
use serde_bytes::{ByteBuf, Bytes};
use zbus::blocking;
use zbus::dbus_interface;

use super::{connect, connect_proxy};
use crate::bus_rules;

#[path = "startup_1_3.rs"]
mod startup;

type Op = Box<dyn FnMut() -> Result<u64>>;

/// The object the process serves itself: `SinkBytes(ay)`, an empty reply.
struct Sink(SharedTally);

// The interface name is `harness::ipc::application::SINK_INTERFACE` (a literal here: the macro needs one).
#[dbus_interface(name = "io.killing.spark.Sink")]
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
        AppOp::Startup(n) => startup::client(t, n),
    }
}

/// `call/in-only-bytes/<n>`: the `Sink` served by a second connection's object server,
/// which owns [`app::sink_name`], called through a blocking `Proxy` on the first.
fn in_only_bytes(t: &Transport, n: usize) -> Result<Op> {
    let Transport::Bus { service_name, .. } = t else {
        bail!("call/in-only-bytes goes through a bus");
    };
    let name = app::sink_name(service_name);
    let tally = SharedTally::default();
    // Served by the builder: zbus 3's `build` returns once its object server reads calls,
    // zbus 2's object server takes its message stream before `build` returns.
    let server = super::to_socket(t)?
        .serve_at(app::SINK_PATH, Sink(tally.clone()))?
        .build()
        .context("connecting the serving connection")?;
    bus_rules::request_name(&server, &name).with_context(|| format!("requesting {name}"))?;
    let client = connect(t).context("connecting the calling connection")?;
    let proxy = blocking::Proxy::new(&client, name, app::SINK_PATH, app::SINK_INTERFACE)
        .context("building the sink's proxy")?;
    let payload = h::echo_payload(n);
    Ok(Box::new(move || {
        let _serving = &server;
        proxy
            .call_method(app::SINK_BYTES, &(Bytes::new(&payload),))
            .context("SinkBytes")?;
        Ok(app::take_tally(&tally))
    }))
}

/// `call/connections-in-process/<k>`: k connections, each with the generated blocking
/// `BenchProxy`; one op is one `InOutInt` on each in turn.
fn connections(t: &Transport, k: usize) -> Result<Op> {
    let proxies = (0..k)
        .map(|i| connect_proxy(t).with_context(|| format!("connection {i} of {k}")))
        .collect::<Result<Vec<_>>>()?;
    Ok(Box::new(move || {
        let mut replies = Vec::with_capacity(k);
        for (i, p) in proxies.iter().enumerate() {
            replies.push(p.in_out_int(h::in_flight_arg(i))?);
        }
        Ok(h::in_flight_digest(replies))
    }))
}

/// `proxy/create-call/<server>`: per op a new blocking `zbus::blocking::Proxy` (`Proxy::new`,
/// zbus's defaults) of the harness's object, one `Void` through it, dropped.
fn proxy_create(t: &Transport, server: ProxyServer) -> Result<Op> {
    let served = raw_server::serve_proxied_on(t, server)?;
    let conn = connect(t).context("connecting the client")?;
    Ok(Box::new(move || {
        let proxy = blocking::Proxy::new(&conn, served.name.as_str(), px::PROXIED_PATH, px::PROXIED_INTERFACE)?;
        proxy.call_method(px::PROXIED_METHOD, &())?;
        Ok(app::take_tally(&served.tally))
    }))
}
