//! How applications use zbus 1 (issue 31, `harness::ipc::application`), with its
//! synchronous API: a service the process serves itself on a second connection
//! (`call/in-only-bytes/<n>`: an `ObjectServer` driven by `try_handle_next` on a thread of
//! the adapter's, zbus 1 having no executor), K connections of one process called in turn
//! (`call/connections-in-process/<k>`), and a `zbus::Proxy` built and called once against
//! the harness's own server (`proxy/create-call/<server>`). `proxy/startup/<n>` is
//! adapter-shared/zbus/startup_1_3.rs, shared with zbus 2 and 3.

use std::convert::TryInto;

use anyhow::{bail, Context, Result};
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::proxied::{self as px, ProxyServer};
use harness::ipc::{self as h, raw_server, Transport};
use zbus::fdo::{self, RequestNameFlags, RequestNameReply};
use zbus::{dbus_interface, Connection, ObjectServer};

use crate::ipc::{connect, connect_proxy, serve_next, ByteArray};

type Op = Box<dyn FnMut() -> Result<u64>>;

/// The object the process serves itself: `SinkBytes(ay)`, an empty reply.
struct Sink(SharedTally);

// The interface name is `harness::ipc::application::SINK_INTERFACE` (a literal here: the macro needs one).
#[dbus_interface(name = "io.killing.spark.Sink")]
impl Sink {
    fn sink_bytes(&self, data: ByteArray) {
        app::record(&self.0, &data.0);
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

/// `call/in-only-bytes/<n>`: the `Sink` in an `ObjectServer` of a second connection,
/// which owns [`app::sink_name`] and is served by a thread (it reads that connection
/// only: calls sent before it starts wait in the socket), called through a `zbus::Proxy`
/// on the first.
fn in_only_bytes(t: &Transport, n: usize) -> Result<Op> {
    let Transport::Bus { service_name, .. } = t else {
        bail!("call/in-only-bytes goes through a bus");
    };
    let name = app::sink_name(service_name);
    let tally = SharedTally::default();
    let server = connect(t).context("connecting the serving connection")?;
    let reply = fdo::DBusProxy::new(&server)?
        .request_name(&name, RequestNameFlags::DoNotQueue.into())
        .with_context(|| format!("requesting {name}"))?;
    if reply == RequestNameReply::Exists {
        bail!("{name} is owned by another connection");
    }
    let sink = Sink(tally.clone());
    std::thread::Builder::new()
        .name("sink server".into())
        .spawn(move || {
            let mut objects = ObjectServer::new(&server);
            let served = app::SINK_PATH
                .try_into()
                .map_err(zbus::Error::from)
                .and_then(|path| objects.at(&path, sink));
            if let Err(e) = served {
                eprintln!("serving the sink: {e}");
                return;
            }
            while serve_next(&mut objects).is_ok() {}
        })
        .context("starting the sink's thread")?;
    let client = connect(t).context("connecting the calling connection")?;
    let payload = ByteArray(h::echo_payload(n));
    Ok(Box::new(move || {
        let proxy = zbus::Proxy::new(&client, &name, app::SINK_PATH, app::SINK_INTERFACE)?;
        proxy.call_method(app::SINK_BYTES, &payload).context("SinkBytes")?;
        Ok(app::take_tally(&tally))
    }))
}

/// `call/connections-in-process/<k>`: k connections, each with the generated
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

/// `proxy/create-call/<server>`: per op a new `zbus::Proxy` (`Proxy::new`, which sends
/// nothing: zbus 1 caches no properties) of the harness's object, one `Void`, dropped.
fn proxy_create(t: &Transport, server: ProxyServer) -> Result<Op> {
    let served = raw_server::serve_proxied_on(t, server)?;
    let conn: Connection = connect(t).context("connecting the client")?;
    Ok(Box::new(move || {
        let proxy = zbus::Proxy::new(&conn, served.name.as_str(), px::PROXIED_PATH, px::PROXIED_INTERFACE)?;
        proxy.call_method(px::PROXIED_METHOD, &())?;
        Ok(app::take_tally(&served.tally))
    }))
}
