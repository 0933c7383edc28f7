//! Every report format pinned byte for byte over a small fixed pair of runs
//! (tests/fixtures/run-1.json and run-2.json: four adapters, codec and IPC
//! cells on dbus-daemon and p2p, unsupported and failed cells, instruction
//! counts, costs, floor ratios; run 2 regresses, improves, fixes, breaks and
//! drops a cell). Any change of output fails here: review it with
//! `cargo insta review` and commit the new `.snap` files with the change.
//! A missing snapshot fails too (insta writes `.snap.new` and fails; on CI,
//! `CI=true`, it writes nothing).

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Runs `dbus-matrix ARGS` in the fixtures directory (so file names in the
/// output are relative and the same on every machine); returns the exit code
/// and stdout.
fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dbus-matrix"))
        .args(args)
        .current_dir(fixtures())
        .env_remove("DBUS_MATRIX_MATRIX")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.stderr.is_empty(),
        "dbus-matrix {args:?} wrote to stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), stdout)
}

fn report(format: &str) -> String {
    let (code, out) = run(&["report", "--format", format, "run-1.json"]);
    assert_eq!(code, Some(0), "report --format {format}");
    out
}

#[test]
fn report_markdown() {
    insta::assert_snapshot!("report-markdown", report("markdown"));
}

#[test]
fn report_csv() {
    insta::assert_snapshot!("report-csv", report("csv"));
}

#[test]
fn report_json() {
    insta::assert_snapshot!("report-json", report("json"));
}

#[test]
fn report_bmf() {
    insta::assert_snapshot!("report-bmf", report("bmf"));
}

#[test]
fn report_html() {
    insta::assert_snapshot!("report-html", report("html"));
}

#[test]
fn report_critcmp() {
    insta::assert_snapshot!("report-critcmp", report("critcmp"));
    let (code, named) = run(&["report", "--format", "critcmp", "--baseline", "before", "run-2.json"]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("report-critcmp-named", named);
}

#[test]
fn compare_markdown_and_json() {
    // Run 2 regresses and breaks cells: exit 1.
    let (code, md) = run(&["compare", "run-1.json", "run-2.json"]);
    assert_eq!(code, Some(1));
    insta::assert_snapshot!("compare-markdown", md);
    let (code, json) = run(&["compare", "--format", "json", "run-1.json", "run-2.json"]);
    assert_eq!(code, Some(1));
    insta::assert_snapshot!("compare-json", json);
    // The reverse: improvements and a fix, one broken cell again.
    let (_, reverse) = run(&["compare", "run-2.json", "run-1.json", "--adapters", "zbus-5,dbus-0.9"]);
    insta::assert_snapshot!("compare-markdown-reverse-filtered", reverse);
}

#[test]
fn compare_pr_comment() {
    // The same gate as the other formats: run 2 regresses and breaks cells.
    let (code, pr) = run(&["compare", "--format", "pr", "run-1.json", "run-2.json"]);
    assert_eq!(code, Some(1));
    insta::assert_snapshot!("compare-pr", pr);
}

#[test]
fn history_markdown_and_json() {
    let (code, md) = run(&["history", "run-2.json", "run-1.json"]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("history-markdown", md);
    let (code, json) = run(&["history", "--format", "json", "run-1.json", "run-2.json"]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("history-json", json);
}

// Runs measured in rounds (tests/fixtures/rounds-1.json and rounds-2.json,
// built from run-1.json): the profile asks for 3 rounds, up to 5, and a
// target width of 0.05. dbus-0.9 marshal/mixed (5 rounds, width 0.077),
// dbus-0.9 call/void (0.057) and rustbus-0.19 call/void (5 rounds, 0.40)
// are above the target; dbus-0.9 connect/hello was cut. Run 2: zbus-5
// marshal/mixed is 10% slower with rounds that overlap run 1's (unchanged),
// rustbus-0.19 marshal/mixed 10% slower with rounds apart from run 1's
// (regressed); both have samples 10% slower, which the rank test alone
// would call significant.

const CUT_NOTE: &str = "dbus-0.9 connect/hello cut, timed once: one operation took 2.41 s, over the cell budget of 1 s";

fn report_of(file: &str, format: &str) -> String {
    let (code, out) = run(&["report", "--format", format, file]);
    assert_eq!(code, Some(0), "report --format {format} {file}");
    out
}

#[test]
fn rounds_fixtures_are_valid_results_files() {
    for f in ["rounds-1.json", "rounds-2.json"] {
        let r = crate::common::validate(&fixtures().join(f));
        let rounds = r
            .cells
            .iter()
            .filter_map(|c| c.measurement())
            .filter(|m| m.wall.round_medians_ns.len() >= 2);
        assert_eq!(rounds.count(), 12, "{f}");
    }
}

#[test]
fn report_rounds_markdown_flags_wide_cells_and_notes_the_cut() {
    let md = report_of("rounds-1.json", "markdown");
    insta::assert_snapshot!("rounds-report-markdown", md);
    // ± half the relative width: 12000 / 156000 / 2 = 3.8%, above the target: flagged.
    assert!(
        md.contains("| dbus 0.9.12 | 156 µs ±3.8%‡ (70.91×, 5 rounds) |"),
        "flagged, and more rounds than planned:\n{md}"
    );
    // 140 / 11450 / 2 = 0.61%: below the target, no flag, the planned 3 rounds not repeated.
    assert!(md.contains("| zbus 5.19.0 | 11.4 µs ±0.61% (5.20×) |"), "{md}");
    assert_eq!(
        md.matches('‡').count(),
        3 + 1,
        "three flagged cells and the legend:\n{md}"
    );
    assert!(
        md.contains("‡: wider than the profile's target width 0.05 (±2.5%): 3 of 13 timed cells."),
        "{md}"
    );
    let cut = md
        .lines()
        .find(|l| l.ends_with(CUT_NOTE))
        .unwrap_or_else(|| panic!("no cut footnote:\n{md}"));
    let n = cut.trim_start_matches('[').split(']').next().unwrap();
    assert!(
        md.contains(&format!(" | 2.41 s (9488.19×, cut [{n}]) |")),
        "no width, the footnote:\n{md}"
    );
    // One-round files: widths, no flags (no target), no rounds.
    let old = report("markdown");
    assert!(old.contains("| zbus 5.19.0 | 11.5 µs ±0.26% (5.21×) |"), "{old}");
    assert!(
        !old.contains('‡') && !old.contains(" rounds)") && !old.contains("Every timed cell"),
        "{old}"
    );
}

/// The rows of a CSV report by `adapter/scenario[@bus]`, each a map by column.
fn csv_rows(csv: &str) -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            // The fixtures' reasons and cut notes have commas only in the quoted last fields.
            let mut fields: Vec<String> = Vec::new();
            let mut rest = l;
            while !rest.is_empty() || fields.len() < header.len() {
                if let Some(q) = rest.strip_prefix('"') {
                    let end = q.find("\",").map_or(q.len() - 1, |i| i);
                    fields.push(q[..end].to_string());
                    rest = q.get(end + 2..).unwrap_or("");
                } else {
                    let (f, r) = rest.split_once(',').unwrap_or((rest, ""));
                    fields.push(f.to_string());
                    rest = r;
                }
            }
            let row: std::collections::BTreeMap<String, String> =
                header.iter().map(|h| h.to_string()).zip(fields).collect();
            let bus = if row["bus"].is_empty() {
                String::new()
            } else {
                format!("@{}", row["bus"])
            };
            (format!("{}/{}{bus}", row["adapter"], row["scenario"]), row)
        })
        .collect()
}

#[test]
fn report_rounds_csv_and_json_carry_width_rounds_flag_and_cut() {
    let csv = report_of("rounds-1.json", "csv");
    insta::assert_snapshot!("rounds-report-csv", csv);
    let rows = csv_rows(&csv);
    let wide = &rows["dbus-0.9/marshal/mixed"];
    let width: f64 = wide["ci_width"].parse().unwrap();
    assert!((width - 12_000.0 / 156_000.0).abs() < 1e-12, "{width}");
    assert_eq!((wide["rounds"].as_str(), wide["above_target"].as_str()), ("5", "true"));
    let narrow = &rows["zbus-5/marshal/mixed"];
    assert_eq!(
        (narrow["rounds"].as_str(), narrow["above_target"].as_str()),
        ("3", "false")
    );
    let cut = &rows["dbus-0.9/connect/hello@dbus-daemon"];
    assert_eq!(cut["ci_width"], "", "a cut cell has no interval");
    assert_eq!(cut["above_target"], "false");
    assert_eq!(cut["cut"], "one operation took 2.41 s, over the cell budget of 1 s");
    let failed = &rows["dbus-0.9/demarshal/mixed"];
    assert_eq!((failed["ci_width"].as_str(), failed["rounds"].as_str()), ("", ""));
    // One round, no target: width and rounds, no flag.
    let old = csv_rows(&report("csv"));
    assert_eq!(old["zbus-5/marshal/mixed"]["rounds"], "1");
    assert_eq!(old["zbus-5/marshal/mixed"]["above_target"], "");

    let json = report_of("rounds-1.json", "json");
    insta::assert_snapshot!("rounds-report-json", json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["target_width"], 0.05);
    let codec = &v["tables"][0];
    let dbus = codec["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["adapter"] == "dbus-0.9")
        .unwrap();
    let cell = &dbus["cells"][0];
    assert_eq!(
        (&cell["rounds"], &cell["above_target"], &cell["cut"]),
        (&5.into(), &true.into(), &serde_json::Value::Null)
    );
    assert!((cell["ci_width"].as_f64().unwrap() - 12_000.0 / 156_000.0).abs() < 1e-12);
    let bus = &v["tables"][1];
    let col = bus["columns"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c == "connect/hello")
        .unwrap();
    let dbus = bus["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["adapter"] == "dbus-0.9")
        .unwrap();
    let cut = &dbus["cells"][col];
    assert_eq!(cut["cut"], "one operation took 2.41 s, over the cell budget of 1 s");
    assert_eq!(
        (&cut["ci_width"], &cut["above_target"]),
        (&serde_json::Value::Null, &false.into())
    );
}

#[test]
fn report_rounds_html_and_bmf() {
    let html = report_of("rounds-1.json", "html");
    insta::assert_snapshot!("rounds-report-html", html);
    assert_eq!(
        html.matches(" wide\" title=").count(),
        3,
        "three flagged cells:\n{html}"
    );
    assert!(html.contains("<span class=\"width\">±3.8%‡</span>"), "{html}");
    assert!(html.contains("<span class=\"width\">±0.61%</span>"), "{html}");
    assert!(html.contains("<span class=\"cut\">cut</span>"), "{html}");
    assert!(html.contains(CUT_NOTE), "{html}");
    assert!(html.contains("3 of 13 timed cells"), "the legend:\n{html}");

    // BMF's latency interval is the median's: here the between-round one.
    let bmf: serde_json::Value = serde_json::from_str(&report_of("rounds-1.json", "bmf")).unwrap();
    let latency = &bmf["dbus-0.9/marshal/mixed"]["latency"];
    assert_eq!(
        (&latency["value"], &latency["lower_value"], &latency["upper_value"]),
        (&156_000.0.into(), &148_000.0.into(), &160_000.0.into())
    );
}

/// (verdict, test) of the wall metric of each compared cell, by `adapter/scenario[@bus]`.
fn wall_tests(json: &str) -> std::collections::BTreeMap<String, (String, String)> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.get("wall_median_ns").is_some())
        .map(|c| {
            let bus = c["bus"].as_str().map_or(String::new(), |b| format!("@{b}"));
            let key = format!(
                "{}/{}{bus}",
                c["adapter"].as_str().unwrap(),
                c["scenario"].as_str().unwrap()
            );
            let m = &c["wall_median_ns"];
            (
                key,
                (
                    m["verdict"].as_str().unwrap().to_string(),
                    m["test"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

#[test]
fn compare_rounds_decides_on_the_between_round_intervals() {
    let (code, json) = run(&["compare", "--format", "json", "rounds-1.json", "rounds-2.json"]);
    assert_eq!(code, Some(1), "a regression fails the gate:\n{json}");
    let tests = wall_tests(&json);
    let pair = |v: &str, t: &str| (v.to_string(), t.to_string());
    assert_eq!(
        tests["zbus-5/marshal/mixed"],
        pair("unchanged", "round-intervals"),
        "10% slower, intervals overlap"
    );
    assert_eq!(
        tests["rustbus-0.19/marshal/mixed"],
        pair("regressed", "round-intervals"),
        "10% slower, intervals apart"
    );
    // The cut cell: one round of one sample, so neither rounds nor ranks: criterion-style overlap.
    assert_eq!(tests["dbus-0.9/connect/hello@dbus-daemon"].1, "ci-overlap");
    let (_, md) = run(&["compare", "rounds-1.json", "rounds-2.json"]);
    insta::assert_snapshot!("rounds-compare-markdown", md);
    assert!(
        md.contains("12 cells measured in several rounds in both runs (p column `round-intervals`)"),
        "{md}"
    );

    // One-round files: the rank test on the samples, as before.
    let (_, json) = run(&["compare", "--format", "json", "run-1.json", "run-2.json"]);
    let tests = wall_tests(&json);
    assert!(!tests.is_empty());
    for (cell, (_, test)) in &tests {
        assert_eq!(test, "mann-whitney", "{cell}");
    }
    let (_, md) = run(&["compare", "run-1.json", "run-2.json"]);
    assert!(!md.contains("round-intervals"), "{md}");
}

#[test]
fn history_rounds_steps_on_the_between_round_intervals() {
    let (code, json) = run(&["history", "--format", "json", "rounds-1.json", "rounds-2.json"]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let point = |adapter: &str| {
        v["series"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["adapter"] == adapter && s["scenario"] == "marshal/mixed")
            .map(|s| s["points"][1].clone())
            .unwrap()
    };
    assert_eq!(point("rustbus-0.19")["step"], "up", "{json}");
    assert_eq!(point("rustbus-0.19")["round_intervals"], true);
    assert_eq!(
        point("zbus-5")["step"],
        serde_json::Value::Null,
        "intervals overlap:\n{json}"
    );
    let (_, md) = run(&["history", "rounds-1.json", "rounds-2.json"]);
    assert!(
        md.contains("the 95% intervals of the two medians, from the variation between rounds, decide"),
        "{md}"
    );
    let (_, old) = run(&["history", "--format", "json", "run-1.json", "run-2.json"]);
    assert!(!old.contains("round_intervals"), "{old}");
}
