//! Every report format labels each figure portable or machine-bound and
//! leads with the portable table (issue 30), over tests/fixtures/counted.json:
//! run-1.json with IPC instructions counted on four call/void cells (zbus-5
//! and rustbus-0.19 on dbus-daemon, zbus-5 peer to peer under callgrind;
//! dbus-0.9 on dbus-daemon by hardware counters, which are machine-bound)
//! and a cell whose counting failed with a note. Pinned byte for byte like
//! report_snapshots.rs, with the facts each format must keep asserted too.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn report(format: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_dbus-matrix"))
        .args(["report", "--format", format, "counted.json"])
        .current_dir(fixtures())
        .env_remove("DBUS_MATRIX_MATRIX")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "report --format {format}");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_fixture_is_a_valid_results_file() {
    let r = crate::common::validate(&fixtures().join("counted.json"));
    let counted = r
        .cells
        .iter()
        .filter_map(|c| c.measurement())
        .filter(|m| m.ipc_instructions.is_some());
    assert_eq!(counted.count(), 4);
}

#[test]
fn markdown_leads_with_the_portable_table() {
    let md = report("markdown");
    insta::assert_snapshot!("portable-markdown", md);
    let portable = md.find("## Portable figures").expect("the portable section");
    let matrix = md.find("| library | marshal/mixed").expect("the codec table");
    assert!(portable < matrix, "{md}");
    assert!(
        md.contains("| zbus 5.19.0 | dbus-daemon | call/void | 152 k | 98.0 k | – | 41.2 k | 2.0 |"),
        "{md}"
    );
    // Hardware counts are machine-bound: listed, but no instruction figure.
    assert!(
        md.contains("| dbus 0.9.12 | dbus-daemon | call/void | – | – | – | – |"),
        "{md}"
    );
}

/// The fields of a CSV line (RFC 4180 quoting: placements and reasons have commas).
fn fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

#[test]
fn csv_names_the_portable_figures_of_each_row() {
    let csv = report("csv");
    insta::assert_snapshot!("portable-csv", csv);
    let mut lines = csv.lines();
    let head = fields(lines.next().unwrap());
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let rows: Vec<Vec<String>> = lines.map(fields).collect();
    let row = |adapter: &str, scenario: &str, bus: &str| {
        rows.iter()
            .find(|r| r[0] == adapter && r[col("scenario")] == scenario && r[col("bus")] == bus)
            .unwrap()
    };
    let zbus = row("zbus-5", "call/void", "dbus-daemon");
    assert_eq!(zbus[col("client_instructions_per_op")], "152340");
    assert_eq!(zbus[col("instructions_method")], "callgrind");
    let figures = &zbus[col("portable_figures")];
    assert!(
        figures.starts_with("client_instructions_per_op;server_instructions_per_op;bus_instructions_per_op;"),
        "{figures}"
    );
    assert!(
        figures.contains("bus_syscalls_per_op") && figures.contains("bus_messages_per_op"),
        "{figures}"
    );
    for time in ["median_ns", "client_syscalls_per_op", "bus_cpu_ns_per_op"] {
        assert!(
            !figures.split(';').any(|f| f == time),
            "{time} is machine-bound: {figures}"
        );
    }
    let perf = &row("dbus-0.9", "call/void", "dbus-daemon")[col("portable_figures")];
    assert!(
        !perf.contains("instructions"),
        "hardware counts are machine-bound: {perf}"
    );
    let codec = &row("zbus-5", "marshal/mixed", "")[col("portable_figures")];
    assert_eq!(codec, "allocations_per_op;bytes_allocated_per_op;instructions_per_op");
}

#[test]
fn json_has_the_portable_table_and_a_label_per_figure() {
    let json = report("json");
    insta::assert_snapshot!("portable-json", json);
    let v: Value = serde_json::from_str(&json).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    let at = |k: &str| keys.iter().position(|x| *x == k).unwrap();
    assert!(at("portable") < at("tables"), "{keys:?}");
    assert_eq!(v["portability"]["median_ns"], "machine-bound");
    assert_eq!(v["portability"]["client_instructions_per_op"], "portable");
    let call = &v["portable"][0];
    assert_eq!(call["family"], "call");
    let zbus = call["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["adapter"] == "zbus-5" && r["bus"] == "dbus-daemon")
        .unwrap();
    assert_eq!(zbus["bus_instructions_per_op"], 41230.5);
    assert_eq!(zbus["bus_syscalls_per_op"], 12.0);
}

#[test]
fn bmf_labels_every_measure() {
    let bmf = report("bmf");
    insta::assert_snapshot!("portable-bmf", bmf);
    let v: Value = serde_json::from_str(&bmf).unwrap();
    for (bench, measures) in v.as_object().unwrap() {
        for (measure, m) in measures.as_object().unwrap() {
            let label = m["portability"].as_str().unwrap_or_default();
            assert!(["portable", "machine-bound"].contains(&label), "{bench} {measure}: {m}");
            assert!(m["value"].is_f64(), "{bench} {measure}: {m}");
        }
    }
    let zbus = &v["zbus-5/call/void@dbus-daemon"];
    assert_eq!(zbus["instructions-client"]["value"], 152340.0);
    assert_eq!(zbus["instructions-client"]["portability"], "portable");
    assert_eq!(zbus["bus-syscalls"]["portability"], "portable");
    assert_eq!(zbus["latency"]["portability"], "machine-bound");
    assert_eq!(zbus["cpu-time"]["portability"], "machine-bound");
    // Not every process has system calls here: no total, but the bus daemon's is portable.
    assert!(zbus.get("syscalls").is_none(), "{zbus}");
    let perf = &v["dbus-0.9/call/void@dbus-daemon"];
    assert_eq!(perf["instructions-client"]["portability"], "machine-bound");
}

#[test]
fn html_leads_with_the_legend_and_the_portable_table() {
    let html = report("html");
    insta::assert_snapshot!("portable-html", html);
    let legend = html.find("id=\"portable\"").unwrap();
    let table = html.find("<table class=\"portable\">").unwrap();
    let matrix = html.find("id=\"tables\"").unwrap();
    assert!(legend < table && table < matrix, "{html}");
    assert!(html.contains("<dt>machine-bound</dt><dd><code>wall</code>"), "{html}");
    assert!(html.contains("<td class=\"num\">152 k</td>"), "{html}");
}
