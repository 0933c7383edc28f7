//! `dbus-matrix spread`: run-to-run spread over copies of the fixture run
//! whose medians are scaled by known factors (so every spread, median and
//! worst cell is known exactly), the target's sources, the cells set apart,
//! the `--fail-above` gate, filters, warnings, refusals of bad input, and the
//! markdown and JSON output pinned over the fixture pair.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::common::*;

fn fixtures() -> PathBuf {
    workspace().join("runner/tests/fixtures")
}

fn load(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn save(dir: &TempDir, name: &str, v: &Value) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
    p
}

fn cell_mut<'a>(r: &'a mut Value, adapter: &str, scenario: &str, bus: Option<&str>) -> &'a mut Value {
    r["cells"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["adapter"] == adapter && c["scenario"] == scenario && c["bus"].as_str() == bus)
        .unwrap_or_else(|| panic!("no cell {adapter} {scenario} {bus:?} in the fixture"))
}

/// Multiplies a cell's median (point and interval) and samples by `f`.
fn scale(r: &mut Value, adapter: &str, scenario: &str, bus: Option<&str>, f: f64) {
    let wall = &mut cell_mut(r, adapter, scenario, bus)["measurement"]["wall"];
    for k in ["point", "lower", "upper"] {
        wall["median_ns"][k] = json!(wall["median_ns"][k].as_f64().unwrap() * f);
    }
    for s in wall["sample_ns"].as_array_mut().unwrap() {
        *s = json!(s.as_f64().unwrap() * f);
    }
}

fn median_of(r: &Value, adapter: &str, scenario: &str, bus: Option<&str>) -> f64 {
    let mut r = r.clone();
    cell_mut(&mut r, adapter, scenario, bus)["measurement"]["wall"]["median_ns"]["point"]
        .as_f64()
        .unwrap()
}

/// `dbus-matrix spread ARGS`: exit code, stdout, stderr.
fn spread(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(runner_bin())
        .arg("spread")
        .args(args)
        .env_remove("DBUS_MATRIX_MATRIX")
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    );
    assert!(
        !err.contains("panicked"),
        "dbus-matrix spread {args:?} panicked:\n{err}"
    );
    (o.status.code(), out, err)
}

fn spread_json(args: &[&str]) -> Value {
    let (code, out, err) = spread(&[args, &["--format", "json"]].concat());
    assert_eq!(code, Some(0), "spread {args:?}:\n{out}{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn close(a: &Value, b: f64) {
    let a = a.as_f64().unwrap_or_else(|| panic!("not a number: {a}"));
    assert!((a - b).abs() < 1e-12, "{a} != {b}");
}

fn group<'a>(v: &'a Value, key: &str, name: &str, bus: Option<&str>) -> &'a Value {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == name && g["bus"].as_str() == bus)
        .unwrap_or_else(|| panic!("no {name} {bus:?} in {key}: {v:#}"))
}

/// Run 1 and a copy with four medians scaled and one cell cut:
/// zbus-5 call/void ×1.5 (spread 0.4), zbus-5 marshal/mixed ×1.1 (0.2/2.1),
/// dbus-0.9 call/void ×0.98 (0.02/0.99), raw baseline/raw-socket/64 ×1.02 (0.02/2.02).
struct Scaled {
    dir: TempDir,
    base: PathBuf,
    copy: PathBuf,
    copy_value: Value,
}

fn scaled(tag: &str) -> Scaled {
    let dir = TempDir::new(tag);
    let base_value = load(&fixtures().join("run-1.json"));
    let mut copy = base_value.clone();
    scale(&mut copy, "zbus-5", "call/void", Some("dbus-daemon"), 1.5);
    scale(&mut copy, "zbus-5", "marshal/mixed", None, 1.1);
    scale(&mut copy, "dbus-0.9", "call/void", Some("dbus-daemon"), 0.98);
    scale(&mut copy, "raw", "baseline/raw-socket/64", None, 1.02);
    cell_mut(&mut copy, "rustbus-0.19", "connect/hello", Some("dbus-daemon"))["measurement"]["cut"] =
        json!("one operation took 12 s, over the cell budget of 10 s");
    let base = save(&dir, "a.json", &base_value);
    let copy_path = save(&dir, "b.json", &copy);
    Scaled {
        dir,
        base,
        copy: copy_path,
        copy_value: copy,
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn spread_of_scaled_copies_is_exact_per_cell_group_and_overall() {
    let sc = scaled("spread-exact");
    let v = spread_json(&[s(&sc.base), s(&sc.copy)]);
    assert_eq!(v["target"], 0.03, "no plan in the fixture: the default");
    assert_eq!(v["target_source"], "default");
    // Run 1 has 24 ok cells; the cut one is set apart.
    assert_eq!(v["cells_total"], 23, "{v:#}");
    assert_eq!(v["cells"].as_array().unwrap().len(), 23);

    let all = &v["overall"];
    assert_eq!(all["group"], "all");
    assert_eq!(all["cells"], 23);
    close(&all["median_spread"], 0.0);
    assert_eq!(all["worst"]["adapter"], "zbus-5");
    assert_eq!(all["worst"]["scenario"], "call/void");
    assert_eq!(all["worst"]["bus"], "dbus-daemon");
    close(&all["worst"]["spread"], 0.4);
    assert_eq!(all["over_target"], 2, "0.4 and 0.2/2.1 are above 3%");
    close(&all["over_target_share"], 2.0 / 23.0);
    // Both moved beyond their own interval (5.4% and 0.53% wide); the floor
    // (19.9% wide) and dbus-0.9 call/void (4.1% wide) did not.
    assert_eq!(all["beyond_own_interval"], 2);

    let codec = group(&v, "groups", "codec", None);
    assert_eq!(codec["cells"], 7);
    assert_eq!(codec["worst"]["scenario"], "marshal/mixed");
    close(&codec["worst"]["spread"], 0.2 / 2.1);
    close(&codec["median_spread"], 0.0);
    assert_eq!(codec["over_target"], 1);
    let floor = group(&v, "groups", "floor", None);
    assert_eq!(floor["cells"], 2);
    assert_eq!(floor["worst"]["scenario"], "baseline/raw-socket/64");
    close(&floor["worst"]["spread"], 0.02 / 1.01);
    close(&floor["median_spread"], 0.01 / 1.01);
    assert_eq!(floor["over_target"], 0);
    let daemon = group(&v, "groups", "ipc", Some("dbus-daemon"));
    assert_eq!(daemon["cells"], 11, "12 ok, one cut");
    assert_eq!(group(&v, "groups", "ipc", Some("p2p"))["cells"], 3);
    assert_eq!(v["groups"].as_array().unwrap().len(), 4);

    let void = group(&v, "call_void", "call/void", Some("dbus-daemon"));
    assert_eq!(void["cells"], 3);
    close(&void["median_spread"], 0.02 / 0.99);
    close(&void["worst"]["spread"], 0.4);
    assert_eq!(void["over_target"], 1);
    close(&void["over_target_share"], 1.0 / 3.0);
    let void_p2p = group(&v, "call_void", "call/void", Some("p2p"));
    assert_eq!(void_p2p["cells"], 1);
    close(&void_p2p["worst"]["spread"], 0.0);

    // Cells worst first, with each file's median.
    let cells = v["cells"].as_array().unwrap();
    let order: Vec<(&str, f64)> = cells[..4]
        .iter()
        .map(|c| (c["scenario"].as_str().unwrap(), c["spread"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        order.iter().map(|o| o.0).collect::<Vec<_>>(),
        ["call/void", "marshal/mixed", "call/void", "baseline/raw-socket/64"],
        "{order:?}"
    );
    let m = median_of(&load(&sc.base), "zbus-5", "call/void", Some("dbus-daemon"));
    close(&cells[0]["medians_ns"][0], m);
    close(&cells[0]["medians_ns"][1], m * 1.5);
    assert_eq!(cells[0]["over_target"], true);
    assert_eq!(cells[0]["beyond_own_interval"], true);
    assert_eq!(cells[2]["adapter"], "dbus-0.9");
    close(&cells[2]["spread"], 0.02 / 0.99);
    assert_eq!(cells[2]["over_target"], false);
    assert_eq!(cells[2]["beyond_own_interval"], false);
    assert!(cells[4..].iter().all(|c| c["spread"] == 0.0), "{v:#}");

    let apart = v["set_apart"].as_array().unwrap();
    assert_eq!(apart.len(), 1, "{v:#}");
    assert_eq!(apart[0]["adapter"], "rustbus-0.19");
    assert_eq!(apart[0]["scenario"], "connect/hello");
    let reason = apart[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("cut in") && reason.contains("over the cell budget"),
        "{reason}"
    );

    // The same copy is not a different machine or version: no warning.
    let (code, md, err) = spread(&[s(&sc.base), s(&sc.copy)]);
    assert_eq!(code, Some(0));
    assert_eq!(err, "", "identical setups: nothing to warn about");
    assert!(
        md.contains("| all | 23 | 0.00% | 40.00% | zbus-5 call/void on dbus-daemon | 2 (8.70%) | 2 |"),
        "{md}"
    );
    assert!(md.contains("| call/void on dbus-daemon | 3 | 2.02% | 40.00% |"), "{md}");
    assert!(md.contains("**40.00%** over"), "{md}");
    assert!(
        md.contains("2 of 23 cells moved between runs more than their own published interval"),
        "{md}"
    );
    assert!(md.contains("Target 3.00% (the default"), "{md}");
    assert!(md.contains("Set apart"), "{md}");
}

#[test]
fn spread_over_three_runs_is_range_over_their_median() {
    let sc = scaled("spread-three");
    let mut third = load(&sc.base);
    scale(&mut third, "zbus-5", "call/void", Some("dbus-daemon"), 0.5);
    let third = save(&sc.dir, "c.json", &third);
    let v = spread_json(&[s(&sc.base), s(&sc.copy), s(&third)]);
    assert_eq!(v["runs"].as_array().unwrap().len(), 3);
    // Medians m, 1.5 m, 0.5 m: (1.5 - 0.5) m / m.
    close(&v["overall"]["worst"]["spread"], 1.0);
    assert_eq!(v["cells"][0]["medians_ns"].as_array().unwrap().len(), 3);
    // The cut cell is set apart although two other files have it ok.
    assert_eq!(v["set_apart"].as_array().unwrap().len(), 1);
}

#[test]
fn spread_target_top_filters_and_the_fail_above_gate() {
    let sc = scaled("spread-options");
    let (a, b) = (s(&sc.base), s(&sc.copy));
    let v = spread_json(&[a, b, "--target", "0.015"]);
    assert_eq!(v["target"], 0.015);
    assert_eq!(v["target_source"], "option");
    assert_eq!(v["overall"]["over_target"], 4);

    let v = spread_json(&[a, b, "--top", "2"]);
    assert_eq!(v["cells"].as_array().unwrap().len(), 2);
    assert_eq!(v["cells_total"], 23);
    assert_eq!(v["overall"]["cells"], 23, "summaries count every cell");

    let v = spread_json(&[a, b, "--buses", "p2p"]);
    assert_eq!(v["overall"]["cells"], 3);
    let v = spread_json(&[a, b, "--adapters", "raw", "--scenarios", "baseline/raw-socket/64"]);
    assert_eq!(v["overall"]["cells"], 1);
    close(&v["overall"]["worst"]["spread"], 0.02 / 1.01);

    // The worst spread is 0.4.
    let (code, out, _) = spread(&[a, b, "--fail-above", "0.39"]);
    assert_eq!(code, Some(1), "worst 0.4 > 0.39:\n{out}");
    assert!(out.contains("## dbus-matrix spread"), "the report is still printed");
    let (code, _, _) = spread(&[a, b, "--fail-above", "0.41"]);
    assert_eq!(code, Some(0));
    let (code, _, _) = spread(&[a, b, "--fail-above", "0.41", "--scenarios", "marshal/mixed"]);
    assert_eq!(code, Some(0));
    let (code, _, _) = spread(&[a, b, "--fail-above", "0.05", "--scenarios", "marshal/mixed"]);
    assert_eq!(code, Some(1), "zbus-5 marshal/mixed moved 0.2/2.1");
}

fn with_target_width(mut r: Value, width: Option<f64>) -> Value {
    let mut profile = json!({"sample_size": 10, "warm_up_s": 0.5, "measurement_s": 1.0, "nresamples": 1000});
    if let Some(w) = width {
        profile["target_width"] = json!(w);
    }
    let selection = json!({"adapters": [], "scenarios": [], "buses": []});
    r["plan"] = json!({
        "requested": selection, "resolved": selection, "system_bus": false, "profile": "quick",
        "cell_timeout_s": 600.0, "placement": "none", "instructions": false,
        "fingerprint": {"matrix_sha256": "00", "adapters": [], "profile": profile},
    });
    r
}

#[test]
fn spread_target_comes_from_the_profile_when_every_file_agrees() {
    let sc = scaled("spread-profile-target");
    let (a, b) = (load(&sc.base), sc.copy_value.clone());
    let a5 = save(&sc.dir, "a5.json", &with_target_width(a.clone(), Some(0.05)));
    let b5 = save(&sc.dir, "b5.json", &with_target_width(b.clone(), Some(0.05)));
    let b10 = save(&sc.dir, "b10.json", &with_target_width(b.clone(), Some(0.10)));
    let b_none = save(&sc.dir, "bn.json", &with_target_width(b, None));

    let v = spread_json(&[s(&a5), s(&b5)]);
    assert_eq!(
        (v["target"].as_f64(), v["target_source"].as_str()),
        (Some(0.05), Some("profile"))
    );
    assert_eq!(v["overall"]["over_target"], 2);
    let (_, md, _) = spread(&[s(&a5), s(&b5)]);
    assert!(md.contains("Target 5.00% (the profile's target_width)"), "{md}");
    for other in [&b10, &b_none] {
        let v = spread_json(&[s(&a5), s(other)]);
        assert_eq!(
            (v["target"].as_f64(), v["target_source"].as_str()),
            (Some(0.03), Some("default"))
        );
    }
    let v = spread_json(&[s(&a5), s(&b5), "--target", "0.5"]);
    assert_eq!(
        (v["target"].as_f64(), v["target_source"].as_str()),
        (Some(0.5), Some("option"))
    );
    assert_eq!(v["overall"]["over_target"], 0);
}

#[test]
fn spread_warns_about_other_machines_and_versions() {
    let sc = scaled("spread-warn");
    let mut other = sc.copy_value.clone();
    other["environment"]["hostname_hash"] = json!("0000000000000000");
    other["environment"]["cpu_model"] = json!("Another CPU");
    other["adapters"][0]["version"] = json!("5.20.0");
    let other = save(&sc.dir, "other.json", &other);
    let (code, out, err) = spread(&[s(&sc.base), s(&other)]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(err.contains("warning: not like for like"), "{err}");
    assert!(
        err.contains("machine (hostname hash): 5bce98f73f3ed0c8 → 0000000000000000"),
        "{err}"
    );
    assert!(err.contains("CPU: Intel(R) Xeon(R) Processor → Another CPU"), "{err}");
    assert!(err.contains("zbus-5 version: 5.19.0 → 5.20.0"), "{err}");
    assert!(out.contains("Not like for like"), "{out}");
}

#[test]
fn spread_refuses_bad_input_with_exit_2() {
    let sc = scaled("spread-bad");
    let (a, b) = (s(&sc.base), s(&sc.copy));
    let mut smoke = sc.copy_value.clone();
    smoke["run"]["profile"] = json!("smoke");
    let smoke = save(&sc.dir, "smoke.json", &smoke);
    let garbage = sc.dir.path().join("garbage.json");
    std::fs::write(&garbage, "{ not json").unwrap();
    let missing = sc.dir.path().join("missing.json");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![a], "at least two"),
        (vec![a, a], "at least two"),
        (vec![a, s(&missing)], "cannot read"),
        (vec![a, s(&garbage)], "not valid JSON"),
        (vec![a, s(&smoke)], "different profiles"),
        (vec![a, b, "--target", "0"], "--target"),
        (vec![a, b, "--target", "-0.1"], "--target"),
        (vec![a, b, "--target", "inf"], "--target"),
        (vec![a, b, "--target", "NaN"], "--target"),
        (vec![a, b, "--fail-above", "-1"], "--fail-above"),
        (vec![a, b, "--fail-above", "nan"], "--fail-above"),
        (vec![a, b, "--top", "0"], "--top"),
        (vec![a, b, "--adapters", "zbus-99"], "no adapter \"zbus-99\""),
        (vec![a, b, "--buses", "dbus-broker"], "no bus \"dbus-broker\""),
        (
            vec![a, b, "--adapters", "dbus-0.9", "--scenarios", "demarshal/mixed"],
            "no cell is ok",
        ),
    ];
    for (args, needle) in cases {
        let (code, out, err) = spread(&args);
        assert_eq!(code, Some(2), "spread {args:?}:\n{out}{err}");
        assert!(err.contains(needle), "spread {args:?}: expected {needle:?} in:\n{err}");
    }
    let (code, out, err) = spread(&[a, s(&smoke), "--allow-mixed", "--format", "json"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(err.contains("profile: quick → smoke"), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["profile"], "quick+smoke");
}

/// Markdown and JSON over the fixture pair pinned byte for byte (run 2
/// moves two cells, breaks one, fixes one and drops one; another kernel
/// and dbus-0.9 version: warned on stderr).
#[test]
fn spread_markdown_and_json_snapshots() {
    let run = |args: &[&str]| {
        let o = Command::new(runner_bin())
            .arg("spread")
            .args(args)
            .current_dir(fixtures())
            .output()
            .unwrap();
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(
            err,
            "warning: not like for like: run-2.json against run-1.json: kernel: 6.18.44-fc-v669 → 6.12.0\n\
             warning: not like for like: run-2.json against run-1.json: dbus-0.9 version: 0.9.12 → 0.19.4\n"
        );
        (o.status.code(), String::from_utf8(o.stdout).unwrap())
    };
    let (code, md) = run(&["run-1.json", "run-2.json"]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("spread-markdown", md);
    let (code, json) = run(&["--format", "json", "--top", "3", "run-1.json", "run-2.json"]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("spread-json", json);
}
