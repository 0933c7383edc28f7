//! The fault adapter's application families (issue 31, `harness::ipc::application`) on
//! the `bus` crate's raw client: `call/in-only-bytes/<n>` served by a second connection
//! of the process on a thread of its own, and `call/connections-in-process/<k>`.
//! `proxy/create-call/<server>` calls the harness's own server. `fault-short-work` does
//! less than the op asks (one byte short; the last connection not called; no call), so
//! that the runner's verification must fail every cell.

use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result};
use bus::raw_client::RawConnection;
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::{self as h, proxied as px, raw_server};
use harness::wire::Value;

type Op = Box<dyn FnMut() -> Result<u64>>;

fn hello(socket: &std::path::Path) -> Result<(RawConnection, String)> {
    let mut c = RawConnection::connect(socket, Duration::from_secs(10))?;
    let name = c.hello()?;
    Ok((c, name))
}

/// The client of `op` on the bus at `socket` (service `service`); `short`: the fault.
pub fn client(socket: &std::path::Path, service: &str, op: AppOp, short: bool) -> Result<Op> {
    match op {
        AppOp::ProxyCreate(server) => {
            let served = raw_server::serve_proxied(socket, server)?;
            let (mut c, _) = hello(socket)?;
            Ok(Box::new(move || {
                if !short {
                    c.call(
                        &served.unique_name,
                        px::PROXIED_PATH,
                        px::PROXIED_INTERFACE,
                        px::PROXIED_METHOD,
                        &[],
                    )?;
                }
                Ok(app::take_tally(&served.tally))
            }))
        }
        AppOp::InOnlyBytes(n) => {
            let tally = SharedTally::default();
            let name = serve_sink(socket, tally.clone())?;
            let (mut c, _) = hello(socket)?;
            let sent = if short { n.saturating_sub(1) } else { n };
            let bytes = h::echo_payload(sent).into_iter().map(Value::Byte).collect();
            let args = vec![Value::Array("y".into(), bytes)];
            Ok(Box::new(move || {
                c.call(&name, app::SINK_PATH, app::SINK_INTERFACE, app::SINK_BYTES, &args)?;
                Ok(app::take_tally(&tally))
            }))
        }
        AppOp::Connections(k) => {
            let mut conns = (0..k)
                .map(|_| hello(socket).map(|(c, _)| c))
                .collect::<Result<Vec<_>>>()?;
            let (service, called) = (service.to_string(), if short { k.saturating_sub(1) } else { k });
            Ok(Box::new(move || {
                let mut replies = Vec::with_capacity(k);
                for (i, c) in conns.iter_mut().enumerate().take(called) {
                    let arg = [Value::I32(h::in_flight_arg(i))];
                    let reply = c.call(&service, h::OBJECT_PATH, h::INTERFACE, "InOutInt", &arg)?;
                    match reply.values.first() {
                        Some(Value::I32(v)) => replies.push(*v),
                        other => anyhow::bail!("InOutInt replied {other:?}"),
                    }
                }
                Ok(h::in_flight_digest(replies))
            }))
        }
    }
}

/// `SinkBytes` answered by a second connection on a thread of its own; its unique name.
fn serve_sink(socket: &std::path::Path, tally: SharedTally) -> Result<String> {
    let (mut c, name) = hello(socket)?;
    c.wait_forever()?;
    let (tx, rx) = mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("sink".into())
        .spawn(move || {
            let _ = tx.send(());
            loop {
                let Ok(call) = c.next_call() else { return };
                let bytes: Vec<u8> = match call.values.first() {
                    Some(Value::Array(_, b)) => b.iter().map(|v| if let Value::Byte(x) = v { *x } else { 0 }).collect(),
                    _ => Vec::new(),
                };
                app::record(&tally, &bytes);
                if c.reply(&call, &[]).is_err() {
                    return;
                }
            }
        })
        .context("starting the sink's thread")?;
    rx.recv().context("the sink's thread did not start")?;
    Ok(name)
}
