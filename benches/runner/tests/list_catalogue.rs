//! `dbus-matrix list` reads like a catalogue: per adapter, one line per
//! scenario family with how many of its scenarios are unsupported (the
//! adapter's own listing is the truth) and the first reason, no line a
//! hundred ids long; `--verbose` keeps every unsupported id.

use crate::common::*;

fn list(verbose: bool) -> String {
    let matrix = repo_matrix();
    let mut args = vec!["--matrix", matrix.to_str().unwrap(), "list"];
    if verbose {
        args.push("--verbose");
    }
    let o = dbus_matrix(&args).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

/// The lines of `adapter` in `list`'s output: its own and the indented ones below it.
fn block<'a>(out: &'a str, adapter: &str) -> Vec<&'a str> {
    let mut lines = out.lines().skip_while(|l| l.split_whitespace().next() != Some(adapter));
    let head = lines.next().unwrap_or_else(|| panic!("no line for {adapter}:\n{out}"));
    let mut block = vec![head];
    block.extend(lines.take_while(|l| l.starts_with(&" ".repeat(27))));
    block
}

/// The matrix's scenario ids the adapter's own listing says it does not support.
fn unsupported(a: &RepoAdapter, matrix_ids: &[String]) -> Vec<String> {
    let o = a.command().arg("list").output().unwrap();
    assert!(o.status.success(), "{} list: {}", a.id, text(&o));
    let l: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    matrix_ids
        .iter()
        .filter(|id| {
            l["scenarios"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["id"] == id.as_str() && s["supported"] == false)
        })
        .cloned()
        .collect()
}

fn matrix_ids() -> Vec<String> {
    let m: toml::Value = toml::from_str(&std::fs::read_to_string(repo_matrix()).unwrap()).unwrap();
    m["scenario"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn list_summarises_unsupported_scenarios_per_family_and_verbose_keeps_every_id() {
    let ids = matrix_ids();
    let family = |id: &str| id.split('/').next().unwrap().to_owned();
    let summary = list(false);
    let verbose = list(true);
    // The family lines (indented under their adapter): none a hundred ids long.
    for line in summary.lines().filter(|l| l.starts_with(&" ".repeat(27))) {
        assert!(
            line.chars().count() <= 200,
            "a line of {} characters:\n{line}",
            line.chars().count()
        );
    }
    // The premise: some adapter has about a hundred unsupported ids, once on
    // one line (raw and dbus-message-parser-4 have no transport; tokio-dbus
    // too when run as root, not as the Nix sandbox's build user).
    assert!(repo_adapters().iter().any(|a| unsupported(a, &ids).len() > 50));
    for a in repo_adapters() {
        // A row this build mode cannot have (ruby-dbus in Nix): one line, the
        // runner's reason; the adapter itself cannot run to list anything.
        if let Some(reason) = unavailable_here(&a.id) {
            for out in [&summary, &verbose] {
                let lines = block(out, &a.id);
                assert_eq!(lines.len(), 1, "{}: {lines:?}", a.id);
                assert!(lines[0].ends_with(&format!("not available: {reason}")), "{}", lines[0]);
            }
            continue;
        }
        let missing = unsupported(&a, &ids);
        let short = block(&summary, &a.id);
        let long = block(&verbose, &a.id).join("\n");
        let mut families: Vec<String> = Vec::new();
        for f in missing.iter().map(|id| family(id)) {
            if !families.contains(&f) {
                families.push(f);
            }
        }
        assert_eq!(
            short.len(),
            1 + families.len(),
            "{}: one line per family:\n{}",
            a.id,
            short.join("\n")
        );
        for f in &families {
            let n = missing.iter().filter(|id| family(id) == *f).count();
            let total = ids.iter().filter(|id| family(id) == *f).count();
            let first = missing.iter().find(|id| family(id) == *f).unwrap();
            let expected = format!("{f}: {n} of {total} unsupported; {first}: ");
            assert!(
                short.iter().any(|l| l.trim_start().starts_with(&expected)),
                "{}: no {expected:?} in\n{}",
                a.id,
                short.join("\n")
            );
        }
        for id in &missing {
            // Whole ids: followed by a comma or the colon before the reason.
            assert!(
                long.contains(&format!("{id},")) || long.contains(&format!("{id}: ")),
                "{}: --verbose lacks {id}:\n{long}",
                a.id
            );
        }
    }
}
