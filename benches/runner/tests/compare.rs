//! `dbus-matrix compare`: a deliberately slowed adapter is flagged as
//! regressed with a non-zero exit; the reverse is an improvement; a rerun of
//! the same code is not a regression; differing environments are named.

use std::path::Path;

use crate::common::*;

const SCENARIOS: [&str; 2] = ["marshal/mixed", "demarshal/mixed"];

fn compare(old: &Path, new: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let o = dbus_matrix(&["compare", old.to_str().unwrap(), new.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap();
    (o.status.code(), text(&o))
}

fn verdicts(json: &str) -> Vec<(String, String)> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["scenario"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_slowed_adapter_is_flagged_and_a_rerun_is_not() {
    let setup = fault_setup("compare", &["fault-ok"], &SCENARIOS);
    let base = smoke_run(&setup, "base", false);
    let rerun = smoke_run(&setup, "rerun", false);
    let slow = smoke_run(&setup, "slow", true);
    // Under parallel load two runs of the same code were seen 2.5x apart
    // (fault-ok: 10-50 µs); the slowed adapter adds ~1 ms per operation
    // (20x and more). Only a change beyond 5x counts.
    let threshold = ["--threshold", "4.0"];

    let (code, out) = compare(&base, &slow, &threshold);
    assert_eq!(code, Some(1), "a significant regression exits 1:\n{out}");
    assert!(out.contains("**regressed**"), "{out}");
    assert!(out.contains("Mann-Whitney"), "{out}");

    let (code, json) = compare(&base, &slow, &[&threshold[..], &["--format", "json"]].concat());
    assert_eq!(code, Some(1));
    for (scenario, verdict) in verdicts(&json) {
        assert_eq!(verdict, "regressed", "{scenario}:\n{json}");
    }

    let (code, json) = compare(&slow, &base, &[&threshold[..], &["--format", "json"]].concat());
    assert_eq!(code, Some(0), "an improvement is not a failure:\n{json}");
    for (scenario, verdict) in verdicts(&json) {
        assert_eq!(verdict, "improved", "{scenario}:\n{json}");
    }

    let (code, out) = compare(&base, &rerun, &threshold);
    assert_eq!(code, Some(0), "a rerun of the same code:\n{out}");
    assert!(!out.contains("Not like for like"), "same machine and versions:\n{out}");

    // Filters: one scenario only; a name neither file has is an error.
    let (code, json) = compare(&base, &slow, &["--format", "json", "--scenarios", "demarshal/mixed"]);
    assert_eq!(code, Some(1));
    assert_eq!(verdicts(&json).len(), 1);
    let (code, out) = compare(&base, &slow, &["--adapters", "zbus-6"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("no adapter \"zbus-6\""), "{out}");
}

#[test]
fn differing_versions_and_machines_are_named_and_status_changes_counted() {
    let setup = fault_setup("compare-env", &["fault-ok"], &SCENARIOS);
    let base = smoke_run(&setup, "base", false);
    let mut other: serde_json::Value = serde_json::from_slice(&std::fs::read(&base).unwrap()).unwrap();
    other["environment"]["rustc"] = "rustc 9.99.0".into();
    other["adapters"][0]["version"] = "0.0.1".into();
    // The second cell failed in the new run.
    let cells = other["cells"].as_array_mut().unwrap();
    cells[1]["status"] = "failed".into();
    cells[1]["reason"] = "exit status 1".into();
    cells[1].as_object_mut().unwrap().remove("measurement");
    let new = setup.dir.path().join("other.json");
    std::fs::write(&new, serde_json::to_vec(&other).unwrap()).unwrap();

    let (code, out) = compare(&base, &new, &[]);
    assert_eq!(code, Some(1), "a cell that broke is a regression:\n{out}");
    assert!(out.contains("Not like for like"), "{out}");
    assert!(out.contains("rustc: "), "{out}");
    assert!(out.contains("fault-ok version: 0.0.0 → 0.0.1"), "{out}");
    assert!(out.contains("**broken**"), "{out}");
    // The unchanged cell compared with itself: identical samples.
    assert!(out.contains("| unchanged |"), "{out}");
}

#[test]
fn a_library_missing_from_the_new_run_fails_the_gate_unless_allowed() {
    let old = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-1.json");
    let mut new: serde_json::Value = serde_json::from_slice(&std::fs::read(&old).unwrap()).unwrap();
    let cells = new["cells"].as_array_mut().unwrap();
    let before = cells.len();
    cells.retain(|c| c["adapter"] != "zbus-5");
    let gone = before - cells.len();
    assert!(gone > 0, "the fixture has zbus-5 cells");
    let dir = TempDir::new("compare-missing");
    let new_path = dir.path().join("new.json");
    std::fs::write(&new_path, serde_json::to_vec(&new).unwrap()).unwrap();

    let (code, out) = compare(&old, &new_path, &[]);
    assert_eq!(code, Some(1), "a vanished library must fail the gate:\n{out}");
    assert!(out.contains("**missing**"), "{out}");
    assert!(
        out.contains(&format!("{gone} missing")),
        "the summary counts them:\n{out}"
    );

    let (code, json) = compare(&old, &new_path, &["--format", "json"]);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let missing: Vec<_> = v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "missing")
        .map(|c| c["adapter"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(missing.len(), gone, "{json}");
    assert!(missing.iter().all(|a| a == "zbus-5"), "{json}");

    let (code, out) = compare(&old, &new_path, &["--allow-missing"]);
    assert_eq!(code, Some(0), "--allow-missing lets vanished cells pass:\n{out}");
    assert!(out.contains("missing"), "still shown:\n{out}");
}

/// A library whose cells turn unsupported (no longer measured) or failed
/// fails the gate; `--allow-missing` lets the unsupported ones pass.
#[test]
fn a_library_turned_unsupported_or_failed_fails_the_gate() {
    let fixture = workspace().join("runner/tests/fixtures/run-1.json");
    let dir = TempDir::new("compare-dropped");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&fixture).unwrap()).unwrap();
    let library = "zbus-5";
    let mut turned = 0;
    for c in v["cells"].as_array_mut().unwrap() {
        if c["adapter"] == library && c["status"] == "ok" {
            let c = c.as_object_mut().unwrap();
            c.remove("measurement");
            c.insert("status".into(), "unsupported".into());
            c.insert("reason".into(), "the library dropped it".into());
            turned += 1;
        }
    }
    assert!(turned > 0, "{library} has ok cells in the fixture");
    let unsupported = dir.path().join("unsupported.json");
    std::fs::write(&unsupported, serde_json::to_vec(&v).unwrap()).unwrap();
    let (code, out) = compare(&fixture, &unsupported, &[]);
    assert_eq!(code, Some(1), "cells turned unsupported pass the gate:\n{out}");
    assert!(out.contains("dropped"), "{out}");
    let (code, out) = compare(&fixture, &unsupported, &["--allow-missing"]);
    assert_eq!(code, Some(0), "allowed:\n{out}");

    // Unsupported before, failed now: broken.
    for c in v["cells"].as_array_mut().unwrap() {
        if c["adapter"] == library {
            c["status"] = "failed".into();
        }
    }
    let failed = dir.path().join("failed.json");
    std::fs::write(&failed, serde_json::to_vec(&v).unwrap()).unwrap();
    let (code, out) = compare(&unsupported, &failed, &["--allow-missing"]);
    assert_eq!(code, Some(1), "unsupported cells turned failed pass the gate:\n{out}");
    assert!(out.contains("broken"), "{out}");
}
