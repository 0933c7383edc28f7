//! The rows of the async pure-Rust stacks (tokio-dbus-0.2, async-rustbus-0.2):
//! listed with the executor they run on, every cell they can do supported,
//! and every other one `unsupported` with a reason that names the library's
//! limitation (docs/scenarios.md, library notes).

use crate::common::*;
use std::process::Command;

/// `adapter list` of the adapter binary `package`, as JSON.
fn listing(package: &str) -> serde_json::Value {
    let bin = bin_dir().join(package);
    assert!(bin.is_file(), "{} is missing", bin.display());
    let o = Command::new(&bin).arg("list").output().unwrap();
    assert!(o.status.success(), "{package} list: {}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The listing's entry for scenario `id`.
fn scenario<'a>(listing: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    listing["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no scenario {id} in {listing}"))
}

fn codec_scenarios(listing: &serde_json::Value) -> Vec<&serde_json::Value> {
    let all: Vec<_> = listing["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            let id = s["id"].as_str().unwrap();
            id.starts_with("marshal/") || id.starts_with("demarshal/")
        })
        .collect();
    assert_eq!(all.len(), 8, "four payloads, marshal and demarshal: {listing}");
    all
}

fn reason(entry: &serde_json::Value, key: &str) -> String {
    entry[key].as_str().unwrap_or_default().to_string()
}

/// Both name their executor: a current-thread Tokio runtime.
fn assert_tokio_runtime(l: &serde_json::Value) {
    let runtime = l["runtime"].as_str().unwrap();
    assert!(
        runtime.contains("tokio") && runtime.contains("current-thread"),
        "runtime: {runtime}"
    );
}

#[test]
fn async_rustbus_row_measures_codec_and_buses_and_says_why_not_p2p() {
    let l = listing("adapter-async-rustbus-0-2");
    assert_eq!(l["id"], "async-rustbus-0.2");
    assert_eq!(l["library"], "async-rustbus");
    assert_eq!(l["version"], "0.2.0");
    assert_tokio_runtime(&l);
    for s in codec_scenarios(&l) {
        assert_eq!(s["supported"], true, "{s}");
    }
    let call = scenario(&l, "call/void");
    assert_eq!(call["supported"], true, "{call}");
    assert_eq!(call["p2p_supported"], false, "{call}");
    let why = reason(call, "p2p_reason");
    assert!(why.contains("async-rustbus 0.2.0") && why.contains("SASL"), "{why}");
}

#[test]
fn tokio_dbus_row_says_why_no_codec_no_p2p_and_no_bus_as_root() {
    let l = listing("adapter-tokio-dbus-0-2");
    assert_eq!(l["id"], "tokio-dbus-0.2");
    assert_eq!(l["library"], "tokio-dbus");
    assert_eq!(l["version"], "0.2.2");
    assert_tokio_runtime(&l);
    for s in codec_scenarios(&l) {
        assert_eq!(s["supported"], false, "{s}");
        let why = reason(s, "reason");
        assert!(
            why.contains("tokio-dbus 0.2.2") && why.contains("without a connection"),
            "{why}"
        );
    }
    let call = scenario(&l, "call/void");
    // SAFETY: getuid cannot fail.
    let root = unsafe { libc::getuid() } == 0;
    if root {
        assert_eq!(call["supported"], false, "{call}");
        let why = reason(call, "reason");
        assert!(why.contains("uid 0") && why.contains("AUTH EXTERNAL"), "{why}");
    } else {
        assert_eq!(call["supported"], true, "{call}");
    }
    assert_eq!(call["p2p_supported"], false, "{call}");
    let why = reason(call, "p2p_reason");
    assert!(why.contains("tokio-dbus 0.2.2") && why.contains("SASL"), "{why}");
}
