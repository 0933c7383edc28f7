//! How applications use async-rustbus 0.2 (issue 31, `harness::ipc::application`): a
//! service the process serves itself (`call/in-only-bytes/<n>`: a second `RpcConn` that
//! owns the sink's name, registers its path with `CallAction::Queue` and answers
//! `get_call`'s calls, driven by a thread with a current-thread runtime of its own,
//! since the client's runtime runs only while the client awaits), K connections of one
//! process called in turn (`call/connections-in-process/<k>`, each an `RpcConn` of its
//! own on the client's runtime), and `proxy/create-call/<server>` against the harness's
//! own server: async-rustbus has no proxy, so per op the call is built with
//! `MessageBuilder`, as every async-rustbus call is, and sent with `send_msg_w_rsp`.
//! `proxy/startup` is answered by `ipc::unsupported_ipc` ([`NO_INTROSPECTION_PARSER`]).

use std::sync::mpsc;

use anyhow::{bail, ensure, Context, Result};
use async_rustbus::rustbus_core::message_builder::MessageBuilder;
use async_rustbus::{CallAction, RpcConn};
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::proxied::{self as px, ProxyServer};
use harness::ipc::{self as h, raw_server, Transport};
use tokio::runtime::Runtime;

use crate::ipc::{call_msg, connect, runtime, Client};
use crate::WireResult;

type Op = Box<dyn FnMut() -> Result<u64>>;

/// Why `proxy/startup/<n>` does not run.
pub const NO_INTROSPECTION_PARSER: &str = "async-rustbus 0.2.0 has no introspection parser and no proxy type: \
     its only introspection code writes the XML of its own call hierarchy (routing.rs, make_intro_msg); xml-rs is \
     a declared dependency its source never uses, so Introspect gives the XML as a string, nothing to build a proxy \
     from";

/// The client side of the application families (`ipc::client`'s arm for `IpcOp::App`).
pub fn client(rt: Runtime, t: &Transport, op: AppOp) -> Result<Op> {
    match op {
        AppOp::InOnlyBytes(n) => in_only_bytes(rt, t, n),
        AppOp::Connections(k) => connections(rt, t, k),
        AppOp::ProxyCreate(server) => proxy_create(rt, t, server),
        // `ipc::unsupported_ipc` says why (never asked for).
        AppOp::Startup(_) => bail!(NO_INTROSPECTION_PARSER),
    }
}

/// `proxy/create-call/<server>`: async-rustbus has no proxy type; the call is built per op.
fn proxy_create(rt: Runtime, t: &Transport, server: ProxyServer) -> Result<Op> {
    let served = raw_server::serve_proxied_on(t, server)?;
    let conn = rt.block_on(connect(t))?;
    Ok(Box::new(move || {
        let msg = MessageBuilder::new()
            .call(px::PROXIED_METHOD)
            .with_interface(px::PROXIED_INTERFACE)
            .on(px::PROXIED_PATH)
            .at(served.name.as_str())
            .build();
        rt.block_on(call_msg(&conn, &msg)).context("Void")?;
        Ok(app::take_tally(&served.tally))
    }))
}

/// Answers `SinkBytes` calls on `conn` until it fails; any other call gets an error.
async fn sink_loop(conn: &RpcConn, tally: &SharedTally) -> Result<()> {
    loop {
        let call = conn.get_call(app::SINK_PATH).await?;
        let hdr = &call.dynheader;
        let reply = if hdr.interface.as_deref() == Some(app::SINK_INTERFACE)
            && hdr.member.as_deref() == Some(app::SINK_BYTES)
        {
            app::record(tally, call.body.parser().get::<&[u8]>().wire()?);
            hdr.make_response()
        } else {
            hdr.make_error_response(h::standard::UNKNOWN_METHOD, Some("only SinkBytes here".into()))
        };
        conn.send_msg_wo_rsp(&reply).await?;
    }
}

/// A connection that owns `name` with the sink's path queued.
async fn sink_connection(t: &Transport, name: &str) -> Result<RpcConn> {
    let conn = connect(t).await?;
    conn.insert_call_path(app::SINK_PATH, CallAction::Queue)
        .await
        .map_err(|e| anyhow::anyhow!("registering {}: {e:?}", app::SINK_PATH))?;
    // RpcConn::request_name asks with DO_NOT_QUEUE.
    ensure!(
        conn.request_name(name).await?,
        "RequestName {name}: not the primary owner"
    );
    Ok(conn)
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
            rt.block_on(async {
                let conn = match sink_connection(&t, &name).await {
                    Ok(conn) => {
                        let _ = tx.send(Ok(()));
                        conn
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                if let Err(e) = sink_loop(&conn, &tally).await {
                    eprintln!("the sink's connection failed: {e:#}");
                }
            });
        })
        .context("starting the sink's thread")?;
    rx.recv().context("the sink's thread ended before it was connected")?
}

/// `call/in-only-bytes/<n>`: a `MessageBuilder` call of `SinkBytes` to the serving
/// connection's well-known name, its empty reply awaited.
fn in_only_bytes(rt: Runtime, t: &Transport, n: usize) -> Result<Op> {
    let Transport::Bus { service_name, .. } = t else {
        bail!("call/in-only-bytes goes through a bus");
    };
    let tally = SharedTally::default();
    let name = app::sink_name(service_name);
    serve_sink(t, &name, tally.clone())?;
    let conn = rt.block_on(connect(t))?;
    let payload = h::echo_payload(n);
    Ok(Box::new(move || {
        let mut msg = MessageBuilder::new()
            .call(app::SINK_BYTES)
            .with_interface(app::SINK_INTERFACE)
            .on(app::SINK_PATH)
            .at(name.as_str())
            .build();
        msg.body.push_param(payload.as_slice()).wire()?;
        rt.block_on(call_msg(&conn, &msg)).context("SinkBytes")?;
        Ok(app::take_tally(&tally))
    }))
}

/// `call/connections-in-process/<k>`: one `InOutInt` on each connection in turn.
fn connections(rt: Runtime, t: &Transport, k: usize) -> Result<Op> {
    let clients = rt.block_on(async {
        let mut clients = Vec::with_capacity(k);
        for i in 0..k {
            clients.push(Client::new(t).await.with_context(|| format!("connection {i} of {k}"))?);
        }
        anyhow::Ok(clients)
    })?;
    Ok(Box::new(move || {
        rt.block_on(async {
            let mut replies = Vec::with_capacity(k);
            for (i, c) in clients.iter().enumerate() {
                let reply = c.call("InOutInt", |b| b.push_param(h::in_flight_arg(i))).await?;
                replies.push(reply.body.parser().get::<i32>().wire()?);
            }
            Ok(h::in_flight_digest(replies))
        })
    }))
}
