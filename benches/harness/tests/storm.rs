//! The canon of `property/changed-storm/<n>` (`harness/src/ipc/storm.rs`): a
//! subscriber that received every update and holds the last value digests to
//! what the op expects, coalesced announcements included; a dropped message,
//! a stale value, a reordering or an extra message is an error with counts.

use harness::ipc::storm::{self as st, StormSeen};
use harness::ipc::{IpcOp, SubscriptionOp};

/// What a subscriber without a cache sees when nothing is lost.
fn whole(n: usize) -> StormSeen {
    let updates: Vec<i32> = (0..n).map(st::level).collect();
    StormSeen {
        received: n,
        last: updates.last().copied(),
        updates,
        holder: "a test",
    }
}

#[test]
fn a_whole_storm_digests_to_the_expected_digest_and_leaves_a_note() {
    for n in st::STORM_SIZES {
        let op = IpcOp::Subscription(SubscriptionOp::PropertyStorm(n));
        assert_eq!(st::storm_digest(&whole(n), n).unwrap(), op.expected_digest(""));
        let note = st::take_note().expect("a verified storm leaves a note");
        assert!(
            note.contains(&format!("{n} PropertiesChanged emitted: received {n}, lost 0")),
            "{note}"
        );
        assert!(note.contains("0 updates coalesced"), "{note}");
        assert_eq!(st::take_note(), None, "the note is taken once");
    }
}

#[test]
fn coalesced_announcements_pass_and_are_counted() {
    // A cache that announced every tenth value (zbus's stream yields only the newest).
    let mut seen = whole(100);
    seen.updates = (0..100)
        .step_by(10)
        .map(st::level)
        .chain([st::last_level(100)])
        .collect();
    assert!(st::storm_digest(&seen, 100).is_ok());
    let note = st::take_note().unwrap();
    assert!(
        note.contains("announced 11 updates") && note.contains("89 updates coalesced"),
        "{note}"
    );
}

#[test]
fn a_dropped_update_fails_even_when_the_last_value_arrived() {
    let mut seen = whole(100);
    seen.updates.remove(1);
    seen.received = 99;
    let e = st::storm_digest(&seen, 100).unwrap_err().to_string();
    assert!(e.contains("received 99, lost 1, extra 0"), "{e}");
    assert!(e.contains("holds 100"), "the last value was there: {e}");
}

#[test]
fn a_stale_value_a_reordering_or_an_extra_message_is_an_error() {
    // The last update lost: the cache holds the one before it.
    let mut stale = whole(100);
    stale.received = 99;
    stale.updates.pop();
    stale.last = stale.updates.last().copied();
    let e = st::storm_digest(&stale, 100).unwrap_err().to_string();
    assert!(
        e.contains("lost 1") && e.contains("holds 99") && e.contains("last value 100"),
        "{e}"
    );
    // Every message received, but the cache never caught up.
    let mut behind = whole(100);
    behind.last = Some(st::INITIAL_LEVEL);
    let e = st::storm_digest(&behind, 100).unwrap_err().to_string();
    assert!(e.contains("lost 0") && e.contains("holds 0"), "{e}");
    let mut swapped = whole(100);
    swapped.updates.swap(10, 11);
    let e = st::storm_digest(&swapped, 100).unwrap_err().to_string();
    assert!(e.contains("out of order"), "{e}");
    let mut extra = whole(100);
    extra.received = 101;
    let e = st::storm_digest(&extra, 100).unwrap_err().to_string();
    assert!(e.contains("extra 1"), "{e}");
    let mut none = whole(100);
    none.last = None;
    assert!(st::storm_digest(&none, 100)
        .unwrap_err()
        .to_string()
        .contains("holds no value"));
}

#[test]
fn the_values_differ_from_each_other_and_from_the_initial_one() {
    let values: Vec<i32> = (0..10000).map(st::level).collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]));
    assert!(!values.contains(&st::INITIAL_LEVEL));
    assert_eq!(st::last_level(100), 100);
    assert!(st::changed_rule().contains(&format!("arg0='{}'", st::STORM_INTERFACE)));
}

#[test]
fn only_the_floods_ask_for_peak_memory() {
    let storm = IpcOp::Subscription(SubscriptionOp::PropertyStorm(100));
    let burst = IpcOp::Subscription(SubscriptionOp::Burst(100));
    assert!(st::is_flood(storm) && st::is_flood(burst));
    assert!(!st::is_flood(IpcOp::Subscription(SubscriptionOp::MatchChurn)));
    assert!(st::peak_memory_note(IpcOp::EmitReceive).is_none());
    let note = st::peak_memory_note(storm).expect("Linux has /proc/self/status");
    assert!(note.contains("VmHWM") && note.ends_with("kB"), "{note}");
}
