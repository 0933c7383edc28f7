//! How applications use tokio-dbus 0.2 (issue 31, `harness::ipc::application`):
//! a service the process serves itself (`call/in-only-bytes/<n>`: a second
//! `Connection` that owns the sink's name and answers `SinkBytes` by hand, as
//! the benchmark server does, driven by a thread with a current-thread runtime
//! of its own, since the client's runtime runs only while the client waits), K
//! connections of one process called in turn
//! (`call/connections-in-process/<k>`, each a `Connection` of its own on the
//! client's runtime), and `proxy/create-call/<server>` against the harness's
//! own server: tokio-dbus has no proxy type (its lib.rs: proxies come from
//! tokio-dbus-codegen at build time), so per op the call is written into the
//! `SendBuf`, as every tokio-dbus call is. `proxy/startup` is answered by
//! `ipc::unsupported_ipc`.

use std::sync::mpsc;

use anyhow::{bail, Context, Result};
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::proxied::{self as px, ProxyServer};
use harness::ipc::{self as h, raw_server, standard, Transport};
use tokio::runtime::Runtime;
use tokio_dbus::{BodyBuf, MessageKind, ObjectPath};

use super::{runtime, Op, Peer, PRIMARY_OWNER};
use tokio_dbus::org_freedesktop_dbus::NameFlag;

/// The client side of the application families (`ipc::client`'s arm for `IpcOp::App`).
pub(super) fn client<'a>(rt: Runtime, t: &Transport, op: AppOp) -> Result<Op<'a>> {
    match op {
        AppOp::InOnlyBytes(n) => in_only_bytes(rt, t, n),
        AppOp::Connections(k) => connections(rt, t, k),
        AppOp::ProxyCreate(server) => proxy_create(rt, t, server),
        // `ipc::unsupported_ipc` says why (never asked for).
        AppOp::Startup(_) => bail!(super::NO_INTROSPECTION_PARSER),
    }
}

impl Peer {
    /// Calls `member` of `interface` at `path` of `destination`, the reply awaited.
    pub(super) async fn call_at(
        &mut self,
        destination: &str,
        path: &str,
        interface: &str,
        member: &str,
        args: impl FnOnce(&mut BodyBuf) -> tokio_dbus::Result<()>,
    ) -> Result<()> {
        self.buf.body.clear();
        args(&mut self.buf.body)?;
        let msg = self
            .buf
            .send
            .method_call(ObjectPath::new(path)?, member)
            .with_interface(interface)
            .with_destination(destination)
            .with_body(&self.buf.body);
        let serial = self.buf.send.write_message(msg)?;
        self.reply(serial).await
    }
}

/// `proxy/create-call/<server>`: tokio-dbus has no proxy type; the call is written per op.
fn proxy_create<'a>(rt: Runtime, t: &Transport, server: ProxyServer) -> Result<Op<'a>> {
    let served = raw_server::serve_proxied_on(t, server)?;
    let mut peer = rt.block_on(Peer::connect(t))?;
    Ok(Box::new(move || {
        rt.block_on(peer.call_at(
            &served.name,
            px::PROXIED_PATH,
            px::PROXIED_INTERFACE,
            px::PROXIED_METHOD,
            |_| Ok(()),
        ))
        .context("Void")?;
        Ok(app::take_tally(&served.tally))
    }))
}

/// Owns `name` on a new connection and answers `SinkBytes` on it until the
/// connection fails; any other call gets an error.
async fn sink(t: &Transport, name: &str, tally: &SharedTally, ready: &mpsc::Sender<Result<()>>) -> Result<()> {
    let mut peer = Peer::connect(t).await?;
    peer.bus_call("RequestName", |b| {
        b.store(name)?;
        b.store(NameFlag::DO_NOT_QUEUE)
    })
    .await?;
    let code = peer.reply_body("u")?.load::<u32>()?;
    anyhow::ensure!(code == PRIMARY_OWNER, "RequestName {name}: reply {code}");
    let _ = ready.send(Ok(()));
    loop {
        peer.conn.wait(&mut peer.buf).await.context("receiving")?;
        let msg = peer.buf.recv.last_message()?;
        let MessageKind::MethodCall { path, member } = msg.kind() else {
            continue;
        };
        let (send, out) = (&mut peer.buf.send, &mut peer.buf.body);
        out.clear();
        let sink_call = <ObjectPath as AsRef<[u8]>>::as_ref(path) == app::SINK_PATH.as_bytes()
            && msg.interface() == Some(app::SINK_INTERFACE)
            && member == app::SINK_BYTES
            && msg.signature().as_str() == "ay";
        let reply = if sink_call {
            app::record(tally, msg.body().read::<[u8]>()?);
            msg.method_return(send.next_serial())
        } else {
            out.store("only SinkBytes here")?;
            msg.error(standard::UNKNOWN_METHOD, send.next_serial())
        };
        // SENDER: as in server.rs, our unique name, not the call's DESTINATION.
        send.write_message(reply.with_sender(&peer.unique_name).with_body(&*out))?;
        peer.conn.flush(&mut peer.buf).await.context("sending a reply")?;
    }
}

/// Serves `SinkBytes` on a new connection that owns `name` ([`app::sink_name`]),
/// driven by a thread of its own until the process exits.
fn serve_sink(t: &Transport, name: &str, tally: SharedTally) -> Result<()> {
    let (tx, rx) = mpsc::channel::<Result<()>>();
    let t = t.clone();
    let name = name.to_string();
    std::thread::Builder::new()
        .name("sink".into())
        .spawn(move || {
            let rt = match runtime() {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            if let Err(e) = rt.block_on(sink(&t, &name, &tally, &tx)) {
                // Before it was ready the client is told; after, the client's call fails too.
                if tx.send(Err(anyhow::anyhow!("{e:#}"))).is_err() {
                    eprintln!("the sink's connection failed: {e:#}");
                }
            }
        })
        .context("starting the sink's thread")?;
    rx.recv().context("the sink's thread ended before it was connected")?
}

/// `call/in-only-bytes/<n>`: `SinkBytes(ay)` to the serving connection's well-known
/// name, its empty reply awaited.
fn in_only_bytes<'a>(rt: Runtime, t: &Transport, n: usize) -> Result<Op<'a>> {
    let Transport::Bus { service_name, .. } = t else {
        bail!("call/in-only-bytes goes through a bus");
    };
    let tally = SharedTally::default();
    let name = app::sink_name(service_name);
    serve_sink(t, &name, tally.clone())?;
    let mut peer = rt.block_on(Peer::connect(t))?;
    let payload = h::echo_payload(n);
    Ok(Box::new(move || {
        rt.block_on(
            peer.call_at(&name, app::SINK_PATH, app::SINK_INTERFACE, app::SINK_BYTES, |b| {
                b.store(payload.as_slice())
            }),
        )
        .context("SinkBytes")?;
        Ok(app::take_tally(&tally))
    }))
}

/// `call/connections-in-process/<k>`: one `InOutInt` on each connection in turn.
fn connections<'a>(rt: Runtime, t: &Transport, k: usize) -> Result<Op<'a>> {
    let mut peers = rt.block_on(async {
        let mut peers = Vec::with_capacity(k);
        for i in 0..k {
            peers.push(
                Peer::connect(t)
                    .await
                    .with_context(|| format!("connection {i} of {k}"))?,
            );
        }
        anyhow::Ok(peers)
    })?;
    Ok(Box::new(move || {
        rt.block_on(async {
            let mut replies = Vec::with_capacity(k);
            for (i, p) in peers.iter_mut().enumerate() {
                p.call(h::INTERFACE, "InOutInt", |b| b.store(h::in_flight_arg(i)))
                    .await?;
                replies.push(p.reply_body("i")?.load::<i32>()?);
            }
            Ok(h::in_flight_digest(replies))
        })
    }))
}
