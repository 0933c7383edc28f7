//! Issue 31, large byte arrays: `call/echo-bytes/4194304` through the
//! runner. Every library family's client and server echo 4 MiB on a bus and
//! peer to peer, verified by the digest of the echoed bytes before timing,
//! beside their floor; a server that changes one byte of the 4 MiB fails
//! its cell with the verification's reason.

use crate::common::*;
use harness::results::{CellStatus, Outcome};

const BIG: &str = "call/echo-bytes/4194304";

#[test]
fn four_mib_echo_cells_are_verified_on_a_bus_and_peer_to_peer() {
    let out = TempDir::new("big-bytes");
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            "raw,rustbus-0.19,zbus-6,dbus-0.9,systemd-0.11",
            "--scenarios",
            &format!("{BIG},baseline/raw-socket/4194304"),
            "--buses",
            "dbus-daemon,p2p",
        ],
    );
    let floor = cell_on(&r, "raw", "baseline/raw-socket/4194304", None);
    assert_eq!(floor.status(), CellStatus::Ok, "{:?}", floor.outcome);
    for adapter in ["rustbus-0.19", "zbus-6", "dbus-0.9", "systemd-0.11"] {
        let c = cell_on(&r, adapter, BIG, Some("dbus-daemon"));
        assert_eq!(c.status(), CellStatus::Ok, "{adapter}: {:?}", c.outcome);
        let m = c.measurement().unwrap();
        assert_eq!(m.throughput_bytes, 4 << 20, "{adapter}");
        assert!(m.floor_ratio.is_some(), "{adapter}: compared with its floor");
    }
    // Peer to peer: values where the library serves without a bus, reasons elsewhere.
    for adapter in ["zbus-6", "systemd-0.11"] {
        let c = cell_on(&r, adapter, BIG, Some("p2p"));
        assert_eq!(c.status(), CellStatus::Ok, "{adapter} p2p: {:?}", c.outcome);
    }
    for adapter in ["rustbus-0.19", "dbus-0.9"] {
        match &cell_on(&r, adapter, BIG, Some("p2p")).outcome {
            Outcome::Unsupported { reason } => assert!(!reason.is_empty()),
            other => panic!("{adapter} p2p: {other:?}"),
        }
    }
}

#[test]
fn a_server_that_changes_a_byte_of_four_mib_fails_the_cell() {
    let setup = fault_setup_with_buses(
        "big-bytes-fault",
        &["fault-ok", "fault-wrong-reply"],
        &[BIG],
        &["dbus-daemon"],
    );
    let o = setup
        .command(&["run", "--profile", "smoke", "--quiet", "--out"])
        .arg(setup.out())
        .output()
        .unwrap();
    let r = validate(&results_file(&setup.out()));
    let outcome = |adapter: &str| {
        &r.cells
            .iter()
            .find(|c| c.adapter == adapter && c.scenario == BIG)
            .unwrap_or_else(|| panic!("no {adapter} cell: {}", text(&o)))
            .outcome
    };
    assert!(
        matches!(outcome("fault-ok"), Outcome::Ok(_)),
        "{:?}",
        outcome("fault-ok")
    );
    match outcome("fault-wrong-reply") {
        Outcome::Failed { reason } => assert!(reason.contains("verification failed: received digest"), "{reason}"),
        other => panic!("the broken server's cell: {other:?}"),
    }
}
