//! The application families of issue 31 (`harness/src/ipc/application.rs`):
//! `call/in-only-bytes/<n>`, `call/connections-in-process/<k>` and
//! `proxy/create-call/<server>` give verified values where an adapter has code
//! for them and honest reasons elsewhere, and each one's verification fails on a
//! client that does less than the op asks (the fault adapter's
//! `fault-short-work`: one byte short, one connection skipped, no call) and
//! on a sink that corrupts what it got or a proxy that calls twice
//! (`fault-wrong-reply`). The sink and the proxied object own names the
//! generated bus policy lets through (`<service>.Sink`, `<service>.Proxied`):
//! every bus runs them.

use crate::common::*;
use harness::results::{CellStatus, ResultsFile};

const K1: &str = "call/connections-in-process/1";
const K20: &str = "call/connections-in-process/20";
const IN_ONLY: &str = "call/in-only-bytes/16384";
const PROPS: &str = "proxy/create-call/props";
const NO_PROPS: &str = "proxy/create-call/no-props";
/// Those served inside the client process under names of its own (bus only).
const SELF_SERVED: [&str; 3] = [IN_ONLY, PROPS, NO_PROPS];
const SCENARIOS: [&str; 5] = [K1, K20, IN_ONLY, PROPS, NO_PROPS];

#[test]
fn every_family_fails_when_the_client_does_less_or_the_server_gets_it_wrong() {
    let buses = ["dbus-daemon", "dbus-broker", "busd"];
    let setup = fault_setup_with_buses(
        "applications-fault",
        &["fault-ok", "fault-short-work", "fault-wrong-reply"],
        &SCENARIOS,
        &buses,
    );
    let r = setup.smoke_run_with_failed_cells();
    for bus in buses {
        for s in SCENARIOS {
            // The sound client and server pass on every bus: the policy lets the names through.
            assert_eq!(status_on(&r, "fault-ok", s, bus), CellStatus::Ok, "fault-ok {s} {bus}");
            assert_eq!(
                status_on(&r, "fault-short-work", s, bus),
                CellStatus::Failed,
                "fault-short-work {s} {bus}"
            );
            let why = reason_of(&r, "fault-short-work", s, bus);
            assert!(why.contains("verification failed: received digest"), "{s} {bus}: {why}");
        }
        // A sink that changes the first byte it got, a proxy that calls twice.
        for s in SELF_SERVED {
            assert_eq!(
                status_on(&r, "fault-wrong-reply", s, bus),
                CellStatus::Failed,
                "fault-wrong-reply {s} {bus}"
            );
            let why = reason_of(&r, "fault-wrong-reply", s, bus);
            assert!(why.contains("verification failed: received digest"), "{s} {bus}: {why}");
        }
    }
}

/// Who has code for both families (the rest of the adapters with a transport give
/// their library's reason: dbus-async below; tokio-dbus, whose cells carry its uid-0
/// reason when the tests run as root, is not run here).
/// zbus-4 and zbus-6-tokio compile the same `adapter-shared/zbus/apps.rs` as zbus-5 and zbus-6,
/// zbus-2 the same `apps_2_3.rs` as zbus-3; zbus-1 its own `src/apps.rs`.
const IMPLEMENTED: [&str; 11] = [
    "zbus-6",
    "zbus-5",
    "zbus-3",
    "zbus-1",
    "dbus-0.9",
    "dbus-tokio-0.7",
    "rustbus-0.19",
    "systemd-0.11",
    GIO,
    "async-rustbus-0.2",
    "dbus-bytestream-0.1",
];
/// Those whose own server also serves peer to peer (the others give their library's reason there).
const SERVE_P2P: [&str; 5] = ["zbus-6", "zbus-5", "zbus-3", "systemd-0.11", GIO];

#[test]
fn application_cells_have_values_or_honest_reasons() {
    let out = TempDir::new("applications");
    // The programs (jeepney, libdbus-c, …) run the self-served families: `program_apps`.
    let adapters: Vec<&str> = IMPLEMENTED.iter().copied().chain([DBUS_ASYNC]).collect();
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            &adapters.join(","),
            "--scenarios",
            &SCENARIOS.join(","),
            "--buses",
            "dbus-daemon,p2p",
        ],
    );
    for a in IMPLEMENTED {
        for s in SCENARIOS {
            let c = cell(&r, a, s, "dbus-daemon");
            assert_eq!(c.status(), CellStatus::Ok, "{a} {s}: {:?}", c.outcome);
            assert!(c.measurement().unwrap().wall.median_ns.point > 0.0);
        }
        proxy_messages(&r, a, "dbus-daemon");
        for s in [K1, K20] {
            if SERVE_P2P.contains(&a) {
                assert_eq!(status_on(&r, a, s, "p2p"), CellStatus::Ok, "{a} {s} p2p");
            } else if a == "zbus-1" {
                // zbus 1 has no p2p at all: its server handshake's reason, for every op.
                let why = reason_of(&r, a, s, "p2p");
                assert!(
                    why.starts_with("zbus 1.9.3's p2p server handshake"),
                    "{a} {s} p2p: {why}"
                );
            } else {
                let why = reason_of(&r, a, s, "p2p");
                assert!(why.contains("peer-to-peer"), "{a} {s} p2p: {why}");
            }
        }
        // Served by a second connection of the client process through the bus.
        for s in SELF_SERVED {
            let why = reason_of(&r, a, s, "p2p");
            assert!(why.contains("peer to peer"), "{a} {s} p2p: {why}");
        }
    }
    // dbus-async builds the call per op (no proxy type) against the harness's server,
    // whose empty reply has no SIGNATURE field; what it would serve itself, it cannot.
    for s in [PROPS, NO_PROPS] {
        let c = cell(&r, DBUS_ASYNC, s, "dbus-daemon");
        assert_eq!(c.status(), CellStatus::Ok, "{DBUS_ASYNC} {s}: {:?}", c.outcome);
    }
    proxy_messages(&r, DBUS_ASYNC, "dbus-daemon");
    for s in [K1, K20, IN_ONLY] {
        let why = reason_of(&r, DBUS_ASYNC, s, "dbus-daemon");
        assert!(why.contains("dbus-async cannot serve"), "{DBUS_ASYNC} {s}: {why}");
    }
}

/// dbus-async 2: `proxy/create-call` only (its reader stops on the empty replies
/// that the self-served families and `InOutInt`'s server would need).
const DBUS_ASYNC: &str = "dbus-async-2";

/// GDBus: its default `DBusProxy` talks to the bus while it is built; its sink answers
/// on a thread of its own (the calling thread blocks in `call_sync`).
const GIO: &str = "gio-0.22";

/// Libraries that send nothing to build a proxy (dbus-rs's `blocking::Proxy` is a
/// destination, a path and a timeout; rustbus, async-rustbus, dbus-bytestream and sd-bus have no proxy type; zbus's
/// `Proxy::new`, with its default `CacheProperties::Lazily`, asks for nothing until a
/// property is read; zbus 1's caches nothing): the call and its reply are all a monitor sees per operation
/// (measured: 2.0 on each bus for each). dbus-tokio's `nonblock::Proxy` is dbus-rs's
/// (a clone of the connection's `Arc`); dbus-async has no proxy type either.
const CALL_ONLY: [&str; 10] = [
    "zbus-6",
    "zbus-3",
    "zbus-1",
    "dbus-0.9",
    "dbus-tokio-0.7",
    "rustbus-0.19",
    "systemd-0.11",
    "async-rustbus-0.2",
    "dbus-bytestream-0.1",
    DBUS_ASYNC,
];

/// The bus messages per operation of `adapter`'s proxy cells on `bus` (smoke counts
/// costs for both): at least the call and its reply; exactly those where the library
/// builds its proxy without a word to the bus.
fn proxy_messages(r: &ResultsFile, adapter: &str, bus: &str) {
    for s in [PROPS, NO_PROPS] {
        let m = cell(r, adapter, s, bus).measurement().unwrap();
        let costs = m
            .costs
            .as_ref()
            .unwrap_or_else(|| panic!("{adapter} {s} {bus}: no costs: {:?}", m.verification_notes));
        let n = costs
            .bus_messages_per_op
            .unwrap_or_else(|| panic!("{adapter} {s} {bus}: bus messages not counted"));
        if CALL_ONLY.contains(&adapter) {
            assert!(
                (n - 2.0).abs() <= 0.1,
                "{adapter} {s} {bus}: {n} messages per op, expected 2"
            );
        } else if adapter == GIO {
            // GDBus's default flags: GetNameOwner, GetAll and AddMatch while the proxy is
            // built, RemoveMatch when it goes (measured: 21 to 22 per op on each bus).
            assert!(
                n >= 10.0,
                "{adapter} {s} {bus}: {n} messages per op, expected GDBus's own traffic"
            );
        } else {
            assert!(
                n >= 1.9,
                "{adapter} {s} {bus}: {n} messages per op, fewer than the call and its reply"
            );
        }
    }
}

/// The generated policy of dbus-broker and busd lets the self-served names through
/// too (dbus-daemon: `application_cells_have_values_or_honest_reasons`): values for
/// a library of each kind of server (zbus's object server, dbus-crossroads, rustbus
/// by hand, an sd-bus vtable, GDBus's `register_object`).
#[test]
fn self_served_cells_run_on_dbus_broker_and_busd() {
    let out = TempDir::new("applications-buses");
    let adapters = [
        "zbus-6",
        "dbus-0.9",
        "dbus-tokio-0.7",
        "rustbus-0.19",
        "systemd-0.11",
        GIO,
    ];
    let buses = ["dbus-broker", "busd"];
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            &adapters.join(","),
            "--scenarios",
            &SELF_SERVED.join(","),
            "--buses",
            &buses.join(","),
        ],
    );
    for bus in buses {
        for a in adapters {
            for s in SELF_SERVED {
                let c = cell(&r, a, s, bus);
                assert_eq!(c.status(), CellStatus::Ok, "{a} {s} {bus}: {:?}", c.outcome);
                assert!(c.measurement().unwrap().wall.median_ns.point > 0.0);
            }
            proxy_messages(&r, a, bus);
        }
    }
}
