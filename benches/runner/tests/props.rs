//! `property/get-all/<n>` and `objects/get-managed-objects/<n>` through the
//! runner: verified values on a bus where the adapter serves and calls them
//! (also against the reference server and client, whose replies list other
//! interfaces than the benchmark one), honest reasons elsewhere (peer to peer
//! the servers do not serve them yet).

use crate::common::*;
use harness::results::{CellStatus, Outcome, Role};

#[test]
fn property_sets_and_managed_objects_have_values_or_honest_reasons() {
    let out = TempDir::new("props");
    let scenarios = ["property/get-all/10", "objects/get-managed-objects/10"];
    let o = smoke_run_of_repo(
        out.path(),
        &[
            "--adapters",
            "zbus-6,dbus-0.9,systemd-0.11,jeepney-0.8",
            "--scenarios",
            &scenarios.join(","),
            "--buses",
            "dbus-daemon,p2p",
            "--roles",
            "same,client,server",
            "--reference",
            "systemd-0.11",
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let r = validate(&results_file(out.path()));
    let cell = |adapter: &str, scenario: &str, bus: &str, role: Role| {
        r.cells
            .iter()
            .find(|c| c.adapter == adapter && c.scenario == scenario && c.bus.as_deref() == Some(bus) && c.role == role)
            .unwrap_or_else(|| panic!("no cell {adapter} {scenario} {bus} {role}"))
    };
    for s in scenarios {
        for (adapter, bus, role) in [
            ("zbus-6", "dbus-daemon", Role::Same),
            ("dbus-0.9", "dbus-daemon", Role::Same),
            ("systemd-0.11", "dbus-daemon", Role::Same),
            // Against sd-bus (the reference), which lists the standard interfaces too.
            ("zbus-6", "dbus-daemon", Role::Client),
            ("dbus-0.9", "dbus-daemon", Role::Client),
            ("zbus-6", "dbus-daemon", Role::Server),
            ("dbus-0.9", "dbus-daemon", Role::Server),
        ] {
            let c = cell(adapter, s, bus, role);
            assert_eq!(
                c.status(),
                CellStatus::Ok,
                "{adapter} {s} {bus} {role}: {:?}",
                c.outcome
            );
            assert!(c.measurement().unwrap().wall.median_ns.point > 0.0);
        }
        // Peer to peer the servers do not serve these objects yet: the adapters' gap, said so.
        for adapter in ["zbus-6", "systemd-0.11"] {
            match &cell(adapter, s, "p2p", Role::Same).outcome {
                Outcome::Unsupported { reason } => assert!(
                    reason.starts_with(
                        "this adapter does not serve property/get-all and objects/get-managed-objects peer to peer yet"
                    ),
                    "{adapter}: {reason}"
                ),
                other => panic!("{adapter} {s} p2p: {other:?}"),
            }
        }
        // dbus-rs cannot serve peer to peer: a library fact, not "not implemented".
        match &cell("dbus-0.9", s, "p2p", Role::Same).outcome {
            Outcome::Unsupported { reason } => assert!(!reason.contains("does not implement"), "{reason}"),
            other => panic!("dbus-0.9 {s} p2p: {other:?}"),
        }
        let family = s.rsplit_once('/').unwrap().0;
        match &cell("jeepney-0.8", s, "dbus-daemon", Role::Same).outcome {
            Outcome::Unsupported { reason } => {
                assert_eq!(reason, &format!("this adapter does not implement {family} yet"))
            }
            other => panic!("jeepney-0.8 {s}: {other:?}"),
        }
        match &cell("jeepney-0.8", s, "dbus-daemon", Role::Client).outcome {
            Outcome::Unsupported { reason } => assert_eq!(
                reason,
                &format!("the client (jeepney-0.8): this adapter does not implement {family} yet")
            ),
            other => panic!("jeepney-0.8 {s} client: {other:?}"),
        }
    }
}
