//! `property/changed-storm/<n>` (issue 31, item 2: PropertiesChanged storms
//! into caching proxies, as BLE RSSI floods cause them: blueman#2521,
//! bleak#500, Home Assistant OS#2053). The canon of the family as data (the
//! object, the property, the value of each update) and its check
//! ([`storm_digest`]), which also leaves a note of what the subscriber saw
//! for the cell's measurement ([`take_note`]).
//!
//! One connection of the client process serves [`STORM_PATH`] with the
//! property [`STORM_PROPERTY`] of [`STORM_INTERFACE`] (starting at
//! [`INITIAL_LEVEL`]) and emits `n` `org.freedesktop.DBus.Properties.
//! PropertiesChanged`, the `i`-th announcing [`level`]`(i)`; a second
//! connection of the same process holds the library's caching proxy of that
//! property where the library has one (zbus), or keeps the last announced
//! value itself where it has none (as an application would). The subscriber
//! must end with the last value. docs/scenarios.md, "PropertiesChanged storms".

use std::cell::RefCell;
use std::time::Duration;

/// Updates per `property/changed-storm/<n>` operation: smoke runs 100,
/// standard 100 and 1000, full every size.
pub const STORM_SIZES: [usize; 3] = [100, 1000, 10000];

/// The object whose property storms.
pub const STORM_PATH: &str = "/io/killing/spark/storm";
/// Its interface (one property, no methods).
pub const STORM_INTERFACE: &str = "io.killing.spark.Storm";
/// The property (`i`, an RSSI-like level).
pub const STORM_PROPERTY: &str = "Level";
/// The property's value before the first update (what `GetAll` answers at the start).
pub const INITIAL_LEVEL: i32 = 0;

/// `org.freedesktop.DBus.Properties`, the interface of the signal.
pub const PROPERTIES_INTERFACE: &str = "org.freedesktop.DBus.Properties";
/// The signal's member.
pub const PROPERTIES_CHANGED: &str = "PropertiesChanged";

/// How long a subscriber waits for the last update once the storm is emitted
/// (a library that lost it fails the operation after this long, with the counts).
pub const SETTLE: Duration = Duration::from_secs(10);

/// The value the `i`-th update announces: `i + 1`, so every update differs
/// from the one before and from [`INITIAL_LEVEL`], and a stale value is told
/// from the last one.
pub fn level(i: usize) -> i32 {
    i as i32 + 1
}

/// The value a subscriber must end with after a storm of `n`.
pub fn last_level(n: usize) -> i32 {
    level(n.saturating_sub(1))
}

/// The rule of a subscriber without a property cache: every
/// PropertiesChanged of [`STORM_INTERFACE`] at [`STORM_PATH`] (the bus filters by `arg0`).
pub fn changed_rule() -> String {
    format!(
        "type='signal',interface='{PROPERTIES_INTERFACE}',member='{PROPERTIES_CHANGED}',path='{STORM_PATH}',\
         arg0='{STORM_INTERFACE}'"
    )
}

/// What a storm's subscriber saw, as the adapter counted it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StormSeen {
    /// PropertiesChanged messages for [`STORM_INTERFACE`] the subscriber's
    /// connection handed to the program (counted beside the proxy where the
    /// library caches).
    pub received: usize,
    /// The values the subscriber was told of, in order: the proxy's change
    /// notifications where the library caches (it may coalesce), else each
    /// received message's value.
    pub updates: Vec<i32>,
    /// The value the subscriber holds at the end (the proxy's cache, or the
    /// adapter's own last value); `None` when it holds none.
    pub last: Option<i32>,
    /// Who holds the value: "zbus's property cache", "the adapter (libdbus has no property cache)".
    pub holder: &'static str,
}

thread_local! {
    /// The note of the last verified storm of this thread: the client's
    /// operation runs on the thread that prepared it (the async clients
    /// inside a `block_on` on that thread).
    static NOTE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The note [`storm_digest`] left on this thread for the verified operation,
/// taken once (the harness adds it to the cell's verification notes).
pub fn take_note() -> Option<String> {
    NOTE.with(|n| n.borrow_mut().take())
}

/// Checks what a storm of `n` left with the subscriber: every message
/// received once (a library that drops a PropertiesChanged fails, even when
/// it ends with the last value: it is reported as dropping, not passing),
/// the updates it announced in order, and the last value held. Coalescing
/// (fewer announcements than messages, in order, ending at the last value)
/// is allowed and counted in the note. Returns the digest of
/// [`expected_digest`] or an error with the counts.
pub fn storm_digest(seen: &StormSeen, n: usize) -> anyhow::Result<u64> {
    let last = last_level(n);
    let lost = n.saturating_sub(seen.received);
    let extra = seen.received.saturating_sub(n);
    let in_order = seen.updates.windows(2).all(|w| w[0] < w[1]);
    let in_range = seen.updates.iter().all(|v| (level(0)..=last).contains(v));
    let counts = format!(
        "{n} PropertiesChanged emitted: received {}, lost {lost}, extra {extra}; {} announced {} updates{}; \
         holds {}",
        seen.received,
        seen.holder,
        seen.updates.len(),
        if in_order && in_range {
            ""
        } else {
            " (out of order or unknown values)"
        },
        seen.last.map_or("no value".to_string(), |v| v.to_string()),
    );
    anyhow::ensure!(
        lost == 0 && extra == 0 && in_order && in_range && seen.last == Some(last),
        "property storm: {counts}; it must receive all {n} and end with the last value {last}"
    );
    let coalesced = n - seen.updates.len().min(n);
    let note = format!(
        "property storm verified: {counts} (the last value); {coalesced} updates coalesced{}",
        if coalesced == 0 {
            ""
        } else {
            " (never announced: merged into a newer value, or dropped inside the library after its connection \
             received them)"
        }
    );
    NOTE.with(|n| *n.borrow_mut() = Some(note));
    Ok(expected_digest(n))
}

/// What a verified storm of `n` digests to: the last value and `n`.
pub fn expected_digest(n: usize) -> u64 {
    let mut d = crate::digest::Digest::new();
    d.i32(last_level(n));
    d.len(n);
    d.finish()
}

/// Whether `op` floods a subscriber that is a connection of the client
/// process (`signal/burst/<n>`, `property/changed-storm/<n>`): the cells
/// whose subscriber's and bus's peak memory issue 31 asks for.
pub fn is_flood(op: super::IpcOp) -> bool {
    use super::subscription::SubscriptionOp as S;
    matches!(op, super::IpcOp::Subscription(S::Burst(_) | S::PropertyStorm(_)))
}

/// For a flood cell ([`is_flood`]): the client process's peak resident memory
/// (`VmHWM` of /proc/self/status, the subscriber being one of its
/// connections), read at the end of `bench`, before the process exits.
pub fn peak_memory_note(op: super::IpcOp) -> Option<String> {
    if !is_flood(op) {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .to_string();
    Some(format!(
        "the subscriber's process (client) peak resident memory (VmHWM) over bench: {kib}"
    ))
}
