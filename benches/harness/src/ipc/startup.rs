//! The tree of objects of `proxy/startup/<n>` (issue 31, item 6: what a service
//! supervisor does at boot, as dbus-fast's own `test_proxy.py` benchmark models
//! it), as data: a root object whose introspection lists n child nodes, each
//! child with one interface and one method `Id` returning its index. Served,
//! like [`super::proxied`]'s object, by the harness's own raw connection
//! ([`super::raw_server::serve_startup`]) inside the client process under the
//! well-known name [`super::proxied::proxied_name`], so every library meets the
//! same server, and the server tallies what it was asked.
//!
//! One operation: Introspect the root, parse its XML the library's way to find
//! the n children, then per child Introspect it, parse the XML into the
//! library's introspection structures, build a proxy from them, and call `Id`.
//! **Verified** ([`op_digest`]): the n Ids the client got (in any order) and the
//! server's tally of exactly n + 1 Introspect calls and n `Id` calls since the
//! last operation, so a library that skips introspection or a call fails.

use std::sync::{Arc, Mutex};

use super::introspect::{DOCTYPE, INTROSPECTABLE, INTROSPECTABLE_XML, PEER, PROPERTIES, PROPERTIES_XML};
use super::proxied::Reply;
use super::standard::{UNKNOWN_METHOD, UNKNOWN_OBJECT};
use crate::digest::Digest;
use crate::wire::Value;

/// Sizes of `proxy/startup/<n>`: 20 objects (smoke, quick), 200 (standard, full).
pub const STARTUP_SIZES: [usize; 2] = [20, 200];
/// The root object: its introspection lists the children and nothing else.
pub const STARTUP_ROOT: &str = "/io/killing/spark/startup";
/// The interface of every child.
pub const STARTUP_INTERFACE: &str = "io.killing.spark.Startup";
/// Its one method: no arguments, `u` out, the child's index.
pub const STARTUP_METHOD: &str = "Id";

/// The node name of child `i` (relative to the root, as the XML lists it).
pub fn child_name(i: usize) -> String {
    format!("o{i}")
}

/// The object path of child `i`.
pub fn child_path(i: usize) -> String {
    format!("{STARTUP_ROOT}/{}", child_name(i))
}

/// How the server answers: soundly, or broken for the tests that show
/// verification failing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartupServer {
    /// Every child listed, every `Id` right.
    Sound,
    /// The root's XML leaves out the last child (a broken server).
    OmitLastChild,
    /// Child 0's `Id` answers 1 instead of 0 (a broken server).
    WrongId,
}

/// The root's introspection XML with `n` children (`server` may leave one out).
pub fn root_xml(n: usize, server: StartupServer) -> String {
    let listed = if server == StartupServer::OmitLastChild {
        n.saturating_sub(1)
    } else {
        n
    };
    let children: String = (0..listed).map(child_node_xml).collect();
    format!("{DOCTYPE}<node>\n{INTROSPECTABLE_XML}{PROPERTIES_XML}{children}</node>\n")
}

/// The line of the root's XML that lists child `i`.
pub fn child_node_xml(i: usize) -> String {
    format!("  <node name=\"{}\"/>\n", child_name(i))
}

/// A child's introspection XML: the interface with `Id`, then the standard
/// interfaces a real server lists (Introspectable, Peer, Properties).
pub fn child_xml() -> String {
    format!(
        "{DOCTYPE}<node>\n  <interface name=\"{STARTUP_INTERFACE}\">\n    <method name=\"{STARTUP_METHOD}\">\n      \
         <arg name=\"id\" type=\"u\" direction=\"out\"/>\n    </method>\n  </interface>\n\
         {INTROSPECTABLE_XML}{PROPERTIES_XML}</node>\n"
    )
}

/// What the server answered since the client last took it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StartupTally {
    /// `Introspect` calls, root and children together.
    pub introspects: usize,
    /// `Id` calls.
    pub ids: usize,
}

/// The tally as the server thread and the timed client share it.
pub type SharedStartupTally = Arc<Mutex<StartupTally>>;

/// Takes the tally (the client, after its last reply); it starts again from zero.
pub fn take_tally(tally: &SharedStartupTally) -> StartupTally {
    std::mem::take(&mut *tally.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
}

fn count(tally: &SharedStartupTally, f: impl FnOnce(&mut StartupTally)) {
    f(&mut tally.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
}

/// The child index of `path`, if it names one of the `n` children.
fn child_index(path: &str, n: usize) -> Option<usize> {
    let i: usize = path.strip_prefix(STARTUP_ROOT)?.strip_prefix("/o")?.parse().ok()?;
    (i < n && child_path(i) == path).then_some(i)
}

/// The answer of the server of `n` children to a call of `interface.member` on
/// `path` (a call without INTERFACE means the first interface that has the
/// member), counted in `tally`.
pub fn answer(
    n: usize,
    server: StartupServer,
    tally: &SharedStartupTally,
    path: &str,
    interface: Option<&str>,
    member: &str,
) -> Reply {
    let interface = interface.unwrap_or(match member {
        "Introspect" => INTROSPECTABLE,
        "Ping" | "GetMachineId" => PEER,
        "Get" | "GetAll" | "Set" => PROPERTIES,
        _ => STARTUP_INTERFACE,
    });
    let ret = |values| Reply::Return { values, counted: false };
    let error = |name, message| Reply::Error { name, message };
    let child = child_index(path, n);
    if path != STARTUP_ROOT && child.is_none() {
        return error(UNKNOWN_OBJECT, format!("no object at {path}"));
    }
    match (interface, member, child) {
        (INTROSPECTABLE, "Introspect", _) => {
            count(tally, |t| t.introspects += 1);
            ret(vec![Value::Str(match child {
                None => root_xml(n, server),
                Some(_) => child_xml(),
            })])
        }
        (STARTUP_INTERFACE, STARTUP_METHOD, Some(i)) => {
            count(tally, |t| t.ids += 1);
            let id = if server == StartupServer::WrongId && i == 0 {
                1
            } else {
                i as u32
            };
            ret(vec![Value::U32(id)])
        }
        (PEER, "Ping", _) => ret(Vec::new()),
        (PROPERTIES, "GetAll", _) => ret(vec![Value::Array("{sv}".into(), Vec::new())]),
        (i, m, _) => error(UNKNOWN_METHOD, format!("no method {i}.{m} at {path}")),
    }
}

/// The digest of one operation: the Ids the client received, in any order
/// (sorted here), then the server's tally.
pub fn op_digest(ids: impl IntoIterator<Item = u32>, tally: StartupTally) -> u64 {
    let mut ids: Vec<u32> = ids.into_iter().collect();
    ids.sort_unstable();
    let mut d = Digest::new();
    d.len(ids.len());
    for id in ids {
        d.u64(u64::from(id));
    }
    d.len(tally.introspects);
    d.len(tally.ids);
    d.finish()
}

/// What a sound operation over `n` children digests to: Ids 0..n, n + 1
/// Introspects, n `Id` calls.
pub fn expected_digest(n: usize) -> u64 {
    op_digest(
        (0..n as u32).collect::<Vec<_>>(),
        StartupTally {
            introspects: n + 1,
            ids: n,
        },
    )
}

/// The node names a root's XML lists, found without an XML library (for
/// clients whose library has no parser: the fault adapter); names in document
/// order.
pub fn child_names_unparsed(xml: &str) -> Vec<String> {
    xml.split("<node name=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next().map(str::to_string))
        .collect()
}
