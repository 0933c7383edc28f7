//! `proxy/startup/<n>` in the Python programs, which serve the tree of
//! objects themselves (benches/programs/python/dbus_matrix_py/startup.py: the
//! harness's raw server is Rust): for every call a client may make (Introspect
//! of the root, of a child, of an unknown path, with and without INTERFACE;
//! `Id`; Peer.Ping; Properties) it answers and tallies what the harness's
//! `startup::answer` does, its XML is the harness's, and its `op_digest` is
//! the harness's; dbus-fast and dbus-python give verified values on
//! dbus-daemon and busd with their bus messages per op, jeepney says why its
//! library cannot (no run-time parser), and a server that leaves a child out
//! of the root's XML fails the cell.

use std::path::Path;
use std::process::{Command, Stdio};

use harness::ipc::proxied::Reply;
use harness::ipc::startup::{self as su, StartupServer, StartupTally};
use harness::results::CellStatus;
use harness::wire::Value as W;
use serde_json::{json, Value};

use crate::common::*;

const STARTUP: &str = "proxy/startup/20";
/// The programs that run it, and the bus messages one op makes (n = 20,
/// measured on dbus-daemon and busd): dbus-fast's `introspect` of the root and
/// of each child plus each `Id`, with their replies (4n + 2); dbus-python's
/// `get_object` adds a GetNameOwner per proxy, the root's included (6n + 4).
const WITH_STARTUP: [(&str, f64); 2] = [("dbus-fast-5.2", 82.0), ("dbus-python-1.3", 124.0)];
const BUSES: [&str; 2] = ["dbus-daemon", "busd"];

/// (n, path, interface, member) of every case.
fn calls() -> Vec<(usize, String, Option<&'static str>, &'static str)> {
    let mut calls = vec![];
    for n in [0usize, 1, 3, 20] {
        for path in [
            su::STARTUP_ROOT.to_string(),
            su::child_path(0),
            su::child_path(n.saturating_sub(1)),
            su::child_path(n),
            format!("{}/o01", su::STARTUP_ROOT),
            format!("{}/x", su::STARTUP_ROOT),
            "/".to_string(),
        ] {
            for (interface, member) in [
                (Some("org.freedesktop.DBus.Introspectable"), "Introspect"),
                (None, "Introspect"),
                (Some(su::STARTUP_INTERFACE), su::STARTUP_METHOD),
                (None, su::STARTUP_METHOD),
                (Some("org.freedesktop.DBus.Peer"), "Ping"),
                (Some("org.freedesktop.DBus.Properties"), "GetAll"),
                (None, "Get"),
                (Some(su::STARTUP_INTERFACE), "Nope"),
            ] {
                calls.push((n, path.clone(), interface, member));
            }
        }
    }
    calls
}

fn neutral(v: &W) -> Value {
    match v {
        W::Str(s) => json!(s),
        W::U32(n) => json!(n),
        W::Array(_, items) if items.is_empty() => json!({}),
        other => panic!("startup answers no {other:?}"),
    }
}

/// The harness's answer and the tally after it, as the Python side writes them.
fn harness_answer(n: usize, path: &str, interface: Option<&str>, member: &str) -> Value {
    let tally = std::sync::Arc::new(std::sync::Mutex::new(StartupTally::default()));
    let a = match su::answer(n, StartupServer::Sound, &tally, path, interface, member) {
        Reply::Return { values, .. } => {
            let sig: String = values.iter().map(W::signature).collect();
            json!(["return", sig, values.iter().map(neutral).collect::<Vec<_>>()])
        }
        Reply::Error { name, message } => json!(["error", name, message]),
    };
    let t = su::take_tally(&tally);
    json!({"answer": a, "tally": [t.introspects, t.ids]})
}

const PYTHON: &str = r#"
import json, sys
from dbus_matrix_py import startup as su
given = json.load(sys.stdin)
out = []
for n, path, interface, member in given["calls"]:
    t = su.Tally()
    out.append({"answer": list(su.answer(n, t, path, interface, member)), "tally": list(t.take())})
print(json.dumps({"answers": out, "root": [su.root_xml(n) for n in given["sizes"]], "child": su.child_xml(),
                  "digests": ["%016x" % su.op_digest(ids, tuple(t)) for ids, t in given["digests"]],
                  "paths": [su.child_path(0), su.child_path(19)]}))
"#;

#[test]
fn the_python_tree_answers_tallies_and_digests_as_the_harness() {
    let calls = calls();
    let sizes = [0usize, 1, 20, 200];
    let digests = [
        (vec![0u32, 1, 2], (4usize, 3usize)),
        (vec![2, 0, 1], (4, 3)),
        (vec![0, 1], (4, 3)),
        (vec![0, 1, 2], (3, 3)),
        (vec![1, 1, 2], (4, 3)),
    ];
    let input = json!({"calls": calls, "sizes": sizes, "digests": digests});
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
    let answers = got["answers"].as_array().unwrap();
    assert_eq!(answers.len(), calls.len());
    for ((n, path, interface, member), answer) in calls.iter().zip(answers) {
        assert_eq!(
            *answer,
            harness_answer(*n, path, *interface, member),
            "n {n}: {interface:?}.{member} on {path}"
        );
    }
    let roots: Vec<String> = sizes.iter().map(|n| su::root_xml(*n, StartupServer::Sound)).collect();
    assert_eq!(got["root"], json!(roots));
    assert_eq!(got["child"], json!(su::child_xml()));
    assert_eq!(got["paths"], json!([su::child_path(0), su::child_path(19)]));
    let want: Vec<String> = digests
        .iter()
        .map(|(ids, (i, n))| {
            let t = StartupTally {
                introspects: *i,
                ids: *n,
            };
            format!("{:016x}", su::op_digest(ids.clone(), t))
        })
        .collect();
    assert_eq!(got["digests"], json!(want));
    // Order does not matter; a missing Id, a skipped Introspect or a wrong Id does.
    assert_eq!(want[0], want[1]);
    for broken in &want[2..] {
        assert_ne!(*broken, want[0]);
    }
    assert_eq!(want[0], format!("{:016x}", su::expected_digest(3)));
}

#[test]
fn the_programs_start_up_on_dbus_daemon_and_busd_or_say_why_not() {
    let out = TempDir::new("program-startup");
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            "dbus-fast-5.2,dbus-python-1.3,jeepney-0.8",
            "--scenarios",
            STARTUP,
            "--buses",
            "dbus-daemon,busd,p2p",
        ],
    );
    for (a, want) in WITH_STARTUP {
        for bus in BUSES {
            let c = cell(&r, a, STARTUP, bus);
            assert_eq!(c.status(), CellStatus::Ok, "{a} {bus}: {:?}", c.outcome);
            let m = c.measurement().unwrap();
            assert!(m.wall.median_ns.point > 0.0);
            let n = m.costs.as_ref().and_then(|c| c.bus_messages_per_op);
            let n = n.unwrap_or_else(|| panic!("{a} {bus}: bus messages not counted"));
            assert!(
                (n - want).abs() <= 0.1,
                "{a} {bus}: {n} bus messages per op, expected {want}"
            );
        }
        let why = reason_of(&r, a, STARTUP, "p2p");
        assert!(why.contains("peer to peer"), "{a} p2p: {why}");
    }
    for bus in BUSES {
        let why = reason_of(&r, "jeepney-0.8", STARTUP, bus);
        assert!(
            why.starts_with("jeepney 0.8 has no run-time introspection parser: "),
            "jeepney {bus}: {why}"
        );
    }
}

/// dbus-fast's cannot run a mutant through its venv wrapper here; dbus-python's
/// program with the shared tree mutated: the root's XML leaves the last child out.
fn write_mutant(dir: &Path) {
    let programs = workspace().join("programs");
    let body = format!(
        "#!{python3}\nimport runpy, sys\nsys.path[:0] = [{python:?}, {beside:?}]\n\
         from dbus_matrix_py import startup as su\n\
         root_xml = su.root_xml\n\
         su.root_xml = lambda n: root_xml(n - 1)\n\
         real = {real:?}\nsys.argv[0] = real\nrunpy.run_path(real, run_name='__main__')\n",
        python3 = interpreter_of("dbus-python-1.3/adapter.py").display(),
        python = programs.join("python").display().to_string(),
        beside = programs.join("dbus-python-1.3").display().to_string(),
        real = programs.join("dbus-python-1.3/adapter.py").display().to_string(),
    );
    let path = dir.join("mutant.py");
    std::fs::write(&path, body).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let toml = format!(
        "schema = 1\n[[adapter]]\nid = \"dbus-python-1.3\"\npackage = \"adapter-dbus-python-1-3\"\n\
         path = \"{d}\"\nprogram = \"mutant.py\"\nlibrary = \"dbus-python\"\n[[scenario]]\nid = \"{STARTUP}\"\n\
         [[bus]]\nid = \"dbus-daemon\"\n[profile.smoke]\nsample_size = 10\nwarm_up = 0.05\nmeasurement = 0.1\n\
         nresamples = 1000\ntimer = \"direct\"\n",
        d = dir.display(),
    );
    std::fs::write(dir.join("matrix.toml"), toml).unwrap();
}

#[test]
fn a_child_left_out_of_the_root_fails_the_programs_startup() {
    let tmp = TempDir::new("program-startup-mutant");
    write_mutant(tmp.path());
    let out = tmp.path().join("out");
    let o = smoke_run_of(&tmp.path().join("matrix.toml"), &out).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "failed cells give exit 1:\n{}", text(&o));
    let r = validate(&results_file(&out));
    let a = "dbus-python-1.3";
    assert_eq!(status_on(&r, a, STARTUP, "dbus-daemon"), CellStatus::Failed);
    let why = reason_of(&r, a, STARTUP, "dbus-daemon");
    assert!(why.contains("verification failed: received digest"), "{a}: {why}");
}
