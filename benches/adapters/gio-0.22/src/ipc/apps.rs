//! Issue 31's `proxy/create-call/<server>` on GDBus (`harness::ipc::application`): per
//! op a new `DBusProxy` of the harness's own server (`harness::ipc::raw_server`, in
//! this process, owning `<service>.Proxied`), built with GDBus's default flags, one
//! `Void` through it, dropped. GDBus's defaults load the properties (`GetAll`) and
//! subscribe to the object's signals and to its name's owner when the proxy is
//! built; what that costs shows in the cell's bus messages per op. The other
//! application families are not written here yet (`implements` says no);
//! `proxy/startup/<n>` is in `startup.rs`.

use anyhow::{bail, Context, Result};
use gio::prelude::*;
use gio::{DBusCallFlags, DBusProxy, DBusProxyFlags};
use harness::ipc::application::{self as app, AppOp};
use harness::ipc::proxied::{self as px, ProxyServer};
use harness::ipc::{raw_server, Transport};

use super::{connect, NO_CANCEL, TIMEOUT_MS};

type Op = Box<dyn FnMut() -> Result<u64>>;

/// The client side of the application families this adapter has code for.
pub fn client(t: &Transport, op: AppOp) -> Result<Op> {
    match op {
        AppOp::ProxyCreate(server) => proxy_create(t, server),
        AppOp::Startup(n) => super::startup::client(t, n),
        AppOp::InOnlyBytes(_) | AppOp::Connections(_) => {
            bail!(harness::ipc::not_implemented(harness::ipc::IpcOp::App(op)))
        }
    }
}

fn proxy_create(t: &Transport, server: ProxyServer) -> Result<Op> {
    let Transport::Bus {
        socket, service_name, ..
    } = t
    else {
        bail!("proxy/create-call goes through a bus");
    };
    let served = raw_server::serve_proxied(socket, &px::proxied_name(service_name), server)?;
    let conn = connect(t)?;
    Ok(Box::new(move || {
        let proxy = DBusProxy::new_sync(
            &conn,
            DBusProxyFlags::NONE,
            None,
            Some(served.name.as_str()),
            px::PROXIED_PATH,
            px::PROXIED_INTERFACE,
            NO_CANCEL,
        )
        .context("creating the DBusProxy")?;
        proxy
            .call_sync(px::PROXIED_METHOD, None, DBusCallFlags::NONE, TIMEOUT_MS, NO_CANCEL)
            .context("Void")?;
        drop(proxy);
        Ok(app::take_tally(&served.tally))
    }))
}
