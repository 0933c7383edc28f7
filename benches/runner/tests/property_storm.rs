//! `property/changed-storm/<n>` (issue 31, item 2; `harness/src/ipc/storm.rs`):
//! verified values where an adapter has code for it, honest reasons
//! elsewhere; a subscriber that drops an update fails the cell as dropping
//! even though it ends with the last value; and every flood cell (the storm,
//! `signal/burst/<n>`) carries the subscriber's and the bus daemon's peak
//! memory and the daemon's word on disconnections.

use crate::common::*;
use harness::results::CellStatus;

const STORM: &str = "property/changed-storm/100";
const BURST: &str = "signal/burst/100";

/// What a verified flood cell says besides its timing.
fn assert_flood_notes(notes: &str, what: &str) {
    for expected in [
        "the subscriber's process (client) peak resident memory (VmHWM) over bench: ",
        "the bus daemon's peak resident memory over the cell (VmHWM, reset at its start): ",
        "the rate carried from emitter to subscriber, nothing lost: ",
    ] {
        assert!(notes.contains(expected), "{what}: no {expected:?} in\n{notes}");
    }
    // dbus-daemon logs the runner's own costs monitor coming and going: logged, but no disconnection.
    assert!(
        notes.contains("the bus disconnected no one") || notes.contains("the bus logged no disconnection"),
        "{what}: no word on disconnections in\n{notes}"
    );
}

#[test]
fn a_storm_that_drops_an_update_fails_and_floods_report_memory_and_disconnections() {
    let setup = fault_setup_with_buses(
        "property-storm-fault",
        &["fault-ok", "fault-drop-signal"],
        &[STORM, BURST],
        &["dbus-daemon"],
    );
    let r = setup.smoke_run_with_failed_cells();
    assert_eq!(status_of(&r, "fault-ok", STORM), CellStatus::Ok);
    let notes = notes_of(&r, "fault-ok", STORM, "dbus-daemon");
    assert!(
        notes.contains("property storm verified: 100 PropertiesChanged emitted: received 100, lost 0, extra 0"),
        "{notes}"
    );
    assert!(
        notes.contains("the client process's CPU per signal of the flood: "),
        "{notes}"
    );
    assert_flood_notes(&notes, STORM);
    assert_flood_notes(&notes_of(&r, "fault-ok", BURST, "dbus-daemon"), BURST);
    // One update lost on the way, the last value still held: dropping, not passing.
    assert_eq!(status_of(&r, "fault-drop-signal", STORM), CellStatus::Failed);
    let why = reason_of(&r, "fault-drop-signal", STORM, "dbus-daemon");
    assert!(
        why.contains("received 99, lost 1") && why.contains("holds 100"),
        "{why}"
    );
}

/// Who has code for it and holds the value itself (no property cache in the library):
/// dbus-tokio-0.7 sends and reads dbus-0.9's messages (adapter-shared/dbus/storm_messages.rs).
const IMPLEMENTED: [&str; 7] = [
    "dbus-0.9",
    "dbus-tokio-0.7",
    "rustbus-0.19",
    "systemd-0.11",
    "async-rustbus-0.2",
    "dbus-bytestream-0.1",
    "zbus-1",
];
/// zbus 4, 5, 6 share adapter-shared/zbus/storm.rs (6-tokio too, not built here), zbus 3
/// adapter-shared/zbus/storm_2_3.rs (zbus-2 too, its own lockfile, not built here): zbus's
/// own caching proxy, whose `GetAll` the private buses' policy lets through (bus/src/config.rs).
const ZBUS: [&str; 4] = ["zbus-6", "zbus-5", "zbus-4", "zbus-3"];

#[test]
fn storm_cells_have_values_or_the_reason_they_fail() {
    let out = TempDir::new("property-storm");
    let o = smoke_run_of_repo(
        out.path(),
        &[
            "--adapters",
            &IMPLEMENTED.join(","),
            "--scenarios",
            STORM,
            "--buses",
            "dbus-daemon,p2p",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = validate(&results_file(out.path()));
    for a in IMPLEMENTED {
        let c = cell(&r, a, STORM, "dbus-daemon");
        assert_eq!(c.status(), CellStatus::Ok, "{a}: {:?}", c.outcome);
        let notes = notes_of(&r, a, STORM, "dbus-daemon");
        assert!(notes.contains("received 100, lost 0, extra 0"), "{a}: {notes}");
        assert!(
            notes.contains("holds 100") && notes.contains("property cache)"),
            "{a}: {notes}"
        );
    }
    for a in IMPLEMENTED {
        // Peer to peer nothing routes the storm to a second client connection, whatever the library.
        let why = reason_of(&r, a, STORM, "p2p");
        assert!(why.contains("peer to peer"), "{a} p2p: {why}");
    }
}

/// The number in `notes` right after `prefix` (a count of the storm's note).
fn count_after(notes: &str, prefix: &str) -> usize {
    let rest = &notes[notes
        .find(prefix)
        .unwrap_or_else(|| panic!("no {prefix:?} in\n{notes}"))
        + prefix.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no count after {prefix:?} in\n{notes}"))
}

/// zbus's caching proxy on every bus: the cell ends (zbus 4's set-up once waited for a
/// stream item zbus 4 never yields, until the 300 s cell timeout) with what the library
/// did: every PropertiesChanged received by the connection, the cache holding the last
/// value, and how many updates the proxy announced and coalesced (zbus does not queue
/// its change notifications), counts that agree with each other.
#[test]
fn zbus_caching_proxies_end_the_storm_with_their_counts_on_every_bus() {
    const BUSES: [&str; 3] = ["dbus-daemon", "dbus-broker", "busd"];
    let out = TempDir::new("property-storm-zbus");
    let o = smoke_run_of_repo(
        out.path(),
        &[
            "--adapters",
            &ZBUS.join(","),
            "--scenarios",
            STORM,
            "--buses",
            &[&BUSES[..], &["p2p"]].concat().join(","),
            "--cell-timeout",
            "120",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = validate(&results_file(out.path()));
    for a in ZBUS {
        for bus in BUSES {
            let what = format!("{a} on {bus}");
            let c = cell(&r, a, STORM, bus);
            assert_eq!(c.status(), CellStatus::Ok, "{what}: {:?}", c.outcome);
            let notes = notes_of(&r, a, STORM, bus);
            assert!(
                notes.contains("100 PropertiesChanged emitted: received 100, lost 0, extra 0; "),
                "{what}: {notes}"
            );
            // Announced by the proxy's stream in time (not only read from the cache at the end).
            assert!(
                notes.contains("zbus's property cache (CacheProperties::Yes) announced ")
                    && notes.contains("holds 100 (the last value)"),
                "{what}: {notes}"
            );
            let announced = count_after(&notes, "(CacheProperties::Yes) announced ");
            let coalesced = count_after(&notes, "(the last value); ");
            assert!((1..=100).contains(&announced), "{what}: {notes}");
            assert_eq!(announced + coalesced, 100, "{what}: {notes}");
            assert_flood_notes(&notes, &what);
        }
        let why = reason_of(&r, a, STORM, "p2p");
        assert!(why.contains("peer to peer"), "{a} p2p: {why}");
    }
}

/// GDBus's `DBusProxy` (default flags) is gio's caching proxy: every PropertiesChanged
/// reaches the cache and is announced as `g-properties-changed`, none coalesced, and the
/// cache ends with the last value (on the buses the Nix sandbox can start too).
#[test]
fn gio_caching_proxy_announces_every_update_and_holds_the_last() {
    const BUSES: [&str; 2] = ["dbus-daemon", "busd"];
    let out = TempDir::new("property-storm-gio");
    let o = smoke_run_of_repo(
        out.path(),
        &[
            "--adapters",
            "gio-0.22",
            "--scenarios",
            STORM,
            "--buses",
            &BUSES.join(","),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = validate(&results_file(out.path()));
    for bus in BUSES {
        let c = cell(&r, "gio-0.22", STORM, bus);
        assert_eq!(c.status(), CellStatus::Ok, "gio on {bus}: {:?}", c.outcome);
        let notes = notes_of(&r, "gio-0.22", STORM, bus);
        assert!(
            notes.contains("received 100, lost 0, extra 0; GDBus's property cache")
                && notes.contains("announced 100 updates; holds 100 (the last value); 0 updates coalesced"),
            "gio on {bus}: {notes}"
        );
    }
}
