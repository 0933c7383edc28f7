//! Issue 42: hostile ids and strings through every reader and writer. A
//! committed results file is rewritten with each string of a corpus as its
//! adapter ids, scenario ids, library versions, revision and environment
//! strings (a newline, a table's `|`, `</details>`, `<!--`, HTML, a
//! right-to-left override, a NUL, a path, 100,000 characters); then every
//! command that reads results (`report` in each format, `compare` in each,
//! `history`, `spread`, `site`) runs on it. Each must end with exit 0 (or 2
//! with a message), never a panic or a signal; the PR comment stays under
//! GitHub's limit with its `<details>` balanced and no line break smuggled
//! into a table row; the site writes only inside its directory, names that
//! fit a file system, and one page per id.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

/// A results file of the test fixtures (the Nix sandbox's check has no docs/).
fn source_path() -> PathBuf {
    workspace().join("runner/tests/fixtures/run-1.json")
}

/// The corpus: each string once as every id and text of the file.
fn corpus() -> Vec<String> {
    vec![
        "two\nlines".into(),
        "a|b|c".into(),
        "</details><!-- x".into(),
        "<script>alert(1)</script>&amp;".into(),
        "`code` **bold** [l](javascript:x)".into(),
        "\u{202e}txet\u{200b}é漢".into(),
        "nul\u{0}byte".into(),
        "../../../etc/passwd".into(),
        "x".repeat(100_000),
    ]
}

/// Every string `from` anywhere in `v` (keys left alone) becomes `to`.
fn replace_strings(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::String(s) if s == from => *s = to.to_owned(),
        Value::Array(items) => items.iter_mut().for_each(|i| replace_strings(i, from, to)),
        Value::Object(map) => map.values_mut().for_each(|i| replace_strings(i, from, to)),
        _ => {}
    }
}

/// The source file with `hostile` in every id and text, each id still distinct.
fn hostile_copy(source: &Value, hostile: &str) -> Value {
    let mut v = source.clone();
    let ids: Vec<String> = {
        let mut ids: Vec<String> = ["adapter", "scenario"]
            .iter()
            .flat_map(|k| {
                v["cells"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(move |c| c[*k].as_str().unwrap().to_owned())
            })
            .collect();
        ids.sort();
        ids.dedup();
        ids
    };
    for (i, id) in ids.iter().enumerate() {
        replace_strings(&mut v, id, &format!("{hostile}{i}"));
    }
    for key in ["cpu_model", "kernel", "os", "rustc"] {
        v["environment"][key] = Value::String(hostile.to_owned());
    }
    v["run"]["revision"] = Value::String(hostile.to_owned());
    v
}

/// Runs the runner with `args`; exit 0 (1: `compare` and `history` found a
/// regression) or 2 with a message, never a panic or a signal. Its stdout.
fn reads(args: &[&str], what: &str) -> String {
    let o = dbus_matrix(args).output().unwrap();
    let log = text(&o);
    match o.status.code() {
        Some(0 | 1) => String::from_utf8_lossy(&o.stdout).into_owned(),
        Some(2) => {
            assert!(o.stderr.len() > 10, "{what}: exit 2 without a message");
            String::new()
        }
        other => panic!("{what}: exit {other:?}:\n{}", &log[..log.len().min(4000)]),
    }
}

/// Every file under `dir`, its path relative to `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            found.extend(files_under(&p));
        } else {
            found.push(p);
        }
    }
    found
}

#[test]
fn hostile_ids_and_strings_pass_through_every_reader() {
    let dir = TempDir::new("hostile-corpus");
    let source_path = source_path();
    let source: Value = serde_json::from_slice(&std::fs::read(&source_path).unwrap()).unwrap();
    let old = source_path.to_str().unwrap();
    for (n, hostile) in corpus().iter().enumerate() {
        let what = format!("corpus string {n} ({:?})", &hostile[..hostile.len().min(40)]);
        let file = dir.path().join(format!("hostile-{n}.json"));
        std::fs::write(
            &file,
            serde_json::to_vec_pretty(&hostile_copy(&source, hostile)).unwrap(),
        )
        .unwrap();
        let new = file.to_str().unwrap();

        for format in ["markdown", "csv", "json", "bmf", "html", "critcmp", "hydra-metrics"] {
            reads(
                &["report", new, "--format", format],
                &format!("{what}: report --format {format}"),
            );
        }
        reads(
            &["compare", old, new, "--format", "json"],
            &format!("{what}: compare --format json"),
        );
        let md = reads(
            &["compare", old, new, "--format", "markdown"],
            &format!("{what}: compare --format markdown"),
        );
        let pr = reads(
            &["compare", old, new, "--format", "pr"],
            &format!("{what}: compare --format pr"),
        );
        // A line break of a string never reaches the output as one.
        if let Some((_, tail)) = hostile.split_once('\n') {
            for (name, out) in [("markdown", &md), ("pr", &pr)] {
                assert!(
                    !out.lines().any(|l| l.trim_start().starts_with(tail)),
                    "{what}: compare --format {name} broke a line:\n{out}"
                );
            }
        }
        assert!(pr.len() <= 65_536, "{what}: the PR comment has {} bytes", pr.len());
        assert_eq!(
            pr.matches("<details>").count(),
            pr.matches("</details>").count(),
            "{what}: a string closed the comment's <details>"
        );
        for line in pr.lines().filter(|l| l.starts_with('|')) {
            assert!(
                line.trim_end().ends_with('|'),
                "{what}: a table row was broken: {line:?}"
            );
        }
        reads(&["history", old, new], &format!("{what}: history"));
        reads(&["spread", old, new, "--allow-mixed"], &format!("{what}: spread"));

        let site = dir.path().join(format!("site-{n}"));
        reads(
            &["site", old, new, "--out", site.to_str().unwrap()],
            &format!("{what}: site"),
        );
        if site.exists() {
            let pages = files_under(&site);
            for p in &pages {
                assert!(p.starts_with(&site), "{what}: the site wrote {}", p.display());
                let name = p.file_name().unwrap().as_encoded_bytes().len();
                assert!(name <= 255, "{what}: a page name of {name} bytes");
            }
            let library_pages = pages
                .iter()
                .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("l-"))
                .count();
            assert!(library_pages >= 2, "{what}: one page per library, not {library_pages}");
        }
    }
    // Nothing was written beside the inputs.
    let left: Vec<_> = std::fs::read_dir(source_path.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "temp files beside the committed results: {left:?}");
}
