//! `dbus-matrix history`: a deliberately slowed run is marked as a step up
//! and a rerun of the same code is not; runs are put in time order; files
//! that do not load are reported and skipped, and none loading is bad input.
//! `dbus-matrix report --format bmf`: Bencher Metric Format.

use std::path::Path;

use crate::common::*;

const SCENARIOS: [&str; 2] = ["marshal/mixed", "demarshal/mixed"];

fn history(inputs: &[&Path], extra: &[&str]) -> (Option<i32>, String, String) {
    let o = dbus_matrix(&["history"]).args(inputs).args(extra).output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

fn parse(json: &str) -> serde_json::Value {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// The series of `scenario` (one adapter, no bus) from the JSON output.
fn series<'a>(h: &'a serde_json::Value, scenario: &str) -> &'a Vec<serde_json::Value> {
    h["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scenario"] == scenario)
        .unwrap_or_else(|| panic!("no series {scenario}: {h}"))["points"]
        .as_array()
        .unwrap()
}

#[test]
fn a_slowed_run_is_a_step_up_and_a_rerun_is_not() {
    let setup = fault_setup("history", &["fault-ok"], &SCENARIOS);
    // Start times have one-second resolution: keep the three runs apart.
    let base = smoke_run(&setup, "base", false);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let rerun = smoke_run(&setup, "rerun", false);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let slow = smoke_run(&setup, "slow", true);
    // Under parallel load two runs of the same code were seen 2.5x apart
    // (fault-ok: 10-50 µs); the slowed adapter adds ~1 ms per operation
    // (20x and more). A step must be beyond 5x.
    let threshold = ["--threshold", "4.0"];
    // Given out of order: history orders by run start.
    let inputs = [slow.as_path(), base.as_path(), rerun.as_path()];

    let (code, json, err) = history(&inputs, &[&threshold[..], &["--format", "json"]].concat());
    assert_eq!(code, Some(0), "{err}");
    let h = parse(&json);
    assert_eq!(h["series"].as_array().unwrap().len(), 2, "{json}");
    let base_start = parse(&std::fs::read_to_string(&base).unwrap())["run"]["started_at"].clone();
    let slow_start = parse(&std::fs::read_to_string(&slow).unwrap())["run"]["started_at"].clone();
    for scenario in SCENARIOS {
        let points = series(&h, scenario);
        assert_eq!(points.len(), 3, "{scenario}: {json}");
        let starts: Vec<&str> = points.iter().map(|p| p["run_start"].as_str().unwrap()).collect();
        assert!(
            starts.windows(2).all(|w| w[0] < w[1]),
            "{scenario} not in time order: {starts:?}"
        );
        assert_eq!(points[0]["run_start"], base_start, "{scenario}");
        assert_eq!(points[2]["run_start"], slow_start, "{scenario}");
        let steps: Vec<&serde_json::Value> = points.iter().map(|p| &p["step"]).collect();
        assert_eq!(
            steps,
            [&serde_json::Value::Null, &serde_json::Value::Null, &"up".into()],
            "{scenario}: {json}"
        );
        for p in points {
            assert_eq!(p["status"], "ok");
            assert!(p["median_ns"].as_f64().unwrap() > 0.0);
            assert!(p["revision"].is_string());
        }
        assert!(points[2]["median_ns"].as_f64().unwrap() > 2.0 * points[1]["median_ns"].as_f64().unwrap());
    }

    // Markdown: one row per cell, the ▲ in the last run's column only.
    let (code, md, err) = history(&inputs, &threshold);
    assert_eq!(code, Some(0), "{err}");
    assert!(md.contains("▲ step up"), "legend:\n{md}");
    for scenario in SCENARIOS {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| fault-ok | {scenario} |")))
            .unwrap_or_else(|| panic!("no row for {scenario}:\n{md}"));
        let cols: Vec<&str> = row.split('|').map(str::trim).collect();
        // "", adapter, scenario, bus, run 1, run 2, run 3, ""
        assert_eq!(cols.len(), 8, "{row}");
        assert!(!cols[4].contains(['▲', '▼']) && !cols[5].contains(['▲', '▼']), "{row}");
        assert!(cols[6].ends_with('▲'), "{row}");
    }

    // A filter keeps one series; a name no file has is bad input.
    let (code, json, _) = history(&inputs, &["--format", "json", "--scenarios", "demarshal/mixed"]);
    assert_eq!(code, Some(0));
    assert_eq!(parse(&json)["series"].as_array().unwrap().len(), 1, "{json}");
    let (code, _, err) = history(&inputs, &["--adapters", "zbus-6"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no adapter \"zbus-6\""), "{err}");
}

#[test]
fn unloadable_files_are_skipped_and_none_loading_is_bad_input() {
    let setup = fault_setup("history-bad", &["fault-ok"], &SCENARIOS);
    let base = smoke_run(&setup, "base", false);
    let dir = setup.dir.path().join("collected");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&base, dir.join("a-base.json")).unwrap();
    let bytes = std::fs::read(&base).unwrap();
    let truncated = dir.join("b-truncated.json");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a results file").unwrap();

    // The directory: the good file is used, the truncated one named and skipped.
    let (code, json, err) = history(&[dir.as_path()], &["--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("b-truncated.json"), "{err}");
    assert!(err.contains("truncated"), "{err}");
    assert!(!err.contains("notes.txt"), "only *.json is read: {err}");
    let h = parse(&json);
    assert_eq!(h["runs"].as_array().unwrap().len(), 1, "{json}");
    for scenario in SCENARIOS {
        assert_eq!(series(&h, scenario).len(), 1, "{json}");
    }

    // Nothing loads: exit 2 with a clear error.
    let missing = dir.join("missing.json");
    let (code, out, err) = history(&[truncated.as_path(), missing.as_path()], &[]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("b-truncated.json") && err.contains("missing.json"),
        "{err}"
    );
    assert!(err.contains("none of the 2 results files could be loaded"), "{err}");
    let empty = setup.dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, err) = history(&[empty.as_path()], &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no results files"), "{err}");
}

#[test]
fn bmf_report_has_latency_throughput_and_allocations_of_ok_cells() {
    let setup = fault_setup("history-bmf", &["fault-ok"], &SCENARIOS);
    let base = smoke_run(&setup, "base", false);
    let o = dbus_matrix(&["report", base.to_str().unwrap(), "--format", "bmf"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let bmf = parse(&String::from_utf8_lossy(&o.stdout));
    let results = validate(&base);
    let ok: Vec<_> = results
        .cells
        .iter()
        .filter(|c| c.status() == harness::results::CellStatus::Ok)
        .collect();
    assert_eq!(ok.len(), 2, "both smoke cells are ok");
    assert_eq!(bmf.as_object().unwrap().len(), ok.len(), "{bmf}");
    for c in ok {
        let name = format!("{}/{}", c.adapter, c.scenario);
        let b = &bmf[&name];
        let m = c.measurement().unwrap();
        let latency = &b["latency"];
        assert_eq!(latency["value"].as_f64(), c.median_ns(), "{name}: {bmf}");
        assert_eq!(latency["lower_value"].as_f64(), Some(m.wall.median_ns.lower), "{name}");
        assert_eq!(latency["upper_value"].as_f64(), Some(m.wall.median_ns.upper), "{name}");
        if m.throughput_bytes > 0 {
            let t = b["bytes-per-second"]["value"].as_f64().unwrap();
            let expected = m.throughput_bytes as f64 * 1e9 / m.wall.median_ns.point;
            assert!((t - expected).abs() <= expected * 1e-12, "{name}: {t} vs {expected}");
            assert!(b["bytes-per-second"]["lower_value"].as_f64().unwrap() <= t);
            assert!(b["bytes-per-second"]["upper_value"].as_f64().unwrap() >= t);
        } else {
            assert!(b.get("bytes-per-second").is_none(), "{name}: {bmf}");
        }
        match &m.alloc {
            Some(a) => assert_eq!(b["allocations"]["value"].as_f64(), Some(a.allocations_per_op), "{name}"),
            None => assert!(b.get("allocations").is_none(), "{name}"),
        }
    }
    assert!(bmf.get("fault-ok/marshal/mixed").is_some(), "{bmf}");
}

/// A 0-byte results file (a write cut short) is named and said to be empty,
/// not passed over: history goes on with the rest, spread refuses.
#[test]
fn an_empty_results_file_is_reported_by_history_and_refused_by_spread() {
    let dir = TempDir::new("history-empty");
    let fixture = workspace().join("runner/tests/fixtures/run-1.json");
    std::fs::copy(&fixture, dir.path().join("a.json")).unwrap();
    std::fs::copy(
        workspace().join("runner/tests/fixtures/run-2.json"),
        dir.path().join("b.json"),
    )
    .unwrap();
    std::fs::write(dir.path().join("empty.json"), b"").unwrap();
    let (code, _, err) = history(&[dir.path()], &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("empty.json") && err.contains("empty (0 bytes)"),
        "the empty file is reported:\n{err}"
    );
    let o = dbus_matrix(&["spread", dir.path().to_str().unwrap()]).output().unwrap();
    let msg = text(&o);
    assert_eq!(o.status.code(), Some(2), "{msg}");
    assert!(msg.contains("empty.json") && msg.contains("empty (0 bytes)"), "{msg}");
}
