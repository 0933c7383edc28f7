//! `property/changed-storm/<n>` in the Python programs (dbus-fast,
//! dbus-python, jeepney through benches/programs/python/dbus_matrix_py/
//! storm.py, each arm its program's storms.py): the one Python check judges
//! and words every case as the harness's `storm::storm_digest` on the same
//! broken inputs, the three programs give verified values with the harness's
//! notes on dbus-daemon and busd (dbus-broker: the Nix sandbox cannot start
//! it; the smoke runs of docs/scenarios.md cover it), and a program whose
//! subscriber loses an update fails its cell with the counts, even though it
//! ends with the last value.

use std::path::Path;
use std::process::{Command, Stdio};

use harness::ipc::storm::{self as st, StormSeen};
use harness::results::CellStatus;
use serde_json::{json, Value};

use crate::common::*;

const PROGRAMS: [&str; 3] = ["dbus-fast-5.2", "dbus-python-1.3", "jeepney-0.8"];
const STORM: &str = "property/changed-storm/100";
const HOLDER: &str = "the program (x has no property cache)";

/// Right and broken storms of 100: (received, updates, last).
fn cases() -> Vec<(usize, Vec<i32>, Option<i32>)> {
    let all: Vec<i32> = (0..100).map(st::level).collect();
    let without = |v: i32| -> Vec<i32> { all.iter().copied().filter(|x| *x != v).collect() };
    let mut swapped = all.clone();
    swapped.swap(3, 4);
    let mut unknown = all.clone();
    unknown[7] = i32::MIN;
    vec![
        (100, all.clone(), Some(100)),
        (99, without(2), Some(100)),
        (100, vec![5, 50, 100], Some(100)), // coalesced: passes
        (99, without(100), Some(99)),
        (101, all.clone(), Some(100)),
        (100, swapped, Some(100)),
        (100, unknown, Some(100)),
        (0, vec![], None),
    ]
}

fn harness_verdict(n: usize, (received, updates, last): &(usize, Vec<i32>, Option<i32>)) -> Value {
    let seen = StormSeen {
        received: *received,
        updates: updates.clone(),
        last: *last,
        holder: HOLDER,
    };
    match st::storm_digest(&seen, n) {
        Ok(d) => json!({"ok": format!("{d:016x}"), "note": st::take_note()}),
        Err(e) => json!({"err": e.to_string()}),
    }
}

const PYTHON: &str = r#"
import json, sys
from dbus_matrix_py import storm as st
given = json.load(sys.stdin)
out = []
for received, updates, last in given["cases"]:
    try:
        d = st.storm_digest(received, updates, last, given["holder"], given["n"])
        out.append({"ok": "%016x" % d, "note": st.take_note()})
    except RuntimeError as e:
        out.append({"err": str(e)})
print(json.dumps({"verdicts": out, "rule": st.CHANGED_RULE, "levels": [st.level(0), st.last_level(given["n"])],
                  "object": [st.PATH, st.INTERFACE, st.PROPERTY, st.INITIAL_LEVEL, st.SETTLE_S]}))
"#;

#[test]
fn the_python_storm_check_judges_and_words_as_the_harness() {
    let cases = cases();
    let input = json!({"cases": cases, "holder": HOLDER, "n": 100});
    let mut child = Command::new(interpreter_of("jeepney-0.8/adapter.py"))
        .args(["-c", PYTHON])
        .env("PYTHONPATH", workspace().join("programs/python"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let got: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    let verdicts = got["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), cases.len());
    let want: Vec<Value> = cases.iter().map(|c| harness_verdict(100, c)).collect();
    for (case, (verdict, want)) in cases.iter().zip(verdicts.iter().zip(&want)) {
        assert_eq!(verdict, want, "{case:?}");
    }
    assert_eq!(got["rule"], json!(st::changed_rule()));
    assert_eq!(got["levels"], json!([st::level(0), st::last_level(100)]));
    assert_eq!(
        got["object"],
        json!([
            st::STORM_PATH,
            st::STORM_INTERFACE,
            st::STORM_PROPERTY,
            st::INITIAL_LEVEL,
            st::SETTLE.as_secs_f64()
        ])
    );
    // The broken inputs did fail, with the counts (and the right ones passed).
    let failed = |i: usize| want[i]["err"].as_str().unwrap_or_default().to_string();
    assert!(want[0]["ok"].is_string() && want[2]["ok"].is_string());
    assert!(failed(1).contains("received 99, lost 1, extra 0;"), "{}", failed(1));
    assert!(failed(1).contains("holds 100;"), "{}", failed(1));
    for i in [3, 4, 5, 6, 7] {
        assert!(!failed(i).is_empty(), "case {i} passed");
    }
}

#[test]
fn the_programs_storms_give_verified_values_on_dbus_daemon_and_busd() {
    let out = TempDir::new("program-storm");
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            &PROGRAMS.join(","),
            "--scenarios",
            STORM,
            "--buses",
            "dbus-daemon,busd,p2p",
        ],
    );
    for a in PROGRAMS {
        for bus in ["dbus-daemon", "busd"] {
            let c = cell(&r, a, STORM, bus);
            assert_eq!(c.status(), CellStatus::Ok, "{a} {bus}: {:?}", c.outcome);
            assert!(c.measurement().unwrap().wall.median_ns.point > 0.0);
            let notes = notes_of(&r, a, STORM, bus);
            for expected in [
                "property storm verified: 100 PropertiesChanged emitted: received 100, lost 0, extra 0; \
                 the program (",
                "holds 100 (the last value)",
                "the subscriber's process (client) peak resident memory (VmHWM) over bench: ",
                "the bus daemon's peak resident memory over the cell (VmHWM, reset at its start): ",
            ] {
                assert!(notes.contains(expected), "{a} {bus}: no {expected:?} in\n{notes}");
            }
        }
        let why = reason_of(&r, a, STORM, "p2p");
        assert!(why.contains("peer to peer"), "{a} p2p: {why}");
    }
}

/// jeepney's and dbus-python's programs with the shared storm code mutated:
/// the subscriber's `Seen` drops the second update of each storm.
fn write_mutants(dir: &Path) {
    let programs = workspace().join("programs");
    use std::os::unix::fs::PermissionsExt;
    for (name, program) in [
        ("mutant-jeepney.py", "jeepney-0.8"),
        ("mutant-dbus-python.py", "dbus-python-1.3"),
    ] {
        let body = format!(
            "#!{python3}\nimport runpy, sys\nsys.path[:0] = [{python:?}, {beside:?}]\n\
             from dbus_matrix_py import storm as st\n\
             take = st.Seen.take\n\
             st.Seen.take = lambda self, changed: None if changed.get(st.PROPERTY) == st.level(1) \
             else take(self, changed)\n\
             real = {real:?}\nsys.argv[0] = real\nrunpy.run_path(real, run_name='__main__')\n",
            python3 = interpreter_of(&format!("{program}/adapter.py")).display(),
            python = programs.join("python").display().to_string(),
            beside = programs.join(program).display().to_string(),
            real = programs.join(program).join("adapter.py").display().to_string(),
        );
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let toml = format!(
        "schema = 1\n[[adapter]]\nid = \"jeepney-0.8\"\npackage = \"adapter-jeepney-0-8\"\npath = \"{d}\"\n\
         program = \"mutant-jeepney.py\"\nlibrary = \"jeepney\"\n[[adapter]]\nid = \"dbus-python-1.3\"\n\
         package = \"adapter-dbus-python-1-3\"\npath = \"{d}\"\nprogram = \"mutant-dbus-python.py\"\n\
         library = \"dbus-python\"\n[[scenario]]\nid = \"{STORM}\"\n[[bus]]\nid = \"dbus-daemon\"\n\
         [profile.smoke]\nsample_size = 10\nwarm_up = 0.05\nmeasurement = 0.1\nnresamples = 1000\n\
         timer = \"direct\"\n",
        d = dir.display(),
    );
    std::fs::write(dir.join("matrix.toml"), toml).unwrap();
}

#[test]
fn a_subscriber_that_loses_an_update_fails_the_programs_storm_with_the_counts() {
    let tmp = TempDir::new("program-storm-mutants");
    write_mutants(tmp.path());
    let out = tmp.path().join("out");
    let o = smoke_run_of(&tmp.path().join("matrix.toml"), &out).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "failed cells give exit 1:\n{}", text(&o));
    let r = validate(&results_file(&out));
    for a in ["jeepney-0.8", "dbus-python-1.3"] {
        assert_eq!(status_on(&r, a, STORM, "dbus-daemon"), CellStatus::Failed, "{a}");
        let why = reason_of(&r, a, STORM, "dbus-daemon");
        for words in ["received 99, lost 1, extra 0;", "holds 100;"] {
            assert!(why.contains(words), "{a}: {words:?} not in {why}");
        }
    }
}
