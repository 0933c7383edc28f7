//! `proxy/startup/<n>` (issue 31, item 6; `harness/src/ipc/startup.rs`): a root
//! introspected, then each of its n children introspected, parsed, proxied and
//! called once. Values where an adapter has code for it (zbus 4 to 6 through
//! `zbus_xml`, zbus 1 to 3 through `zbus::xml`), with the bus messages of exactly the n + 1 Introspects and n calls
//! where the library adds nothing; honest reasons elsewhere; and verification
//! failing on a broken server (the fault adapter's `fault-short-work` server leaves
//! a child out of the root's XML, `fault-wrong-reply`'s answers one `Id` wrong).

use crate::common::*;
use harness::results::{CellStatus, ResultsFile};

const N20: &str = "proxy/startup/20";
/// Every Introspect and `Id` call and its reply, as the monitor sees them: 2 (n + 1) + 2 n.
const MESSAGES_20: f64 = 82.0;
/// zbus-4 and zbus-6-tokio compile the same `adapter-shared/zbus/startup.rs` as zbus-5 and
/// zbus-6; zbus-3 and zbus-1 `adapter-shared/zbus/startup_1_3.rs` (`zbus::xml`), which zbus-2
/// compiles too (its own lockfile, not built here).
const ZBUS: [&str; 6] = ["zbus-4", "zbus-5", "zbus-6", "zbus-6-tokio", "zbus-3", "zbus-1"];

#[test]
fn startup_fails_on_a_server_that_leaves_a_child_out_or_answers_a_wrong_id() {
    let buses = ["dbus-daemon", "busd"];
    let setup = fault_setup_with_buses(
        "startup-fault",
        &["fault-ok", "fault-short-work", "fault-wrong-reply"],
        &[N20],
        &buses,
    );
    let r = setup.smoke_run_with_failed_cells();
    for bus in buses {
        // The sound server passes, with the n + 1 Introspects and n calls on the bus.
        assert_eq!(status_on(&r, "fault-ok", N20, bus), CellStatus::Ok, "fault-ok {bus}");
        messages_are_the_calls(&r, "fault-ok", bus);
        for broken in ["fault-short-work", "fault-wrong-reply"] {
            assert_eq!(status_on(&r, broken, N20, bus), CellStatus::Failed, "{broken} {bus}");
            let why = reason_of(&r, broken, N20, bus);
            assert!(
                why.contains("verification failed: received digest"),
                "{broken} {bus}: {why}"
            );
        }
    }
}

/// Bus messages per op of `adapter`'s start-up cell on `bus`: the Introspects, the
/// calls and their replies, nothing else.
fn messages_are_the_calls(r: &ResultsFile, adapter: &str, bus: &str) {
    let m = cell(r, adapter, N20, bus).measurement().unwrap();
    let costs = m
        .costs
        .as_ref()
        .unwrap_or_else(|| panic!("{adapter} {bus}: no costs: {:?}", m.verification_notes));
    let n = costs
        .bus_messages_per_op
        .unwrap_or_else(|| panic!("{adapter} {bus}: bus messages not counted"));
    assert!(
        (n - MESSAGES_20).abs() <= 0.5,
        "{adapter} {N20} {bus}: {n} messages per op, expected {MESSAGES_20}"
    );
}

/// GDBus: `DBusNodeInfo::for_xml`, a `DBusProxy` with the parsed interface info.
const GIO: &str = "gio-0.22";
/// Libraries without a run-time introspection parser: their adapters give the reason.
const NO_PARSER: [(&str, &str); 9] = [
    ("dbus-0.9", "dbus-rs 0.9.12 has no run-time introspection parser"),
    ("jeepney-0.8", "jeepney 0.8 has no run-time introspection parser"),
    (
        "dbus-tokio-0.7",
        "dbus-tokio 0.7.6 drives dbus-rs's nonblock API, which parses no introspection either: \
         dbus-rs 0.9.12 has no run-time introspection parser",
    ),
    ("dbus-async-2", "dbus-async 2.0.0 has no introspection parser"),
    ("rustbus-0.19", "rustbus 0.19.3 has no introspection parser"),
    (
        "systemd-0.11",
        "sd-bus (systemd 0.11.1) has no public introspection parser",
    ),
    ("async-rustbus-0.2", "async-rustbus 0.2.0 has no introspection parser"),
    (
        "dbus-bytestream-0.1",
        "dbus-bytestream 0.1.4 has no introspection parser",
    ),
    // The library's fact comes before its uid-0 authentication reason (the tests run as root).
    ("tokio-dbus-0.2", "tokio-dbus 0.2.2 has no introspection parser"),
];

/// zbus 1 to 6 and GDBus on every bus: verified values; zbus adds no message of its
/// own (82 per op), GDBus's default proxy flags add its own traffic; peer to peer
/// the reason; the libraries without a run-time parser say so.
#[test]
fn zbus_starts_up_on_every_bus_and_others_say_why_not() {
    let out = TempDir::new("startup");
    let buses = ["dbus-daemon", "dbus-broker", "busd"];
    let adapters: Vec<&str> = ZBUS
        .iter()
        .copied()
        .chain([GIO])
        .chain(NO_PARSER.map(|(a, _)| a))
        .collect();
    let mut with_p2p = buses.to_vec();
    with_p2p.push("p2p");
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            &adapters.join(","),
            "--scenarios",
            N20,
            "--buses",
            &with_p2p.join(","),
        ],
    );
    for a in ZBUS {
        for bus in buses {
            let c = cell(&r, a, N20, bus);
            assert_eq!(c.status(), CellStatus::Ok, "{a} {bus}: {:?}", c.outcome);
            assert!(c.measurement().unwrap().wall.median_ns.point > 0.0);
            messages_are_the_calls(&r, a, bus);
        }
        let why = reason_of(&r, a, N20, "p2p");
        assert!(why.contains("peer to peer"), "{a} p2p: {why}");
    }
    for bus in buses {
        let c = cell(&r, GIO, N20, bus);
        assert_eq!(c.status(), CellStatus::Ok, "{GIO} {bus}: {:?}", c.outcome);
        let m = c.measurement().unwrap();
        let n = m.costs.as_ref().and_then(|c| c.bus_messages_per_op).unwrap();
        // GetAll, AddMatch and RemoveMatch per child proxy besides the calls.
        assert!(n > MESSAGES_20 + 20.0, "{GIO} {bus}: {n} messages per op");
    }
    for (a, why) in NO_PARSER {
        let reason = reason_of(&r, a, N20, "dbus-daemon");
        assert!(reason.starts_with(why), "{a}: {reason}");
    }
}
