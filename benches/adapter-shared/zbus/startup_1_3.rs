//! `proxy/startup/<n>` on zbus 1, 2 and 3 (issue 31, item 6; the canon is
//! `harness::ipc::startup`), compiled as `ipc::apps::startup` of adapter-zbus-2 and -3
//! through apps_2_3.rs and as `startup` of adapter-zbus-1: what a service supervisor does
//! at boot, with the blocking API (each includer's `ipc::startup_api` names it: zbus 2 and
//! 3's `zbus::blocking::{Connection, Proxy}`, zbus 1's synchronous `zbus::{Connection,
//! Proxy}`; the calls are the same text). zbus 1 to 3 carry their own introspection
//! parser, `zbus::xml` (serde-xml-rs, behind zbus's `xml` feature, which the three adapters
//! turn on; zbus 4 to 6 moved it into the separate `zbus_xml` crate, see startup.rs). One
//! operation: Introspect the root through a blocking `Proxy` of
//! `org.freedesktop.DBus.Introspectable`,
//! `zbus::xml::Node::from_reader` to find its children, then per child Introspect it,
//! parse it, find the interface and its `Id` method (one `u` out) in the parsed
//! `Interface`, build a `Proxy` for that interface (zbus 2 and 3's defaults: properties
//! cached lazily; zbus 1 caches none) and call `Id`.

use anyhow::{bail, ensure, Context, Result};
use harness::ipc::proxied as px;
use harness::ipc::startup::{self as st, StartupServer};
use harness::ipc::{raw_server, Transport};

use crate::ipc::startup_api::{connect, Connection, Proxy};

const INTROSPECTABLE: &str = "org.freedesktop.DBus.Introspectable";

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
    let conn = connect(t).context("connecting the client")?;
    Ok(Box::new(move || {
        let ids = start_up(&conn, &name)?;
        Ok(st::op_digest(ids, st::take_tally(&tally)))
    }))
}

/// Introspects the object at `path` of `dest` and parses the XML.
fn introspect(conn: &Connection, dest: &str, path: &str) -> Result<zbus::xml::Node> {
    let proxy = Proxy::new(conn, dest, path, INTROSPECTABLE)?;
    let xml: String = proxy
        .call("Introspect", &())
        .with_context(|| format!("Introspect {path}"))?;
    zbus::xml::Node::from_reader(xml.as_bytes()).with_context(|| format!("parsing the introspection of {path}"))
}

/// One operation: the root, then each child it lists; the Ids the children returned.
fn start_up(conn: &Connection, dest: &str) -> Result<Vec<u32>> {
    let root = introspect(conn, dest, st::STARTUP_ROOT)?;
    let mut ids = Vec::new();
    for child in root.nodes() {
        let child = child.name().context("a child node without a name")?;
        let path = format!("{}/{child}", st::STARTUP_ROOT);
        let node = introspect(conn, dest, &path)?;
        let mut found = None;
        for iface in node.interfaces() {
            if iface.name() != st::STARTUP_INTERFACE {
                continue;
            }
            for method in iface.methods() {
                let outs: Vec<&str> = method
                    .args()
                    .iter()
                    .filter(|a| a.direction() == Some("out"))
                    .map(|a| a.ty())
                    .collect();
                if method.name() == st::STARTUP_METHOD && outs == ["u"] {
                    found = Some((iface.name().to_owned(), method.name().to_owned()));
                }
            }
        }
        let Some((interface, method)) = found else {
            bail!("{path} has no {}.{}() -> u", st::STARTUP_INTERFACE, st::STARTUP_METHOD);
        };
        let proxy = Proxy::new(conn, dest, path.as_str(), interface.as_str())?;
        let id: u32 = proxy.call(method.as_str(), &())?;
        ids.push(id);
    }
    ensure!(!ids.is_empty(), "the root lists no children");
    Ok(ids)
}
