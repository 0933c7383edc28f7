//! Issue 31's `proxy/startup/<n>` on GDBus (`harness::ipc::startup`): what a service
//! supervisor does at boot, against the harness's own tree of objects
//! (`harness::ipc::raw_server::serve_startup`, in this process, owning
//! `<service>.Proxied`). One op: Introspect the root (`call_sync`), parse the XML with
//! `DBusNodeInfo::for_xml`, and per child listed in `DBusNodeInfo::nodes` Introspect it,
//! parse it, look the interface and `Id` up in the parsed `DBusInterfaceInfo`, build a
//! `DBusProxy` with that interface info and GDBus's default flags (which load the
//! properties with `GetAll` and subscribe to the object's signals while it is built:
//! bus messages beyond the 4n + 2 of the calls are GDBus's own), call `Id` (GDBus
//! checks the reply against the interface info), drop the proxy.

use anyhow::{bail, Context, Result};
use gio::prelude::*;
use gio::{DBusCallFlags, DBusNodeInfo, DBusProxy, DBusProxyFlags};
use glib::VariantTy;
use harness::ipc::proxied as px;
use harness::ipc::startup::{self as st, StartupServer};
use harness::ipc::{raw_server, Transport};

use super::{connect, NO_CANCEL, TIMEOUT_MS};

type Op = Box<dyn FnMut() -> Result<u64>>;

/// The client of `proxy/startup/<n>` against the harness's tree of `n` objects.
pub fn client(t: &Transport, n: usize) -> Result<Op> {
    let Transport::Bus {
        socket, service_name, ..
    } = t
    else {
        bail!("proxy/startup goes through a bus");
    };
    let (name, tally) = raw_server::serve_startup(socket, &px::proxied_name(service_name), n, StartupServer::Sound)?;
    let conn = connect(t)?;
    Ok(Box::new(move || {
        let root = introspect(&conn, &name, st::STARTUP_ROOT)?;
        let mut ids = Vec::new();
        for child in root.nodes() {
            let child = child.path().context("a child node without a name")?;
            let path = format!("{}/{child}", st::STARTUP_ROOT);
            let node = introspect(&conn, &name, &path)?;
            let Some(info) = node.lookup_interface(st::STARTUP_INTERFACE) else {
                bail!("{path} has no interface {}", st::STARTUP_INTERFACE);
            };
            if info.lookup_method(st::STARTUP_METHOD).is_none() {
                bail!("{path} has no method {}.{}", st::STARTUP_INTERFACE, st::STARTUP_METHOD);
            }
            let proxy = DBusProxy::new_sync(
                &conn,
                DBusProxyFlags::NONE,
                Some(&info),
                Some(name.as_str()),
                &path,
                info.name(),
                NO_CANCEL,
            )
            .with_context(|| format!("creating the DBusProxy of {path}"))?;
            let reply = proxy
                .call_sync(st::STARTUP_METHOD, None, DBusCallFlags::NONE, TIMEOUT_MS, NO_CANCEL)
                .with_context(|| format!("Id of {path}"))?;
            let (id,): (u32,) = reply.get().with_context(|| format!("Id of {path} replied {reply}"))?;
            ids.push(id);
        }
        Ok(st::op_digest(ids, st::take_tally(&tally)))
    }))
}

/// Introspects the object at `path` of `dest` and parses the XML.
fn introspect(conn: &gio::DBusConnection, dest: &str, path: &str) -> Result<DBusNodeInfo> {
    let reply = conn
        .call_sync(
            Some(dest),
            path,
            "org.freedesktop.DBus.Introspectable",
            "Introspect",
            None,
            Some(VariantTy::new("(s)").expect("a valid type")),
            DBusCallFlags::NONE,
            TIMEOUT_MS,
            NO_CANCEL,
        )
        .with_context(|| format!("Introspect {path}"))?;
    let (xml,): (String,) = reply.get().context("Introspect replied no string")?;
    DBusNodeInfo::for_xml(&xml).with_context(|| format!("parsing the introspection of {path}"))
}
