//! The fault adapter's application families (issue 31, `harness::ipc::application`) on
//! the `bus` crate's raw client: `call/in-only-bytes/<n>` served by a second connection
//! of the process on a thread of its own, and `call/connections-in-process/<k>`.
//! `proxy/create-call/<server>` calls the harness's own server. The sink and the
//! proxied object own well-known names under the adapter's service name and are called
//! by them, as the bus policy requires. `fault-short-work` does less than the op asks
//! (one byte short; the last connection not called; no call); `fault-wrong-reply`'s
//! sink records the bytes with the first one changed (a server that corrupts what it
//! got) and its proxy makes the call twice: the runner's verification must fail each.
//! `proxy/startup/<n>` meets a broken server instead: `fault-short-work`'s leaves a
//! child out, `fault-wrong-reply`'s answers one `Id` wrong.

use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, Result};
use bus::raw_client::RawConnection;
use harness::ipc::application::{self as app, AppOp, SharedTally};
use harness::ipc::{self as h, proxied as px, raw_server, startup as st};
use harness::wire::Value;

type Op = Box<dyn FnMut() -> Result<u64>>;

fn hello(socket: &std::path::Path) -> Result<(RawConnection, String)> {
    let mut c = RawConnection::connect(socket, Duration::from_secs(10))?;
    let name = c.hello()?;
    Ok((c, name))
}

/// What the application families' code of this fault adapter gets wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppFault {
    /// Nothing.
    None,
    /// `fault-short-work`: the client does less than the op asks.
    ShortWork,
    /// `fault-wrong-reply`: the sink corrupts the first byte it got; the proxy calls twice.
    WrongReply,
}

/// The client of `op` on the bus at `socket` (service `service`), with `fault`.
pub fn client(socket: &std::path::Path, service: &str, op: AppOp, fault: AppFault) -> Result<Op> {
    let short = fault == AppFault::ShortWork;
    match op {
        AppOp::ProxyCreate(server) => {
            let served = raw_server::serve_proxied(socket, &px::proxied_name(service), server)?;
            let (mut c, _) = hello(socket)?;
            let calls = match fault {
                AppFault::None => 1,
                AppFault::ShortWork => 0,
                AppFault::WrongReply => 2,
            };
            Ok(Box::new(move || {
                for _ in 0..calls {
                    c.call(
                        &served.name,
                        px::PROXIED_PATH,
                        px::PROXIED_INTERFACE,
                        px::PROXIED_METHOD,
                        &[],
                    )?;
                }
                Ok(app::take_tally(&served.tally))
            }))
        }
        AppOp::Startup(n) => startup(socket, service, n, fault),
        AppOp::InOnlyBytes(n) => {
            let tally = SharedTally::default();
            let name = app::sink_name(service);
            serve_sink(socket, &name, tally.clone(), fault == AppFault::WrongReply)?;
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

/// `proxy/startup/<n>` on the raw client: the root introspected, its children found by
/// [`st::child_names_unparsed`], each introspected and called. `fault-short-work`'s
/// server leaves the last child out of the root's XML, `fault-wrong-reply`'s answers a
/// wrong `Id` (broken servers): the runner's verification must fail both.
fn startup(socket: &std::path::Path, service: &str, n: usize, fault: AppFault) -> Result<Op> {
    let server = match fault {
        AppFault::None => st::StartupServer::Sound,
        AppFault::ShortWork => st::StartupServer::OmitLastChild,
        AppFault::WrongReply => st::StartupServer::WrongId,
    };
    let (name, tally) = raw_server::serve_startup(socket, &px::proxied_name(service), n, server)?;
    let (mut c, _) = hello(socket)?;
    let introspect = "org.freedesktop.DBus.Introspectable";
    Ok(Box::new(move || {
        let root = c.call(&name, st::STARTUP_ROOT, introspect, "Introspect", &[])?;
        let xml = root
            .values
            .first()
            .and_then(Value::as_str)
            .context("Introspect gave no XML")?;
        let mut ids = Vec::new();
        for child in st::child_names_unparsed(xml) {
            let path = format!("{}/{child}", st::STARTUP_ROOT);
            let xml = c.call(&name, &path, introspect, "Introspect", &[])?;
            let xml = xml
                .values
                .first()
                .and_then(Value::as_str)
                .context("Introspect gave no XML")?;
            anyhow::ensure!(
                xml.contains(st::STARTUP_INTERFACE),
                "{path} lacks {}",
                st::STARTUP_INTERFACE
            );
            match c
                .call(&name, &path, st::STARTUP_INTERFACE, st::STARTUP_METHOD, &[])?
                .values
                .first()
            {
                Some(Value::U32(id)) => ids.push(*id),
                other => anyhow::bail!("Id replied {other:?}"),
            }
        }
        Ok(st::op_digest(ids, st::take_tally(&tally)))
    }))
}

/// `SinkBytes` answered by a second connection that owns `name`, on a thread of its
/// own; `corrupt`: it records the bytes with the first one changed.
fn serve_sink(socket: &std::path::Path, name: &str, tally: SharedTally, corrupt: bool) -> Result<()> {
    let (mut c, _) = hello(socket)?;
    let owned = c.bus_call("RequestName", &[Value::Str(name.into()), Value::U32(4)])?;
    anyhow::ensure!(
        owned.values.first() == Some(&Value::U32(1)),
        "RequestName {name}: {:?}, not the primary owner",
        owned.values
    );
    c.wait_forever()?;
    let (tx, rx) = mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("sink".into())
        .spawn(move || {
            let _ = tx.send(());
            loop {
                let Ok(call) = c.next_call() else { return };
                let mut bytes: Vec<u8> = match call.values.first() {
                    Some(Value::Array(_, b)) => b.iter().map(|v| if let Value::Byte(x) = v { *x } else { 0 }).collect(),
                    _ => Vec::new(),
                };
                if let (true, Some(first)) = (corrupt, bytes.first_mut()) {
                    *first ^= 0xff;
                }
                app::record(&tally, &bytes);
                if c.reply(&call, &[]).is_err() {
                    return;
                }
            }
        })
        .context("starting the sink's thread")?;
    rx.recv().context("the sink's thread did not start")?;
    Ok(())
}
