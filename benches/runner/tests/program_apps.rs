//! The application families of issue 31 in the programs in other languages
//! (Python: dbus-fast, dbus-python, jeepney through
//! benches/programs/python/dbus_matrix_py/apps.py; Ruby: ruby-dbus through
//! benches/programs/ruby/dbus_matrix/apps.rb; C: libdbus-c's apps.c):
//! `call/in-only-bytes/<n>` (every program), `proxy/create-call/<server>`
//! (every program: each serves the object itself, as dbus_matrix_py/proxied.py,
//! dbus_matrix/proxied.rb and libdbus-c's proxied.c answer, `program_proxied`) and
//! `call/connections-in-process/<k>` (ruby-dbus, libdbus-c) give verified values
//! on dbus-daemon and busd (dbus-broker: `applications::
//! self_served_cells_run_on_dbus_broker_and_busd` runs the Rust arms there;
//! the Nix sandbox cannot start it), peer to peer says why not, the other
//! application families say they are not written, and a sink that loses a
//! byte or a proxied object that counts no call fails the cell (mutants of
//! the shared code in each language).

use std::path::{Path, PathBuf};

use harness::results::CellStatus;

use crate::common::*;

const PROGRAMS: [&str; 5] = [
    "dbus-fast-5.2",
    "dbus-python-1.3",
    "jeepney-0.8",
    "ruby-dbus-0.16",
    "libdbus-c-1.14",
];
const IN_ONLY: &str = "call/in-only-bytes/16384";
const K1: &str = "call/connections-in-process/1";
/// The programs with `call/connections-in-process/<k>` (dbus_matrix_py's
/// `connections_digest`), and whether each also runs it peer to peer.
const WITH_CONNECTIONS: [(&str, bool); 5] = [
    ("dbus-fast-5.2", false),
    ("dbus-python-1.3", true),
    ("jeepney-0.8", false),
    ("ruby-dbus-0.16", false),
    ("libdbus-c-1.14", false),
];
const PROXY: [&str; 2] = ["proxy/create-call/props", "proxy/create-call/no-props"];
/// The programs with a proxy cell, and the bus messages one op makes (measured on
/// dbus-daemon and busd): the call and its reply, plus dbus-fast's Introspect
/// (`introspect` before `get_proxy_object`) and dbus-python's GetNameOwner and
/// Introspect (`get_object`'s defaults), ruby-dbus's Introspect (a new
/// `ProxyObject`'s `[interface]`), each with its reply; jeepney's `Proxy` and
/// libdbus-c (no proxy: the call built per op) send nothing of their own.
const WITH_PROXY: [(&str, f64); 5] = [
    ("dbus-fast-5.2", 4.0),
    ("dbus-python-1.3", 6.0),
    ("jeepney-0.8", 2.0),
    ("ruby-dbus-0.16", 4.0),
    ("libdbus-c-1.14", 2.0),
];
const BUSES: [&str; 2] = ["dbus-daemon", "busd"];

#[test]
fn the_programs_sinks_give_verified_values_on_dbus_daemon_and_busd() {
    let out = TempDir::new("program-apps");
    let scenarios: Vec<&str> = [IN_ONLY, K1].into_iter().chain(PROXY).collect();
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            &PROGRAMS.join(","),
            "--scenarios",
            &scenarios.join(","),
            "--buses",
            "dbus-daemon,busd,p2p",
        ],
    );
    for a in PROGRAMS {
        // A row this build mode cannot have (ruby-dbus in Nix): its cells say why.
        if let Some(why) = unavailable_here(a) {
            assert_unavailable_cells(&r, a, &why);
            continue;
        }
        let per_op = WITH_PROXY.iter().find(|(p, _)| *p == a).map(|(_, n)| *n);
        let proxies = per_op.is_some();
        let connections = WITH_CONNECTIONS.iter().find(|(p, _)| *p == a).map(|(_, p2p)| *p2p);
        let served: Vec<&str> = std::iter::once(IN_ONLY)
            .chain(PROXY.into_iter().filter(|_| proxies))
            .collect();
        if let Some(p2p) = connections {
            for bus in BUSES.into_iter().chain(p2p.then_some("p2p")) {
                let c = cell(&r, a, K1, bus);
                assert_eq!(c.status(), CellStatus::Ok, "{a} {K1} {bus}: {:?}", c.outcome);
                assert!(c.measurement().unwrap().wall.median_ns.point > 0.0);
            }
            if !p2p {
                assert_eq!(status_on(&r, a, K1, "p2p"), CellStatus::Unsupported, "{a}");
                let why = reason_of(&r, a, K1, "p2p");
                assert!(
                    why.contains("peer-to-peer") || why.contains("peer to peer"),
                    "{a} {K1} p2p: {why}"
                );
            }
        }
        for bus in BUSES {
            for s in &served {
                let c = cell(&r, a, s, bus);
                assert_eq!(c.status(), CellStatus::Ok, "{a} {s} {bus}: {:?}", c.outcome);
                assert!(c.measurement().unwrap().wall.median_ns.point > 0.0);
            }
            for s in PROXY.into_iter().filter(|_| proxies) {
                let want = per_op.unwrap();
                let m = cell(&r, a, s, bus).measurement().unwrap();
                let n = m.costs.as_ref().and_then(|c| c.bus_messages_per_op);
                let n = n.unwrap_or_else(|| panic!("{a} {s} {bus}: bus messages not counted"));
                assert!(
                    (n - want).abs() <= 0.1,
                    "{a} {s} {bus}: {n} bus messages per op, expected {want}"
                );
            }
        }
        // The self-served objects need a bus; k connections to the server would not,
        // but neither library serves peer to peer (their own reasons).
        for s in served.iter().filter(|s| **s != K1) {
            let why = reason_of(&r, a, s, "p2p");
            assert!(why.contains("peer to peer"), "{a} {s} p2p: {why}");
        }
        let not_yet: Vec<&str> = std::iter::once(K1)
            .filter(|_| connections.is_none())
            .chain(PROXY.into_iter().filter(|_| !proxies))
            .collect();
        for s in not_yet {
            let family = &s[..s.rfind('/').unwrap()];
            assert_eq!(
                reason_of(&r, a, s, "dbus-daemon"),
                format!("this adapter does not implement {family} yet"),
                "{a} {s}"
            );
        }
    }
}

/// A matrix of the mutant programs in `dir` on dbus-daemon.
fn mutant_matrix(dir: &Path) -> PathBuf {
    let toml = format!(
        "schema = 1\n[[adapter]]\nid = \"jeepney-0.8\"\npackage = \"adapter-jeepney-0-8\"\npath = \"{d}\"\n\
         program = \"mutant.py\"\nlibrary = \"jeepney\"\n[[adapter]]\nid = \"dbus-python-1.3\"\n\
         package = \"adapter-dbus-python-1-3\"\npath = \"{d}\"\nprogram = \"mutant-dbus-python.py\"\n\
         library = \"dbus-python\"\n[[adapter]]\nid = \"ruby-dbus-0.16\"\n\
         package = \"adapter-ruby-dbus-0-16\"\npath = \"{d}\"\nprogram = \"mutant.rb\"\nlibrary = \"ruby-dbus\"\n\
         {unavailable}[[scenario]]\nid = \"{IN_ONLY}\"\n[[scenario]]\nid = \"{props}\"\n\
         [[scenario]]\nid = \"{K1}\"\n[[bus]]\n\
         id = \"dbus-daemon\"\n[profile.smoke]\n\
         sample_size = 10\nwarm_up = 0.05\nmeasurement = 0.1\nnresamples = 1000\ntimer = \"direct\"\n",
        props = PROXY[0],
        d = dir.display(),
        // As in the repository's matrix: unavailable where the build mode cannot have it.
        unavailable = unavailable_in_toml("ruby-dbus-0.16"),
    );
    let path = dir.join("matrix.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

/// jeepney's and ruby-dbus's programs with the shared tally mutated: the sink
/// records each array without its first byte (jeepney's also leaves the last
/// connection's reply out of `call/connections-in-process`); dbus-python's with the proxied
/// object's answers mutated: `Void` answered but not counted.
fn write_mutants(dir: &Path) {
    let programs = workspace().join("programs");
    let py = format!(
        "#!{python3}\nimport runpy, sys\nsys.path[:0] = [{python:?}, {beside:?}]\n\
         from dbus_matrix_py import apps\n\
         receive = apps.SinkTally.receive\n\
         apps.SinkTally.receive = lambda self, data: receive(self, bytes(data)[1:])\n\
         digest = apps.connections_digest\n\
         apps.connections_digest = lambda replies: digest(list(replies)[:-1])\n\
         real = {real:?}\nsys.argv[0] = real\nrunpy.run_path(real, run_name='__main__')\n",
        python3 = interpreter_of("jeepney-0.8/adapter.py").display(),
        python = programs.join("python").display().to_string(),
        beside = programs.join("jeepney-0.8").display().to_string(),
        real = programs.join("jeepney-0.8/adapter.py").display().to_string(),
    );
    let rb = format!(
        "#!{ruby_bin}\n$LOAD_PATH.unshift({ruby:?})\nrequire \"dbus_matrix/apps\"\n\
         class DbusMatrix::Apps::SinkTally\n  alias_method :real_receive, :receive\n\
         \x20 def receive(bytes) = real_receive(bytes[1..])\nend\nload {real:?}\n",
        ruby_bin = interpreter_of("ruby-dbus-0.16/adapter.rb").display(),
        ruby = programs.join("ruby").display().to_string(),
        real = programs.join("ruby-dbus-0.16/adapter.rb").display().to_string(),
    );
    let uncounted = format!(
        "#!{python3}\nimport runpy, sys\nsys.path[:0] = [{python:?}, {beside:?}]\n\
         from dbus_matrix_py import proxied\n\
         answer = proxied.answer\n\
         proxied.answer = lambda *a: tuple(x if i != 3 else False for i, x in enumerate(answer(*a)))\n\
         real = {real:?}\nsys.argv[0] = real\nrunpy.run_path(real, run_name='__main__')\n",
        python3 = interpreter_of("dbus-python-1.3/adapter.py").display(),
        python = programs.join("python").display().to_string(),
        beside = programs.join("dbus-python-1.3").display().to_string(),
        real = programs.join("dbus-python-1.3/adapter.py").display().to_string(),
    );
    use std::os::unix::fs::PermissionsExt;
    for (name, body) in [
        ("mutant.py", py),
        ("mutant.rb", rb),
        ("mutant-dbus-python.py", uncounted),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn a_sink_that_loses_a_byte_fails_the_programs_cells() {
    let tmp = TempDir::new("program-apps-mutants");
    write_mutants(tmp.path());
    let matrix = mutant_matrix(tmp.path());
    let out = tmp.path().join("out");
    let o = smoke_run_of(&matrix, &out).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "failed cells give exit 1:\n{}", text(&o));
    let r = validate(&results_file(&out));
    for a in ["jeepney-0.8", "ruby-dbus-0.16"] {
        if let Some(why) = unavailable_here(a) {
            assert_unavailable_cells(&r, a, &why);
            continue;
        }
        assert_eq!(status_on(&r, a, IN_ONLY, "dbus-daemon"), CellStatus::Failed, "{a}");
        let why = reason_of(&r, a, IN_ONLY, "dbus-daemon");
        assert!(why.contains("verification failed: received digest"), "{a}: {why}");
    }
    // A connection's reply left out (jeepney's mutant): the cell fails; dbus-python's passes.
    assert_eq!(status_on(&r, "jeepney-0.8", K1, "dbus-daemon"), CellStatus::Failed);
    let why = reason_of(&r, "jeepney-0.8", K1, "dbus-daemon");
    assert!(
        why.contains("verification failed: received digest"),
        "jeepney-0.8 {K1}: {why}"
    );
    assert_eq!(status_on(&r, "dbus-python-1.3", K1, "dbus-daemon"), CellStatus::Ok);
    // The proxied object's mutant: its sink untouched, its proxy cell fails.
    let a = "dbus-python-1.3";
    assert_eq!(status_on(&r, a, IN_ONLY, "dbus-daemon"), CellStatus::Ok, "{a}");
    assert_eq!(status_on(&r, a, PROXY[0], "dbus-daemon"), CellStatus::Failed, "{a}");
    let why = reason_of(&r, a, PROXY[0], "dbus-daemon");
    assert!(why.contains("verification failed: received digest"), "{a}: {why}");
}
