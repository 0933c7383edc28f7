//! How applications use rustbus 0.19 (issue 31, `harness::ipc::application`): a service
//! the process serves itself (`call/in-only-bytes/<n>`: a second connection on a thread
//! of its own that takes calls with `RpcConn::wait_call` and answers with
//! `make_response`, since the calling connection blocks in `wait_response`), and K
//! connections of one process called in turn (`call/connections-in-process/<k>`, each an
//! `RpcConn` of its own), and `proxy/create-call/<server>` against the harness's own
//! server: rustbus has no proxy, so per op the call is built with `MessageBuilder`, as
//! every rustbus call is, and sent.

use std::sync::mpsc;

use anyhow::{bail, ensure, Context, Result};
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::proxied::{self as px, ProxyServer};
use harness::ipc::{self as h, raw_server, Transport};
use rustbus::connection::Timeout;
use rustbus::{standard_messages, DuplexConn, MessageBuilder, RpcConn};

use crate::ipc::{call_msg, connect, send, unix_addr, Client};

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

/// `proxy/create-call/<server>`: rustbus has no proxy type; the call is built per op.
fn proxy_create(t: &Transport, server: ProxyServer) -> Result<Op> {
    let served = raw_server::serve_proxied_on(t, server)?;
    let mut conn = connect(t)?;
    Ok(Box::new(move || {
        let mut msg = MessageBuilder::new()
            .call(px::PROXIED_METHOD)
            .with_interface(px::PROXIED_INTERFACE)
            .on(px::PROXIED_PATH)
            .at(served.name.as_str())
            .build();
        call_msg(&mut conn, &mut msg).context("Void")?;
        Ok(app::take_tally(&served.tally))
    }))
}

/// Answers `SinkBytes` calls on `conn` until it fails; anything else is dropped
/// (nothing else is addressed to this connection).
fn sink_loop(conn: &mut RpcConn, tally: &SharedTally) -> Result<()> {
    loop {
        let call = conn.wait_call(Timeout::Infinite)?;
        let hdr = &call.dynheader;
        if hdr.interface.as_deref() != Some(app::SINK_INTERFACE) || hdr.member.as_deref() != Some(app::SINK_BYTES) {
            continue;
        }
        app::record(tally, call.body.parser().get::<&[u8]>()?);
        send(conn, &mut call.dynheader.make_response())?;
    }
}

/// Asks the bus for `name` (DO_NOT_QUEUE) on `conn`: it must become the primary owner.
fn own(conn: &mut RpcConn, name: &str) -> Result<()> {
    let mut msg = standard_messages::request_name(name, standard_messages::DBUS_NAME_FLAG_DO_NOT_QUEUE);
    let reply = call_msg(conn, &mut msg).with_context(|| format!("RequestName {name}"))?;
    let code: u32 = reply.body.parser().get()?;
    ensure!(
        code == standard_messages::DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER,
        "RequestName {name}: reply {code}, not the primary owner"
    );
    Ok(())
}

/// Serves `SinkBytes` on a new connection that owns `name` ([`app::sink_name`]),
/// driven by a thread of its own until the process exits.
fn serve_sink(t: &Transport, name: &str, tally: SharedTally) -> Result<()> {
    let (tx, rx) = mpsc::channel::<Result<()>>();
    let addr = unix_addr(t)?;
    let name = name.to_string();
    std::thread::Builder::new()
        .name("sink".into())
        .spawn(move || {
            let connected = DuplexConn::connect_to_bus(addr, true)
                .map_err(anyhow::Error::from)
                .and_then(|mut d| {
                    d.send_hello(Timeout::Infinite)?;
                    let mut conn = RpcConn::new(d);
                    own(&mut conn, &name)?;
                    Ok(conn)
                });
            let mut conn = match connected {
                Ok(conn) => {
                    let _ = tx.send(Ok(()));
                    conn
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            if let Err(e) = sink_loop(&mut conn, &tally) {
                eprintln!("the sink's connection failed: {e:#}");
            }
        })
        .context("starting the sink's thread")?;
    rx.recv().context("the sink's thread ended before it was connected")?
}

/// `call/in-only-bytes/<n>`: a `MessageBuilder` call of `SinkBytes` to the serving
/// connection's well-known name, its empty reply awaited (`wait_response`).
fn in_only_bytes(t: &Transport, n: usize) -> Result<Op> {
    let Transport::Bus { service_name, .. } = t else {
        bail!("call/in-only-bytes goes through a bus");
    };
    let tally = SharedTally::default();
    let name = app::sink_name(service_name);
    serve_sink(t, &name, tally.clone())?;
    let mut conn = connect(t)?;
    let payload = h::echo_payload(n);
    Ok(Box::new(move || {
        let mut msg = MessageBuilder::new()
            .call(app::SINK_BYTES)
            .with_interface(app::SINK_INTERFACE)
            .on(app::SINK_PATH)
            .at(name.as_str())
            .build();
        msg.body.push_param(payload.as_slice())?;
        call_msg(&mut conn, &mut msg).context("SinkBytes")?;
        Ok(app::take_tally(&tally))
    }))
}

/// `call/connections-in-process/<k>`: one `InOutInt` on each connection in turn.
fn connections(t: &Transport, k: usize) -> Result<Op> {
    let mut clients = (0..k)
        .map(|i| Client::new(t).with_context(|| format!("connection {i} of {k}")))
        .collect::<Result<Vec<_>>>()?;
    Ok(Box::new(move || {
        let mut replies = Vec::with_capacity(k);
        for (i, c) in clients.iter_mut().enumerate() {
            let reply = c.call("InOutInt", |b| b.push_param(h::in_flight_arg(i)))?;
            replies.push(reply.body.parser().get::<i32>()?);
        }
        Ok(h::in_flight_digest(replies))
    }))
}
