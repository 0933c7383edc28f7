//! The subscription families of issue 31 (`harness/src/ipc/subscription.rs`):
//! `signal/match-churn`, `signal/burst/<n>` and `signal/delivered/<scope>`
//! give verified values where an adapter has code for them and honest
//! reasons elsewhere, and each one's verification fails on a broken client
//! (an AddMatch that never reached the bus, a Ping dropped by the consumer,
//! a rule that delivers what arg0 should have kept out).

use crate::common::*;
use harness::results::CellStatus;

const CHURN: &str = "signal/match-churn";

#[test]
fn match_churn_fails_when_the_client_skips_add_match() {
    let setup = fault_setup_with_buses(
        "match-churn-fault",
        &["fault-ok", "fault-skip-add-match"],
        &[CHURN],
        &["dbus-daemon"],
    );
    let r = setup.smoke_run_with_failed_cells();
    assert_eq!(status_of(&r, "fault-ok", CHURN), CellStatus::Ok);
    assert_eq!(status_of(&r, "fault-skip-add-match", CHURN), CellStatus::Failed);
    let why = reason_of(&r, "fault-skip-add-match", CHURN, "dbus-daemon");
    assert!(why.contains(harness::ipc::subscription::MATCH_RULE_NOT_FOUND), "{why}");
}

#[test]
fn burst_and_delivered_fail_on_a_dropped_signal_and_a_wrong_delivery_count() {
    let setup = fault_setup_with_buses(
        "signal-faults",
        &["fault-ok", "fault-drop-signal", "fault-broad-rule"],
        &[BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0],
        &["dbus-daemon"],
    );
    let r = setup.smoke_run_with_failed_cells();
    for s in [BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0] {
        assert_eq!(status_of(&r, "fault-ok", s), CellStatus::Ok, "{s}");
    }
    // One Ping of the burst dropped by the consumer: reported lost, with the counts.
    assert_eq!(
        status_of(&r, "fault-drop-signal", "signal/burst/100"),
        CellStatus::Failed
    );
    let why = reason_of(&r, "fault-drop-signal", "signal/burst/100", "dbus-daemon");
    assert!(why.contains("received 99, lost 1"), "{why}");
    // The broad rule where arg0 was asked for: 10 delivered, 1 is right.
    assert_eq!(
        status_of(&r, "fault-broad-rule", "signal/delivered/broad"),
        CellStatus::Ok
    );
    assert_eq!(
        status_of(&r, "fault-broad-rule", "signal/delivered/arg0"),
        CellStatus::Failed
    );
    let why = reason_of(&r, "fault-broad-rule", "signal/delivered/arg0", "dbus-daemon");
    assert!(why.contains("delivered 10 Pings (9 non-matching)"), "{why}");
    // The same fault under NameOwnerChanged churn: the churned name's 20 changes delivered.
    assert_eq!(status_of(&r, "fault-broad-rule", NOC_BROAD), CellStatus::Ok);
    assert_eq!(status_of(&r, "fault-broad-rule", NOC_ARG0), CellStatus::Failed);
    let why = reason_of(&r, "fault-broad-rule", NOC_ARG0, "dbus-daemon");
    assert!(why.contains("for the churned name 20 (must be 0)"), "{why}");
}

/// Who has code for which family (the rest of the adapters with a transport give
/// their library's reason: dbus-async below; tokio-dbus, whose cells carry its uid-0
/// reason when the tests run as root, is not run here).
/// zbus-2 compiles zbus-3's `ipc_2_3.rs` (each its own `bus_rules.rs`): zbus-3 stands for both here.
const IMPLEMENTED: [(&str, &[&str]); 12] = [
    ("zbus-6", &[CHURN, BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0]),
    ("zbus-5", &[CHURN, BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0]),
    ("zbus-3", &[CHURN, BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0]),
    ("zbus-1", &[CHURN, BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0]),
    ("dbus-0.9", &[CHURN, BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0]),
    ("dbus-tokio-0.7", &[CHURN, BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0]),
    ("rustbus-0.19", &[CHURN, BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0]),
    ("systemd-0.11", &[CHURN, BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0]),
    ("libdbus-c-1.14", &[CHURN, BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0]),
    ("gio-0.22", &[CHURN, BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0]),
    ("async-rustbus-0.2", &[CHURN, BURST, BROAD, NOC_BROAD]),
    ("dbus-bytestream-0.1", &[CHURN, BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0]),
];
/// Where an implemented adapter's library cannot run a family's cell: the reason it gives.
const LIBRARY_REASONS: [(&str, &str); 1] = [("async-rustbus-0.2", "async-rustbus 0.2.0 has no argN match")];
const BURST: &str = "signal/burst/100";
const BROAD: &str = "signal/delivered/broad";
const ARG0: &str = "signal/delivered/arg0";
const NOC_BROAD: &str = "signal/name-owner-churn/broad";
const NOC_ARG0: &str = "signal/name-owner-churn/arg0";

#[test]
fn subscription_cells_have_values_or_honest_reasons() {
    let out = TempDir::new("subscriptions");
    let adapters: Vec<&str> = IMPLEMENTED.iter().map(|(a, _)| *a).chain(["dbus-async-2"]).collect();
    let scenarios = [CHURN, BURST, BROAD, ARG0, NOC_BROAD, NOC_ARG0];
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            &adapters.join(","),
            "--scenarios",
            &scenarios.join(","),
            "--buses",
            "dbus-daemon,p2p",
        ],
    );
    for (a, families) in IMPLEMENTED {
        for s in scenarios {
            let c = cell(&r, a, s, "dbus-daemon");
            if families.contains(&s) {
                assert_eq!(c.status(), CellStatus::Ok, "{a} {s}: {:?}", c.outcome);
                assert!(c.measurement().unwrap().wall.median_ns.point > 0.0);
            } else if let Some((_, why)) = LIBRARY_REASONS.iter().find(|(x, _)| *x == a) {
                let reason = reason_of(&r, a, s, "dbus-daemon");
                assert!(reason.contains(why), "{a} {s}: {reason}");
                // A library fact comes first peer to peer too (`list`'s order).
                assert_eq!(reason_of(&r, a, s, "p2p"), reason, "{a} {s} p2p");
                continue;
            } else {
                let family = &s[..s.rfind('/').unwrap()];
                assert_eq!(
                    reason_of(&r, a, s, "dbus-daemon"),
                    format!("this adapter does not implement {family} yet")
                );
            }
            // Peer to peer there is no bus to hold a rule or route a signal, whatever the library.
            let why = reason_of(&r, a, s, "p2p");
            assert!(why.contains("peer to peer"), "{a} {s} p2p: {why}");
        }
    }
    // Library facts come first: dbus-async stops reading on AddMatch replies.
    assert!(reason_of(&r, "dbus-async-2", CHURN, "dbus-daemon").contains("AddMatch"));
}
