//! The application families of issue 31 in the programs in other languages
//! (Python: dbus-fast, dbus-python, jeepney through
//! benches/programs/python/dbus_matrix_py/apps.py; Ruby: ruby-dbus through
//! benches/programs/ruby/dbus_matrix/apps.rb; C: libdbus-c's apps.c):
//! `call/in-only-bytes/<n>` gives verified values on dbus-daemon and busd
//! (dbus-broker: `applications::self_served_cells_run_on_dbus_broker_and_busd`
//! runs the Rust arms there; the Nix sandbox cannot start it), peer to peer
//! says why not,
//! the other application families say they are not written, and a sink that
//! loses a byte fails the cell (a mutant of the shared tally in each
//! language).

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
/// Not written for the programs yet: each says so.
const NOT_YET: [&str; 3] = [
    "call/connections-in-process/1",
    "proxy/create-call/props",
    "proxy/create-call/no-props",
];
const BUSES: [&str; 2] = ["dbus-daemon", "busd"];

#[test]
fn the_programs_sinks_give_verified_values_on_dbus_daemon_and_busd() {
    let out = TempDir::new("program-apps");
    let scenarios: Vec<&str> = std::iter::once(IN_ONLY).chain(NOT_YET).collect();
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
        for bus in BUSES {
            let c = cell(&r, a, IN_ONLY, bus);
            assert_eq!(c.status(), CellStatus::Ok, "{a} {bus}: {:?}", c.outcome);
            assert!(c.measurement().unwrap().wall.median_ns.point > 0.0);
        }
        let why = reason_of(&r, a, IN_ONLY, "p2p");
        assert!(why.contains("peer to peer"), "{a} p2p: {why}");
        for s in NOT_YET {
            let family = &s[..s.rfind('/').unwrap()];
            assert_eq!(
                reason_of(&r, a, s, "dbus-daemon"),
                format!("this adapter does not implement {family} yet"),
                "{a} {s}"
            );
        }
    }
}

/// A matrix of the mutant programs in `dir` on dbus-daemon, `call/in-only-bytes` only.
fn mutant_matrix(dir: &Path) -> PathBuf {
    let toml = format!(
        "schema = 1\n[[adapter]]\nid = \"jeepney-0.8\"\npackage = \"adapter-jeepney-0-8\"\npath = \"{d}\"\n\
         program = \"mutant.py\"\nlibrary = \"jeepney\"\n[[adapter]]\nid = \"ruby-dbus-0.16\"\n\
         package = \"adapter-ruby-dbus-0-16\"\npath = \"{d}\"\nprogram = \"mutant.rb\"\nlibrary = \"ruby-dbus\"\n\
         {unavailable}[[scenario]]\nid = \"{IN_ONLY}\"\n[[bus]]\nid = \"dbus-daemon\"\n[profile.smoke]\n\
         sample_size = 10\nwarm_up = 0.05\nmeasurement = 0.1\nnresamples = 1000\ntimer = \"direct\"\n",
        d = dir.display(),
        // As in the repository's matrix: unavailable where the build mode cannot have it.
        unavailable = unavailable_in_toml("ruby-dbus-0.16"),
    );
    let path = dir.join("matrix.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

/// jeepney's and ruby-dbus's programs with the shared tally mutated: the sink
/// records each array without its first byte.
fn write_mutants(dir: &Path) {
    let programs = workspace().join("programs");
    let py = format!(
        "#!{python3}\nimport runpy, sys\nsys.path[:0] = [{python:?}, {beside:?}]\n\
         from dbus_matrix_py import apps\n\
         receive = apps.SinkTally.receive\n\
         apps.SinkTally.receive = lambda self, data: receive(self, bytes(data)[1:])\n\
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
    use std::os::unix::fs::PermissionsExt;
    for (name, body) in [("mutant.py", py), ("mutant.rb", rb)] {
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
}
