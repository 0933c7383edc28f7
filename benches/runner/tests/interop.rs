//! `dbus-matrix interop`: every client against every server, untimed. Every
//! library interoperates with itself and with the reference, both ways; a
//! broken server is reported as a failed pair with the client's reason, and
//! the table lands in a results file whose reports show it.

use crate::common::*;
use harness::results::{InteropStatus, InteropTable, ResultsFile};

fn table_of(o: &std::process::Output) -> InteropTable {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not an interop table ({e}): {}", text(o)))
}

#[test]
fn every_library_interoperates_with_itself_and_the_reference() {
    let m: toml::Value = toml::from_str(&std::fs::read_to_string(repo_matrix()).unwrap()).unwrap();
    let reference = m["roles"]["reference"].as_str().unwrap().to_string();
    let libraries: Vec<String> = m["adapter"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| !a.get("baseline").and_then(|b| b.as_bool()).unwrap_or(false))
        .map(|a| a["id"].as_str().unwrap().to_string())
        .collect();
    let o = dbus_matrix(&[
        "--matrix",
        repo_matrix().to_str().unwrap(),
        "interop",
        "--pairs",
        "reference",
        "--format",
        "json",
        "--quiet",
    ])
    .output()
    .unwrap();
    let t = table_of(&o);
    assert_eq!(
        t.checks,
        ["call/void", "call/in-out-string", "call/relation-set", "property/get"]
    );
    assert_eq!(t.bus, "dbus-daemon");
    let failed: Vec<String> = t
        .pairs
        .iter()
        .flat_map(|p| {
            p.failed()
                .map(move |c| format!("{} → {} {}: {:?}", p.client, p.server, c.scenario, c.reason))
        })
        .collect();
    assert!(failed.is_empty(), "failed pairs:\n{}", failed.join("\n"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The reference does every check, so against itself all four ran and passed.
    let own = t.pair(&reference, &reference).expect("the reference against itself");
    assert!(own.checks.iter().all(|c| c.status == InteropStatus::Passed), "{own:?}");
    for a in &libraries {
        for (client, server) in [(a, a), (a, &reference), (&reference, a)] {
            let p = t
                .pair(client, server)
                .unwrap_or_else(|| panic!("no pair {client} → {server}"));
            assert_eq!(p.checks.len(), t.checks.len());
            for c in &p.checks {
                assert!(
                    c.status == InteropStatus::Passed || c.reason.as_deref().is_some_and(|r| !r.is_empty()),
                    "{client} → {server} {}: unsupported without a reason",
                    c.scenario
                );
            }
        }
    }
}

#[test]
fn a_broken_server_fails_its_pairs_with_the_reason_and_the_report_shows_it() {
    let scenarios = ["call/void", "call/echo-bytes/64"];
    let setup = fault_setup_with_buses(
        "interop",
        &["fault-ok", "fault-wrong-reply"],
        &scenarios,
        &["dbus-daemon"],
    );
    // A results file to record the table into.
    let o = setup
        .command(&["run", "--profile", "smoke", "--quiet", "--out"])
        .arg(setup.out())
        .args(["--scenarios", "call/void"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let file = results_file(&setup.out());
    let o = setup
        .command(&[
            "interop",
            "--checks",
            "call/void,call/echo-bytes/64",
            "--format",
            "json",
            "--quiet",
            "--into",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "a failed pair exits 1: {}", text(&o));
    let t = table_of(&o);
    assert_eq!(t.pairs.len(), 4, "every client against every server");
    let pair = |c: &str, s: &str| t.pair(c, s).unwrap_or_else(|| panic!("no pair {c} → {s}"));
    for client in ["fault-ok", "fault-wrong-reply"] {
        // Its client is sound: it passes against the sound server...
        assert!(pair(client, "fault-ok").passed(), "{:?}", pair(client, "fault-ok"));
        // ...and every client of the broken server fails the echo, saying why.
        let broken = pair(client, "fault-wrong-reply");
        assert_eq!(broken.checks[0].status, InteropStatus::Passed, "call/void is answered");
        let echo = &broken.checks[1];
        assert_eq!(
            (echo.scenario.as_str(), echo.status),
            ("call/echo-bytes/64", InteropStatus::Failed)
        );
        let reason = echo.reason.as_deref().unwrap();
        assert!(reason.contains("verification failed: received digest"), "{reason}");
        assert!(!reason.contains('\n'), "one line: {reason}");
    }
    // Recorded in the file (schema-valid), shown by the reports.
    let r: ResultsFile = validate(&file);
    assert_eq!(r.interop.as_ref(), Some(&t));
    let md = dbus_matrix(&["report", file.to_str().unwrap()]).output().unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.contains("### interop: client (row) × server (column)"), "{md}");
    assert!(md.contains("| fault-ok | 2/2 | 1/2 ✗ [i1] |"), "{md}");
    assert!(
        md.contains("[i1] fault-ok → fault-wrong-reply: call/echo-bytes/64: "),
        "{md}"
    );
    let html = dbus_matrix(&["report", file.to_str().unwrap(), "--format", "html"])
        .output()
        .unwrap();
    let html = String::from_utf8(html.stdout).unwrap();
    assert!(
        html.contains("<h2 id=\"interop\">Interop"),
        "the page has the interop table"
    );
    assert!(html.contains("verification failed: received digest"));
}

#[test]
fn interop_refuses_bad_input() {
    for args in [
        &["interop", "--checks", "marshal/mixed"][..],
        &["interop", "--adapters", "nope"],
        &["interop", "--bus", "nope"],
        &["interop", "--pairs", "some"],
    ] {
        let o = dbus_matrix(&[&["--matrix", repo_matrix().to_str().unwrap()][..], args].concat())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    }
}

#[test]
fn run_with_interop_records_the_table_of_its_adapters_and_prints_it() {
    let out = TempDir::new("run-interop");
    let o = smoke_run_of_repo(
        out.path(),
        &[
            "--adapters",
            "zbus-6,rustbus-0.19",
            "--scenarios",
            "call/void",
            "--buses",
            "p2p,dbus-daemon",
            "--roles",
            "same",
            "--interop",
            "reference",
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // Printed with the run's tables, and recorded in its results file.
    assert!(
        text(&o).contains("### interop: client (row) × server (column)"),
        "{}",
        text(&o)
    );
    let r = validate(&results_file(out.path()));
    let t = r.interop.expect("the run recorded its interop table");
    assert_eq!(t.bus, "dbus-daemon", "dbus-daemon, not the run's first bus");
    assert_eq!(
        t.checks,
        ["call/void", "call/in-out-string", "call/relation-set", "property/get"]
    );
    // The run's adapters, each with itself and with the reference (sd-bus), both ways.
    let mut pairs: Vec<(String, String)> = t.pairs.iter().map(|p| (p.client.clone(), p.server.clone())).collect();
    pairs.sort();
    let want = [
        ("rustbus-0.19", "rustbus-0.19"),
        ("rustbus-0.19", "systemd-0.11"),
        ("systemd-0.11", "rustbus-0.19"),
        ("systemd-0.11", "systemd-0.11"),
        ("systemd-0.11", "zbus-6"),
        ("zbus-6", "systemd-0.11"),
        ("zbus-6", "zbus-6"),
    ];
    assert_eq!(
        pairs,
        want.map(|(c, s)| (c.to_string(), s.to_string())).to_vec(),
        "{t:?}"
    );
    assert!(t.pairs.iter().all(|p| p.passed()), "{t:?}");
}

#[test]
fn run_with_interop_refuses_bad_pairs_and_the_system_bus() {
    for args in [
        &["run", "--interop", "some"][..],
        &["run", "--interop", "all", "--system-bus"],
    ] {
        let o = dbus_matrix(&[&["--matrix", repo_matrix().to_str().unwrap()][..], args].concat())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    }
}
