//! `proxy/startup/<n>` on zbus 4, 5, 6 and 6 on Tokio (issue 31, item 6; the canon is
//! `harness::ipc::startup`), compiled by each through adapter-shared/zbus/apps.rs: what a
//! service supervisor does at boot. zbus 4 to 6 parse introspection XML with the
//! separate `zbus_xml` crate (each adapter depends on the major that matches its zbus:
//! 4.0 for zbus 4, 5.2 for zbus 5, 6.0 for zbus 6), so one operation is: Introspect the
//! root through a `zbus::Proxy` of `org.freedesktop.DBus.Introspectable`
//! (the spelling common to zbus 4 to 6; `fdo::IntrospectableProxy`'s builder differs), `zbus_xml::Node::from_reader` to find its
//! children, then per child Introspect it, parse it, find the interface and its `Id`
//! method (one `u` out) in the parsed `Interface`, build a `zbus::Proxy` for that
//! interface (zbus's defaults: `CacheProperties::Lazily`) and call `Id`.

use anyhow::{bail, ensure, Context, Result};
use harness::ipc::proxied as px;
use harness::ipc::startup::{self as st, StartupServer};
use harness::ipc::{raw_server, Transport};

use crate::ipc::for_apps::{block_on, connection};

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
    let conn = connection(t).context("connecting the client")?;
    Ok(Box::new(move || {
        let ids = block_on(start_up(&conn, &name))?;
        Ok(st::op_digest(ids, st::take_tally(&tally)))
    }))
}

/// Introspects the object at `path` of `dest` and parses the XML.
async fn introspect(conn: &zbus::Connection, dest: &str, path: &str) -> Result<zbus_xml::Node<'static>> {
    let proxy = zbus::Proxy::new(conn, dest.to_owned(), path.to_owned(), INTROSPECTABLE).await?;
    let xml: String = proxy
        .call("Introspect", &())
        .await
        .with_context(|| format!("Introspect {path}"))?;
    zbus_xml::Node::from_reader(xml.as_bytes()).with_context(|| format!("parsing the introspection of {path}"))
}

/// One operation: the root, then each child it lists; the Ids the children returned.
async fn start_up(conn: &zbus::Connection, dest: &str) -> Result<Vec<u32>> {
    let root = introspect(conn, dest, st::STARTUP_ROOT).await?;
    let mut ids = Vec::new();
    for child in root.nodes() {
        let child = child.name().context("a child node without a name")?;
        let path = format!("{}/{child}", st::STARTUP_ROOT);
        let node = introspect(conn, dest, &path).await?;
        let mut found = None;
        for iface in node.interfaces() {
            if iface.name().as_str() != st::STARTUP_INTERFACE {
                continue;
            }
            for method in iface.methods() {
                let outs: Vec<String> = method
                    .args()
                    .iter()
                    .filter(|a| matches!(a.direction(), Some(zbus_xml::ArgDirection::Out)))
                    .map(|a| a.ty().to_string())
                    .collect();
                if method.name().as_str() == st::STARTUP_METHOD && outs == ["u"] {
                    found = Some((iface.name().to_string(), method.name().to_string()));
                }
            }
        }
        let Some((interface, method)) = found else {
            bail!("{path} has no {}.{}() -> u", st::STARTUP_INTERFACE, st::STARTUP_METHOD);
        };
        let proxy = zbus::Proxy::new(conn, dest.to_owned(), path, interface).await?;
        let id: u32 = proxy.call(method.as_str(), &()).await?;
        ids.push(id);
    }
    ensure!(!ids.is_empty(), "the root lists no children");
    Ok(ids)
}
