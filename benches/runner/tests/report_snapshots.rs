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
fn history_markdown_and_json() {
    let (code, md) = run(&["history", "run-2.json", "run-1.json"]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("history-markdown", md);
    let (code, json) = run(&["history", "--format", "json", "run-1.json", "run-2.json"]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("history-json", json);
}
