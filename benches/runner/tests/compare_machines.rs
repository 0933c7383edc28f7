//! `compare` between machines (issue 30): when the environments differ, the
//! verdicts judge portable figures only. Fixtures made from
//! fixtures/run-1.json: a "second machine" whose every time is 40% slower
//! and whose counts are equal is unchanged; a changed instruction count
//! (a codec cell's, or one process's of an IPC cell) is flagged whatever
//! the times; on one machine the same 40% is a regression.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

const ZBUS_MARSHAL: usize = 0; // zbus-5 marshal/mixed (instructions_per_op 1000)
const ZBUS_CALL: usize = 8; // zbus-5 call/void on dbus-daemon (an IPC cell)

fn fixture() -> Value {
    let path = workspace().join("runner/tests/fixtures/run-1.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Every per-operation time of every measured cell times `factor`.
fn scale_times(r: &mut Value, factor: f64) {
    for c in r["cells"].as_array_mut().unwrap() {
        let Some(wall) = c.get_mut("measurement").and_then(|m| m.get_mut("wall")) else {
            continue;
        };
        for estimate in ["median_ns", "mean_ns"] {
            for end in ["point", "lower", "upper"] {
                let v = wall[estimate][end].as_f64().unwrap();
                wall[estimate][end] = (v * factor).into();
            }
        }
        for s in wall["sample_ns"].as_array_mut().unwrap() {
            *s = (s.as_f64().unwrap() * factor).into();
        }
    }
}

fn another_machine(r: &mut Value) {
    r["environment"]["hostname_hash"] = "0123456789abcdef".into();
    r["environment"]["cpus"] = 16.into();
}

/// Every process of the IPC cell counted under callgrind.
fn with_ipc_instructions(r: &mut Value, server: f64) {
    r["cells"][ZBUS_CALL]["measurement"]["ipc_instructions"] = serde_json::json!({
        "method": "callgrind",
        "operations": 20,
        "processes": [
            {"role": "client", "instructions_per_op": 40000.0},
            {"role": "server", "instructions_per_op": server},
            {"role": "bus", "instructions_per_op": 90000.0},
        ],
        "hardware_unavailable": "no PMU: software events only",
    });
}

fn write(dir: &TempDir, name: &str, r: &Value) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, serde_json::to_vec(r).unwrap()).unwrap();
    p
}

fn compare_json(old: &Path, new: &Path) -> (Option<i32>, Value) {
    let o = dbus_matrix(&[
        "compare",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
        "--format",
        "json",
    ])
    .output()
    .unwrap();
    let out = text(&o);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {out}"));
    (o.status.code(), v)
}

fn verdict(c: &Value, adapter: &str, scenario: &str, bus: Option<&str>) -> String {
    c["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["adapter"] == adapter && x["scenario"] == scenario && x["bus"].as_str() == bus)
        .unwrap_or_else(|| panic!("no {adapter} {scenario}"))["verdict"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn between_machines_equal_counts_and_slower_times_are_unchanged() {
    let dir = TempDir::new("compare-machines");
    let mut base = fixture();
    with_ipc_instructions(&mut base, 30000.0);
    let old = write(&dir, "old.json", &base);
    let mut there = base.clone();
    another_machine(&mut there);
    scale_times(&mut there, 1.4);
    let new = write(&dir, "there.json", &there);

    let (code, c) = compare_json(&old, &new);
    assert_eq!(c["portable_only"], true, "{c}");
    assert_eq!(code, Some(0), "{c:#}");
    for cell in c["cells"].as_array().unwrap() {
        assert!(
            ["unchanged"].contains(&cell["verdict"].as_str().unwrap()) || cell["old_status"] != "ok",
            "{cell}"
        );
    }
    // The times are still shown, 1.4x.
    let ratio = c["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|x| x["wall_median_ns"]["ratio"].as_f64())
        .unwrap();
    assert!((ratio - 1.4).abs() < 1e-9, "{ratio}");
    let md = dbus_matrix(&["compare", old.to_str().unwrap(), new.to_str().unwrap()])
        .output()
        .unwrap();
    let md = text(&md);
    assert!(
        md.contains("Different machines: verdicts judge portable figures only"),
        "{md}"
    );
    assert!(
        md.contains("160000 → 160000 (1.000×)"),
        "the IPC cell's processes together:\n{md}"
    );

    // The same 40% on one machine is a regression: times are judged there.
    let mut here = base.clone();
    scale_times(&mut here, 1.4);
    let (code, c) = compare_json(&old, &write(&dir, "here.json", &here));
    assert_eq!(c["portable_only"], false);
    assert_eq!(code, Some(1), "{c:#}");
    assert_eq!(verdict(&c, "zbus-5", "marshal/mixed", None), "regressed");
}

#[test]
fn between_machines_a_changed_instruction_count_is_flagged_whatever_the_times() {
    let dir = TempDir::new("compare-machines-counts");
    let mut base = fixture();
    with_ipc_instructions(&mut base, 30000.0);
    let old = write(&dir, "old.json", &base);

    // Faster there (0.6x), but 10% more instructions in one codec cell and
    // in the server of one IPC cell.
    let mut there = base.clone();
    another_machine(&mut there);
    scale_times(&mut there, 0.6);
    there["cells"][ZBUS_MARSHAL]["measurement"]["instructions_per_op"] = 1100.0.into();
    with_ipc_instructions(&mut there, 46000.0);
    let (code, c) = compare_json(&old, &write(&dir, "there.json", &there));
    assert_eq!(code, Some(1), "{c:#}");
    assert_eq!(verdict(&c, "zbus-5", "marshal/mixed", None), "regressed", "{c:#}");
    assert_eq!(
        verdict(&c, "zbus-5", "call/void", Some("dbus-daemon")),
        "regressed",
        "{c:#}"
    );
    // The other cells, 40% faster, are not improvements between machines.
    assert_eq!(verdict(&c, "raw", "marshal/mixed", None), "unchanged", "{c:#}");
}
