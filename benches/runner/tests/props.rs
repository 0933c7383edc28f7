//! `property/get-all/<n>` and `objects/get-managed-objects/<n>` through the
//! runner: verified values on a bus where the adapter serves and calls them
//! (also against the reference server and client, whose replies list other
//! interfaces than the benchmark one), honest reasons elsewhere (peer to peer
//! most servers do not serve them yet; dbus-python's does), and which adapters
//! have code for them at all.

use crate::common::*;
use harness::results::{CellStatus, Outcome, Role};

/// Adapters that serve and call both families on a bus (ids).
const IMPLEMENTED: [&str; 19] = [
    "zbus-6",
    "zbus-6-tokio",
    "zbus-5",
    "zbus-4",
    "zbus-3",
    "zbus-2",
    "zbus-1",
    "dbus-0.9",
    "dbus-tokio-0.7",
    "systemd-0.11",
    "rustbus-0.19",
    "libdbus-c-1.14",
    "jeepney-0.8",
    "dbus-python-1.3",
    "dbus-fast-5.2",
    "gio-0.22",
    "ruby-dbus-0.16",
    "async-rustbus-0.2",
    // As root its uid-0 reason comes first (`library_reason`).
    "tokio-dbus-0.2",
];

/// Adapters whose library cannot run these cells on a bus at all: words of the reason.
fn library_reason(id: &str) -> Option<&'static str> {
    // SAFETY: getuid cannot fail.
    let root = unsafe { libc::getuid() } == 0;
    match id {
        "tokio-dbus-0.2" if root => Some("uid 0"),
        "dbus-async-2" => Some("dbus-async cannot serve"),
        "dbus-bytestream-0.1" => Some("array encoder"),
        _ => None,
    }
}

/// Which adapters have code for the two families: the listed ones say they
/// are supported on a bus, every other says exactly that it does not implement
/// them yet (never a made-up library limit).
#[test]
fn the_adapters_that_implement_property_sets_are_the_listed_ones() {
    let adapters = adapters_with_a_transport();
    for id in IMPLEMENTED {
        assert!(
            adapters.iter().any(|a| a.id == id),
            "{id} is not an adapter with a transport in matrix.toml"
        );
    }
    for a in adapters {
        let id = a.id.as_str();
        // A row this build mode cannot have (ruby-dbus in Nix) cannot list
        // itself: the runner says why instead.
        if let Some(reason) = unavailable_here(id) {
            assert_listed_unavailable(id, &reason);
            continue;
        }
        let o = a.command().arg("list").output().unwrap();
        assert!(o.status.success(), "{id} list: {}", text(&o));
        let l: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{id} list: {e}"));
        assert_eq!(l["id"], id);
        for s in [
            "property/get-all/10",
            "property/get-all/1000",
            "objects/get-managed-objects/10",
            "objects/get-managed-objects/1000",
        ] {
            let e = l["scenarios"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["id"] == s)
                .unwrap_or_else(|| panic!("{id}: no scenario {s}"));
            if id == "dbus-tokio-0.7" && s == "objects/get-managed-objects/1000" {
                // Its server's reply is too large for dbus-tokio to write (the library's reason).
                let why = e["reason"].as_str().unwrap_or_default();
                assert!(why.contains("does not write in one go"), "{id} {s}: {e}");
            } else if let Some(words) = library_reason(id) {
                // The library's own reason comes first.
                assert!(e["reason"].as_str().unwrap().contains(words), "{id} {s}: {e}");
            } else if IMPLEMENTED.contains(&id) {
                assert_eq!(e["supported"], true, "{id} {s}: {e}");
            } else {
                let family = &s[..s.rfind('/').unwrap()];
                assert_eq!(
                    e["reason"].as_str(),
                    Some(format!("this adapter does not implement {family} yet").as_str()),
                    "{id} {s}: {e}"
                );
            }
        }
    }
}

#[test]
fn property_sets_and_managed_objects_have_values_or_honest_reasons() {
    let out = TempDir::new("props");
    let scenarios = ["property/get-all/10", "objects/get-managed-objects/10"];
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            "zbus-6,dbus-0.9,dbus-tokio-0.7,systemd-0.11,rustbus-0.19,libdbus-c-1.14,jeepney-0.8,dbus-python-1.3,gio-0.22,\
             zbus-3,zbus-1,async-rustbus-0.2,dbus-bytestream-0.1",
            "--scenarios",
            &scenarios.join(","),
            "--buses",
            "dbus-daemon,p2p",
            "--roles",
            "same,client,server",
            "--reference",
            "systemd-0.11",
        ],
    );
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
            // dbus-tokio: the same crossroads objects and digests (adapter-shared/dbus/props.rs).
            ("dbus-tokio-0.7", "dbus-daemon", Role::Same),
            ("dbus-tokio-0.7", "dbus-daemon", Role::Client),
            ("dbus-tokio-0.7", "dbus-daemon", Role::Server),
            // Servers without an object layer (rustbus, async-rustbus, libdbus, jeepney: replies built by hand)
            // and dbus-python's fallback object, also peer to peer.
            ("rustbus-0.19", "dbus-daemon", Role::Same),
            ("rustbus-0.19", "dbus-daemon", Role::Client),
            ("rustbus-0.19", "dbus-daemon", Role::Server),
            ("async-rustbus-0.2", "dbus-daemon", Role::Same),
            ("async-rustbus-0.2", "dbus-daemon", Role::Client),
            ("async-rustbus-0.2", "dbus-daemon", Role::Server),
            ("libdbus-c-1.14", "dbus-daemon", Role::Same),
            ("libdbus-c-1.14", "dbus-daemon", Role::Client),
            ("libdbus-c-1.14", "dbus-daemon", Role::Server),
            ("jeepney-0.8", "dbus-daemon", Role::Same),
            ("jeepney-0.8", "dbus-daemon", Role::Client),
            ("jeepney-0.8", "dbus-daemon", Role::Server),
            ("dbus-python-1.3", "dbus-daemon", Role::Same),
            ("dbus-python-1.3", "p2p", Role::Same),
            ("gio-0.22", "dbus-daemon", Role::Same),
            // zbus 3's hand-written `Interface` and `fdo::ObjectManager` (adapter-shared/zbus/props_2_3.rs).
            ("zbus-3", "dbus-daemon", Role::Same),
            ("zbus-3", "dbus-daemon", Role::Client),
            ("zbus-3", "dbus-daemon", Role::Server),
            // zbus 1: a hand-written `Interface` and a manager answering with a reply built once.
            ("zbus-1", "dbus-daemon", Role::Same),
            ("zbus-1", "dbus-daemon", Role::Client),
            ("zbus-1", "dbus-daemon", Role::Server),
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
        for adapter in ["zbus-6", "zbus-3", "systemd-0.11", "gio-0.22"] {
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
        // dbus-bytestream cannot encode these replies (its library's reason, server and client alike).
        for role in [Role::Same, Role::Client] {
            match &cell("dbus-bytestream-0.1", s, "dbus-daemon", role).outcome {
                Outcome::Unsupported { reason } => assert!(
                    reason.contains("array encoder") && !reason.contains("does not implement"),
                    "dbus-bytestream-0.1 {s} {role}: {reason}"
                ),
                other => panic!("dbus-bytestream-0.1 {s} {role}: {other:?}"),
            }
        }
    }
}
