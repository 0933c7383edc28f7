//! IPC cells below the raw-socket floor (floor ratio < 1) carry a footnote
//! saying why, in the Markdown and the HTML report; the committed quick
//! table (docs/results/) is exactly what `report` renders from its JSON.

use crate::common::*;

const QUICK: &str = "docs/results/2026-11-23-quick";

fn report(format: &str) -> String {
    let json = repo_root().join(format!("{QUICK}.json"));
    let o = dbus_matrix(&["report", "--format", format, json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// The footnote number a cell text such as `35.2 µs (1.00×, 0.55× floor [12])` carries.
fn note_of(markdown: &str, row: &str, floor: &str) -> usize {
    let line = markdown
        .lines()
        .find(|l| l.starts_with(&format!("| {row} ")) && l.contains(floor))
        .unwrap_or_else(|| panic!("no row {row} with {floor}"));
    let at = line.find(floor).unwrap() + floor.len();
    let rest = line[at..]
        .strip_prefix(" [")
        .unwrap_or_else(|| panic!("no footnote after {floor}: {line}"));
    rest[..rest.find(']').unwrap()].parse().unwrap()
}

fn note_text(markdown: &str, n: usize) -> String {
    let prefix = format!("[{n}] ");
    markdown
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no footnote [{n}]"))
        .to_string()
}

#[test]
fn cells_below_the_floor_say_why_in_markdown_and_html() {
    let md = report("markdown");
    // The two signal cells of dbus-bytestream on dbus-daemon: scheduling, not less work.
    for floor in ["0.55× floor", "0.32× floor"] {
        let n = note_of(&md, "dbus-bytestream 0.1.4", floor);
        let note = note_text(&md, n);
        assert!(
            note.starts_with("below the raw-socket floor, yet not less work"),
            "{note}"
        );
        assert!(note.contains("vCPU") && note.contains("--pin"), "{note}");
    }
    // zbus' cached property reads: no message at all.
    let n = note_of(&md, "zbus 6.2.1", "0.04× floor");
    assert!(note_text(&md, n).contains("property cache"), "{}", note_text(&md, n));
    // No ratio below 1 without its footnote.
    for line in md.lines().filter(|l| l.starts_with('|')) {
        for (at, mark) in line.match_indices("× floor") {
            let number = line[..at].rsplit([' ', '(']).next().unwrap();
            let ratio: f64 = number.parse().unwrap_or_else(|_| panic!("{number:?} in {line}"));
            if ratio < 1.0 {
                let after = &line[at + mark.len()..];
                assert!(after.starts_with(" ["), "a floor ratio below 1 without a note: {line}");
            }
        }
    }
    let html = report("html");
    assert!(
        html.contains("0.55× floor<sup><a href=\"#note-"),
        "no note on the HTML cell"
    );
    assert!(html.contains("below the raw-socket floor, yet not less work"));
}

#[test]
fn the_committed_quick_table_is_the_report_of_its_json() {
    let committed = std::fs::read_to_string(repo_root().join(format!("{QUICK}.md"))).unwrap();
    assert!(
        committed == report("markdown"),
        "{QUICK}.md differs from `dbus-matrix report {QUICK}.json`: regenerate it"
    );
}
