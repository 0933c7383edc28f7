//! `dbus-matrix site`: built from every committed results file (docs/results,
//! subdirectories and old schemas included), it has a page per scenario, per
//! library and per run, fetches nothing, embeds `compare`'s own verdicts for a pair of
//! runs, charts the medians of the results files; a directory it did not
//! write is refused, one it wrote is rebuilt. The browser half (console
//! errors, the compare view picking runs) is scripts/site-browser-test.py.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::*;

fn site(args: &[&str]) -> std::process::Output {
    dbus_matrix(&["site"]).args(args).output().unwrap()
}

/// Every *.json under `dir`, subdirectories included.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(json_files(&p));
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("{e}: {}", &s[..s.len().min(400)]))
}

/// The JSON the compare page embeds.
fn compare_data(dir: &Path) -> serde_json::Value {
    let html = std::fs::read_to_string(dir.join("compare.html")).unwrap();
    let start = html.find("id=\"site-data\">").unwrap() + "id=\"site-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    json(&html[start..end].replace("<\\/", "</"))
}

/// `src=`/`href=` values that leave the site, and the ways CSS fetches.
fn network_references(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attr in ["src=\"", "href=\""] {
        for (i, _) in html.match_indices(attr) {
            let v: String = html[i + attr.len()..].chars().take_while(|c| *c != '"').collect();
            if v.contains("//") || v.starts_with("http") {
                found.push(v);
            }
        }
    }
    for bad in ["<link", "@import", "url(", "<iframe", "<img"] {
        if html.contains(bad) {
            found.push(bad.to_string());
        }
    }
    found
}

#[test]
fn the_committed_results_make_a_site() {
    let results = repo_root().join("docs/results");
    let files = json_files(&results);
    assert!(files.len() >= 10, "{files:?}");
    let tmp = TempDir::new("site");
    let out = tmp.path().join("site");
    let o = site(&[results.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        !text(&o).contains("skipped"),
        "every committed file loads: {}",
        text(&o)
    );
    assert!(text(&o).contains(&format!("{} runs", files.len())), "{}", text(&o));

    let pages: BTreeSet<String> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    let mut scenarios = BTreeSet::new();
    for f in &files {
        let r = validate(f);
        scenarios.extend(r.cells.iter().map(|c| c.scenario.clone()));
    }
    for s in &scenarios {
        let name: String = s
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        assert!(pages.contains(&format!("s-{name}.html")), "no page for {s}");
    }
    let mut adapters = BTreeSet::new();
    for f in &files {
        adapters.extend(validate(f).adapters.iter().map(|a| a.id.clone()));
    }
    for a in &adapters {
        // A row's id may hold `@` or `+` (`zbus-6@6.1.0`, `zbus-6+patch`): `_` in the page's
        // name, then `_` and a hash of the id (16 hex digits), so that ids never share a page.
        let name = a.replace(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'), "_");
        let found = if name == *a {
            pages.contains(&format!("l-{name}.html"))
        } else {
            pages.iter().any(|p| {
                p.strip_prefix(&format!("l-{name}_"))
                    .and_then(|rest| rest.strip_suffix(".html"))
                    .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            })
        };
        assert!(found, "no page for library {a}");
    }
    for n in 1..=files.len() {
        assert!(pages.contains(&format!("run-{n}.html")), "no run-{n}.html");
    }
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    for f in &files {
        let label = f.strip_prefix(&results).unwrap().display().to_string();
        assert!(index.contains(&format!("<code>{label}</code>")), "index lists {label}");
    }
    // A family's headline comes from the newest run of the whole matrix that
    // measured it, not from a newer small run (the zbus bisect measures only `call`).
    let whole_call_runs = files.iter().map(|f| validate(f)).filter(|r| {
        r.plan.as_ref().is_none_or(|p| {
            p.requested.adapters.is_empty() && p.requested.scenarios.is_empty() && p.requested.buses.is_empty()
        }) && r
            .cells
            .iter()
            .any(|c| c.scenario.starts_with("call/") && c.measurement().is_some())
    });
    let newest_whole = whole_call_runs.map(|r| r.run.started_at.clone()).max().unwrap();
    let heading = &index[index.find("id=\"family-call\"").expect("a call family")..];
    let heading = &heading[..heading.find("</h2>").unwrap()];
    assert!(
        heading.contains(&newest_whole),
        "family call from {newest_whole}: {heading}"
    );
    for p in &pages {
        if p.ends_with(".html") {
            let html = std::fs::read_to_string(out.join(p)).unwrap();
            assert_eq!(network_references(&html), Vec::<String>::new(), "{p}");
        }
    }

    // One chart: a point per ok cell of marshal/mixed in the files, each the file's median.
    let page = std::fs::read_to_string(out.join("s-marshal-mixed.html")).unwrap();
    let mut shown: Vec<String> = page
        .match_indices("class=\"pt\"")
        .map(|(i, _)| {
            let rest = &page[i..];
            let ns = &rest[rest.find("data-ns=\"").unwrap() + 9..];
            ns[..ns.find('"').unwrap()].to_string()
        })
        .collect();
    let mut expected: Vec<String> = files
        .iter()
        .flat_map(|f| {
            validate(f)
                .cells
                .iter()
                .filter(|c| c.scenario == "marshal/mixed")
                .filter_map(|c| c.median_ns())
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    shown.sort();
    expected.sort();
    assert!(!expected.is_empty());
    assert_eq!(shown, expected, "the chart's medians are the files'");

    // The compare view holds compare's verdicts: oldest against newest, both ways.
    let data = compare_data(&out);
    let runs = data["runs"].as_array().unwrap();
    let file_of = |i: usize| {
        let label = runs[i].as_str().unwrap();
        let name = &label[label.rfind('(').unwrap() + 1..label.len() - 1];
        results.join(name)
    };
    let letters = [
        ("broken", 'B'),
        ("missing", 'M'),
        ("dropped", 'D'),
        ("regressed", 'R'),
        ("improved", 'I'),
        ("unchanged", 'U'),
        ("fixed", 'F'),
        ("changed", 'C'),
    ];
    let keys = data["keys"].as_array().unwrap();
    let last = runs.len() - 1;
    for (a, b) in [(0, last), (last, 0), (1, 2)] {
        let o = dbus_matrix(&["compare", "--format", "json"])
            .arg(file_of(a))
            .arg(file_of(b))
            .output()
            .unwrap();
        let c = json(&String::from_utf8_lossy(&o.stdout));
        let mut want: Vec<(String, String, String, char)> = c["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|cell| {
                let v = cell["verdict"].as_str().unwrap();
                (
                    cell["adapter"].as_str().unwrap().to_string(),
                    cell["scenario"].as_str().unwrap().to_string(),
                    cell["bus"].as_str().unwrap_or("").to_string(),
                    letters.iter().find(|(w, _)| *w == v).unwrap().1,
                )
            })
            .collect();
        let verdicts = data["pairs"][format!("{a}-{b}")]["v"].as_str().unwrap();
        let mut got: Vec<(String, String, String, char)> = verdicts
            .chars()
            .enumerate()
            .filter(|(_, v)| *v != '.')
            .map(|(i, v)| {
                let k = &keys[i];
                (
                    k[0].as_str().unwrap().to_string(),
                    k[1].as_str().unwrap().to_string(),
                    k[2].as_str().unwrap().to_string(),
                    v,
                )
            })
            .collect();
        want.sort();
        got.sort();
        assert!(!want.is_empty());
        assert_eq!(got, want, "pair {a}-{b}");
    }

    // Built again in its own directory: the old pages go, the site is whole.
    std::fs::write(out.join("s-stale.html"), "old").unwrap();
    let o = site(&[results.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!out.join("s-stale.html").exists());
    assert!(out.join("index.html").is_file());
}

#[test]
fn bad_outputs_and_inputs_exit_2() {
    let tmp = TempDir::new("site-bad");
    let results = repo_root().join("docs/results/2026-11-23-quick.json");
    let results = results.to_str().unwrap();
    // A directory with other files: untouched.
    let foreign = tmp.path().join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("keep.html"), "mine").unwrap();
    let o = site(&[results, "--out", foreign.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("other files"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(foreign.join("keep.html")).unwrap(), "mine");
    // --out is a file.
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let o = site(&[results, "--out", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // Nothing to build from.
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = tmp.path().join("out").to_string_lossy().to_string();
    let o = site(&[empty.to_str().unwrap(), "--out", &out]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no results file"), "{}", text(&o));
    let o = site(&[tmp.path().join("nope.json").to_str().unwrap(), "--out", &out]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // A file that does not load is skipped, and said so; the rest builds.
    std::fs::write(empty.join("broken.json"), "{").unwrap();
    let o = site(&[empty.to_str().unwrap(), results, "--out", &out]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("skipped") && text(&o).contains("broken.json"),
        "{}",
        text(&o)
    );
    let o = site(&[results, "--out", &out, "--alpha", "2"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}
