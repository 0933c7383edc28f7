//! How applications use dbus-bytestream 0.1 (issue 31, `harness::ipc::application`): a
//! service the process serves itself (`call/in-only-bytes/<n>`: a second `Connection`
//! that owns the sink's name and answers `read_msg`'s calls with
//! `create_method_return`, driven by a thread of its own, since the calling connection
//! blocks in `call_sync`), K connections of one process called in turn
//! (`call/connections-in-process/<k>`, each a `Connection` of its own), and
//! `proxy/create-call/<server>` against the harness's own server: the library has no
//! proxy, so per op the call is built with `create_method_call`, as every call is, and
//! sent with `call_sync`. `proxy/startup` is answered by `ipc::unsupported_ipc`
//! ([`NO_INTROSPECTION_PARSER`]).

use std::sync::mpsc;

use anyhow::{anyhow, bail, Context, Result};
use dbus_bytestream::connection::Connection;
use dbus_bytestream::message::{self, HEADER_FIELD_INTERFACE, HEADER_FIELD_MEMBER, MESSAGE_TYPE_METHOD_CALL};
use dbus_serialize::types::{BasicValue, Value};
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::proxied::{self as px, ProxyServer};
use harness::ipc::{self as h, raw_server, standard, Transport};

use crate::ipc::{bus_error, call, connect, expect_no_body, header, request_name, single};

type Op = Box<dyn FnMut() -> Result<u64>>;

/// Why `proxy/startup/<n>` does not run.
pub const NO_INTROSPECTION_PARSER: &str = "dbus-bytestream 0.1.4 has no introspection parser and no proxy type: \
     its modules are address, connection, marshal, demarshal and message (no XML code, no XML dependency), so \
     Introspect gives the XML as a string, nothing to build a proxy from";

/// The client side of the application families (`ipc::client`'s arm for `IpcOp::App`).
pub fn client(t: &Transport, op: AppOp) -> Result<Op> {
    match op {
        AppOp::InOnlyBytes(n) => in_only_bytes(t, n),
        AppOp::Connections(k) => connections(t, k),
        AppOp::ProxyCreate(server) => proxy_create(t, server),
        // `ipc::unsupported_ipc` says why (never asked for).
        AppOp::Startup(_) => bail!(NO_INTROSPECTION_PARSER),
    }
}

/// `proxy/create-call/<server>`: no proxy type; the call is built per op.
fn proxy_create(t: &Transport, server: ProxyServer) -> Result<Op> {
    let served = raw_server::serve_proxied_on(t, server)?;
    let conn = connect(t)?;
    Ok(Box::new(move || {
        let msg = message::create_method_call(
            &served.name,
            px::PROXIED_PATH,
            px::PROXIED_INTERFACE,
            px::PROXIED_METHOD,
        );
        expect_no_body(call(&conn, msg, "Void")?, "Void")?;
        Ok(app::take_tally(&served.tally))
    }))
}

/// The bytes of an `ay` value as dbus-bytestream decodes it (one `Value` per byte).
fn bytes_of(v: &Value) -> Result<Vec<u8>> {
    let Value::Array(a) = v else {
        bail!("expected an array, got {v:?}");
    };
    a.objects
        .iter()
        .map(|v| match v {
            Value::BasicValue(BasicValue::Byte(b)) => Ok(*b),
            other => bail!("expected a byte, got {other:?}"),
        })
        .collect()
}

/// Answers `SinkBytes` calls on `conn` until it fails; any other call gets an error.
fn sink_loop(conn: &Connection, tally: &SharedTally) -> Result<()> {
    loop {
        let call = conn.read_msg().map_err(|e| bus_error("reading a call", e))?;
        if call.message_type != MESSAGE_TYPE_METHOD_CALL {
            continue; // NameAcquired and the like
        }
        let reply = if header(&call, HEADER_FIELD_INTERFACE) == Some(app::SINK_INTERFACE)
            && header(&call, HEADER_FIELD_MEMBER) == Some(app::SINK_BYTES)
        {
            let body = call.get_body().map_err(|e| anyhow!("SinkBytes body: {e}"))?;
            app::record(tally, &bytes_of(&single(body)?)?);
            message::create_method_return(call.serial)
        } else {
            message::create_error(standard::UNKNOWN_METHOD, call.serial)
        };
        let reply = match header(&call, dbus_bytestream::message::HEADER_FIELD_SENDER) {
            Some(sender) => reply.add_header(
                dbus_bytestream::message::HEADER_FIELD_DESTINATION,
                dbus_serialize::types::Variant::new(Value::from(sender), "s"),
            ),
            None => reply,
        };
        conn.send(reply).map_err(|e| bus_error("sending a reply", e))?;
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
            let conn = match connect(&t).and_then(|c| request_name(&c, &name).map(|()| c)) {
                Ok(conn) => {
                    let _ = tx.send(Ok(()));
                    conn
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            if let Err(e) = sink_loop(&conn, &tally) {
                eprintln!("the sink's connection failed: {e:#}");
            }
        })
        .context("starting the sink's thread")?;
    rx.recv().context("the sink's thread ended before it was connected")?
}

/// `call/in-only-bytes/<n>`: a `SinkBytes` call to the serving connection's
/// well-known name (`impl Marshal for Vec<u8>`: "ay"), its empty reply awaited.
fn in_only_bytes(t: &Transport, n: usize) -> Result<Op> {
    let Transport::Bus { service_name, .. } = t else {
        bail!("call/in-only-bytes goes through a bus");
    };
    let tally = SharedTally::default();
    let name = app::sink_name(service_name);
    serve_sink(t, &name, tally.clone())?;
    let conn = connect(t)?;
    let payload = h::echo_payload(n);
    Ok(Box::new(move || {
        let msg =
            message::create_method_call(&name, app::SINK_PATH, app::SINK_INTERFACE, app::SINK_BYTES).add_arg(&payload);
        expect_no_body(call(&conn, msg, "SinkBytes")?, "SinkBytes")?;
        Ok(app::take_tally(&tally))
    }))
}

/// `call/connections-in-process/<k>`: one `InOutInt` on each connection in turn.
fn connections(t: &Transport, k: usize) -> Result<Op> {
    let service_name = t.service_name().to_owned();
    let conns = (0..k)
        .map(|i| connect(t).with_context(|| format!("connection {i} of {k}")))
        .collect::<Result<Vec<_>>>()?;
    Ok(Box::new(move || {
        let mut replies = Vec::with_capacity(k);
        for (i, conn) in conns.iter().enumerate() {
            let msg = message::create_method_call(&service_name, h::OBJECT_PATH, h::INTERFACE, "InOutInt")
                .add_arg(&h::in_flight_arg(i));
            let Value::BasicValue(BasicValue::Int32(x)) = single(call(conn, msg, "InOutInt")?)? else {
                bail!("InOutInt: expected an int");
            };
            replies.push(x);
        }
        Ok(h::in_flight_digest(replies))
    }))
}
