//! The application families of issue 31 (`harness/src/ipc/application.rs`):
//! `call/in-only-bytes/<n>`, `call/connections-in-process/<k>` and
//! `proxy/create-call/<server>` give verified values where an adapter has code
//! for them and honest reasons elsewhere, and each one's verification fails on a
//! client that does less than the op asks (the fault adapter's
//! `fault-short-work`: one byte short, one connection skipped, no call).

use crate::common::*;
use harness::results::CellStatus;

const K1: &str = "call/connections-in-process/1";
const K20: &str = "call/connections-in-process/20";
/// In matrix.toml (the other two are rejected by the generated bus policy: see matrix.toml).
const SCENARIOS: [&str; 2] = [K1, K20];

#[test]
fn both_families_fail_when_the_client_does_less_than_asked() {
    let setup = fault_setup_with_buses(
        "applications-fault",
        &["fault-ok", "fault-short-work"],
        &SCENARIOS,
        &["dbus-daemon"],
    );
    let r = setup.smoke_run_with_failed_cells();
    for s in SCENARIOS {
        assert_eq!(status_of(&r, "fault-ok", s), CellStatus::Ok, "fault-ok {s}");
        assert_eq!(
            status_of(&r, "fault-short-work", s),
            CellStatus::Failed,
            "fault-short-work {s}"
        );
        let why = reason_of(&r, "fault-short-work", s, "dbus-daemon");
        assert!(why.contains("verification failed: received digest"), "{s}: {why}");
    }
}

/// Who has code for both families (the rest of the adapters with a transport say
/// "this adapter does not implement <family> yet", or their library's reason).
/// zbus-4 and zbus-6-tokio compile the same `adapter-shared/zbus/apps.rs` as zbus-5 and zbus-6.
const IMPLEMENTED: [&str; 5] = ["zbus-6", "zbus-5", "dbus-0.9", "rustbus-0.19", "systemd-0.11"];
/// Those whose own server also serves peer to peer (the others give their library's reason there).
const SERVE_P2P: [&str; 3] = ["zbus-6", "zbus-5", "systemd-0.11"];

#[test]
fn application_cells_have_values_or_honest_reasons() {
    let out = TempDir::new("applications");
    let not_yet = ["zbus-1", "gio-0.22", "jeepney-0.8", "libdbus-c-1.14"];
    let adapters: Vec<&str> = IMPLEMENTED.iter().copied().chain(not_yet).collect();
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
        for s in [K1, K20] {
            if SERVE_P2P.contains(&a) {
                assert_eq!(status_on(&r, a, s, "p2p"), CellStatus::Ok, "{a} {s} p2p");
            } else {
                let why = reason_of(&r, a, s, "p2p");
                assert!(why.contains("peer-to-peer"), "{a} {s} p2p: {why}");
            }
        }
    }
    for a in not_yet {
        for s in SCENARIOS {
            let family = &s[..s.rfind('/').unwrap()];
            assert_eq!(
                reason_of(&r, a, s, "dbus-daemon"),
                format!("this adapter does not implement {family} yet"),
                "{a} {s}"
            );
        }
    }
}
