//! `call/in-flight/<n>` through the runner: a library that can have calls in
//! flight gives a verified value on every bus it serves (peer to peer too,
//! where it serves there); one that cannot says why in the library's words.

use crate::common::*;
use harness::results::{CellStatus, Outcome};

#[test]
fn in_flight_cells_have_values_or_honest_reasons() {
    let out = TempDir::new("in-flight");
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            "zbus-6,dbus-0.9,libdbus-c-1.14,jeepney-0.8,dbus-python-1.3",
            "--scenarios",
            "call/in-flight/1,call/in-flight/1000",
            "--buses",
            "dbus-broker,p2p",
        ],
    );
    for s in ["call/in-flight/1", "call/in-flight/1000"] {
        for (adapter, bus) in [
            ("zbus-6", "dbus-broker"),
            ("zbus-6", "p2p"),
            ("dbus-0.9", "dbus-broker"),
            ("libdbus-c-1.14", "dbus-broker"),
            ("jeepney-0.8", "dbus-broker"),
        ] {
            let c = cell(&r, adapter, s, bus);
            assert_eq!(c.status(), CellStatus::Ok, "{adapter} {s} {bus}: {:?}", c.outcome);
            assert!(c.measurement().unwrap().wall.median_ns.point > 0.0);
        }
        // dbus-rs cannot serve peer to peer: a library fact, not "not implemented".
        match &cell(&r, "dbus-0.9", s, "p2p").outcome {
            Outcome::Unsupported { reason } => assert!(!reason.contains("does not implement"), "{reason}"),
            other => panic!("dbus-0.9 {s} p2p: {other:?}"),
        }
        // dbus-python: async calls with reply_handler on its GLib main loop, on a bus and
        // peer to peer (its server serves there).
        for bus in ["dbus-broker", "p2p"] {
            let c = cell(&r, "dbus-python-1.3", s, bus);
            assert_eq!(c.status(), CellStatus::Ok, "dbus-python-1.3 {s} {bus}: {:?}", c.outcome);
            assert!(c.measurement().unwrap().wall.median_ns.point > 0.0);
        }
    }
}
