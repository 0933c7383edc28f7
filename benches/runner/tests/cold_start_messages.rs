//! `property/cold-start` counts the bus messages of one whole cold start (a
//! monitored extra process in the cell's first round), so a library that
//! introspects before it reads shows it: ruby-dbus 0.16 calls Introspect,
//! zbus 6 does not (the published Ruby/Rust comparison found this only in a
//! bus monitor). Not that ruby-dbus sends more messages: zbus' proxy adds
//! match rules and asks GetNameOwner before its one GetAll.

use crate::common::*;
use harness::results::{CellStatus, IpcCosts, ResultsFile};

const COLD_START: &str = "property/cold-start";

fn cold_start_costs<'a>(r: &'a ResultsFile, adapter: &str, bus: &str) -> Option<&'a IpcCosts> {
    let c = cell(r, adapter, COLD_START, bus);
    assert_eq!(c.status(), CellStatus::Ok, "{c:?}");
    c.measurement().unwrap().costs.as_ref()
}

fn introspects(c: &IpcCosts) -> bool {
    c.bus_messages_by_kind
        .keys()
        .any(|k| k.starts_with("method_call org.freedesktop.DBus.Introspectable.Introspect"))
}

#[test]
fn a_cold_start_shows_the_bus_messages_of_one_process() {
    let out = TempDir::new("cold-start-messages");
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            "zbus-6,ruby-dbus-0.16",
            "--scenarios",
            COLD_START,
            "--buses",
            "dbus-daemon,p2p",
        ],
    );

    let zbus = cold_start_costs(&r, "zbus-6", "dbus-daemon").expect("zbus-6 cold start: no bus messages counted");
    // Where the build mode cannot have ruby-dbus (Nix), its cells are
    // unsupported with the matrix's reason, and zbus is checked alone.
    let ruby = match unavailable_here("ruby-dbus-0.16") {
        Some(why) => {
            assert_unavailable_cells(&r, "ruby-dbus-0.16", &why);
            None
        }
        None => Some(
            cold_start_costs(&r, "ruby-dbus-0.16", "dbus-daemon")
                .expect("ruby-dbus-0.16 cold start: no bus messages counted"),
        ),
    };
    let measured = std::iter::once(("zbus-6", zbus)).chain(ruby.map(|c| ("ruby-dbus-0.16", c)));
    for (id, c) in measured {
        assert_eq!(c.operations, 1, "{id}: {c:?}");
        let total: f64 = c.bus_messages_by_kind.values().sum();
        assert_eq!(c.bus_messages_per_op, Some(total), "{id}: {c:?}");
        // Every connection says Hello, and the property is read from the server.
        let hello = "method_call org.freedesktop.DBus.Hello (to the bus)";
        assert_eq!(c.bus_messages_by_kind.get(hello), Some(&1.0), "{id}: {c:?}");
        assert!(
            c.bus_messages_by_kind
                .keys()
                .any(|k| k.starts_with("method_call org.freedesktop.DBus.Properties.Get")
                    && k.ends_with("(between connections)")),
            "{id} read the property without Get or GetAll: {c:?}"
        );
        assert!(c.bus_bytes_per_op.unwrap() > 100.0, "{id}: {c:?}");
    }
    assert!(!introspects(zbus), "zbus-6 introspected: {zbus:?}");
    // ruby-dbus reads with Get; zbus' proxy with one GetAll, which it caches.
    let calls = |c: &IpcCosts, member: &str| {
        c.bus_messages_by_kind
            .get(&format!(
                "method_call org.freedesktop.DBus.Properties.{member} (between connections)"
            ))
            .copied()
    };
    assert_eq!(calls(zbus, "GetAll"), Some(1.0), "{zbus:?}");
    if let Some(ruby) = ruby {
        assert!(introspects(ruby), "ruby-dbus did not introspect: {ruby:?}");
        assert_eq!(calls(ruby, "Get"), Some(1.0), "{ruby:?}");
        // Not more messages (zbus adds match rules and GetNameOwner), but more
        // bytes: the introspection XML crosses the bus once per ruby-dbus process.
        assert!(
            ruby.bus_bytes_per_op.unwrap() > zbus.bus_bytes_per_op.unwrap(),
            "ruby-dbus {ruby:?}, zbus {zbus:?}"
        );
    }
    // Peer to peer there is no bus to count.
    let p2p = cold_start_costs(&r, "zbus-6", "p2p");
    assert!(p2p.is_none_or(|c| c.bus_messages_per_op.is_none()), "{p2p:?}");
}
