//! The ops added after the first adapters (`IpcOp::opt_in`: `call/in-flight`,
//! `connect/idle-connections`, `call/fd-passing`): every adapter with a
//! transport has code for them (but the gaps listed in `ADAPTER_GAPS`), so no
//! other lists them as
//! "this adapter does not implement ... yet"; a library that cannot do one
//! says why in its own words.

use crate::common::*;
use std::process::Command;

fn listing(mut c: Command, what: &str) -> serde_json::Value {
    let o = c.arg("list").output().unwrap();
    assert!(o.status.success(), "{what} list: {}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{what} list: {e}"))
}

fn entry<'a>(l: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    l["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no scenario {id} in {l}"))
}

/// Ops an adapter has no code for yet, with why: the only cells that may say
/// "this adapter does not implement ... yet".
/// None today (dbus-async-2's idle connections now carry their library's reason).
const ADAPTER_GAPS: [(&str, &str); 0] = [];

/// Which cells may be unsupported on a bus, and the words their reason must contain.
fn library_reason(adapter: &str, scenario: &str) -> Option<&'static str> {
    // SAFETY: getuid cannot fail.
    let root = unsafe { libc::getuid() } == 0;
    match adapter {
        // No NEGOTIATE_UNIX_FD in the library: the reasons cite its source.
        "dbus-bytestream-0.1" | "tokio-dbus-0.2" | "ruby-dbus-0.16" if scenario.starts_with("call/fd-passing/") => {
            Some("NEGOTIATE_UNIX_FD")
        }
        "tokio-dbus-0.2" if root => Some("uid 0"),
        "dbus-async-2" if scenario.starts_with("call/") => Some("dbus-async cannot serve"),
        // A closed connection's reader spins on end of file: batches closed and opened
        // again slow down to a crawl (measured, the reason's figures).
        "dbus-async-2" if scenario.starts_with("connect/idle-connections/") => Some("reader task spinning"),
        "dbus-fast-5.2" if scenario == "call/in-flight/1000" => Some("BlockingIOError"),
        _ => None,
    }
}

#[test]
fn every_adapter_with_a_transport_has_code_for_in_flight_and_idle_connections() {
    let listings: Vec<serde_json::Value> = adapters_with_a_transport()
        .iter()
        .filter(|a| match unavailable_here(&a.id) {
            // A row this build mode cannot have (ruby-dbus in Nix) cannot
            // list itself: the runner says why instead.
            Some(reason) => {
                assert_listed_unavailable(&a.id, &reason);
                false
            }
            None => true,
        })
        .map(|a| listing(a.command(), &a.id))
        .collect();
    for l in &listings {
        let adapter = l["id"].as_str().unwrap();
        for s in [
            "call/in-flight/10",
            "call/in-flight/1000",
            "connect/idle-connections/10",
            "call/fd-passing/4096",
            "call/fd-passing/1048576",
        ] {
            let e = entry(l, s);
            let reason = e["reason"].as_str().unwrap_or_default();
            if ADAPTER_GAPS.iter().any(|(a, op)| *a == adapter && s.starts_with(op)) {
                assert_eq!(
                    reason,
                    format!("this adapter does not implement {} yet", &s[..s.rfind('/').unwrap()])
                );
                continue;
            }
            assert!(!reason.contains("does not implement"), "{adapter} {s}: {reason}");
            match library_reason(adapter, s) {
                Some(words) => assert!(reason.contains(words), "{adapter} {s}: {reason}"),
                None => assert_eq!(e["supported"], true, "{adapter} {s}: {e}"),
            }
        }
    }
}

/// Issue 31's families (what users of the libraries complain about): every
/// adapter with a transport runs each on a bus, or gives its library's reason
/// there — never the adapter's own gap ("this adapter does not implement …
/// yet"). A size per family is enough: an adapter implements a family or not.
const COMPLAINT_FAMILIES: [&str; 12] = [
    "signal/match-churn",
    "signal/burst/100",
    "signal/delivered/broad",
    "signal/delivered/arg0",
    "signal/name-owner-churn/broad",
    "signal/name-owner-churn/arg0",
    "property/changed-storm/100",
    "proxy/create-call/props",
    "proxy/startup/20",
    "call/in-only-bytes/16384",
    "call/connections-in-process/20",
    "connect/idle-connections/100",
];

#[test]
fn every_adapter_with_a_transport_runs_the_complaint_families_or_says_why_its_library_cannot() {
    let mut gaps = Vec::new();
    for a in adapters_with_a_transport() {
        if let Some(reason) = unavailable_here(&a.id) {
            assert_listed_unavailable(&a.id, &reason);
            continue;
        }
        let l = listing(a.command(), &a.id);
        for s in COMPLAINT_FAMILIES {
            let e = entry(&l, s);
            let reason = e["reason"].as_str().unwrap_or_default();
            assert!(e["supported"] == true || !reason.is_empty(), "{} {s}: {e}", a.id);
            if reason.contains("does not implement") {
                gaps.push(format!("{} {s}: {reason}", a.id));
            }
        }
    }
    assert!(gaps.is_empty(), "adapters' own gaps left:\n{}", gaps.join("\n"));
}
