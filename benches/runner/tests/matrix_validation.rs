//! matrix.toml that cannot work is refused by every command that loads it
//! (`list`, `verify`, `run`) with exit 2 and an error naming the bad entry:
//! numbers out of range, adapter paths that do not exist, unknown or
//! duplicate buses and adapters, the runner itself as an adapter, and
//! adapters whose binary says it is another adapter.

use std::time::{Duration, Instant};

use crate::common::*;

/// A fault-adapter matrix (fault-ok, marshal/mixed) with `edit` applied to its text.
fn edited(tag: &str, edit: impl Fn(String) -> String) -> FaultSetup {
    let setup = fault_setup(tag, &["fault-ok"], &["marshal/mixed"]);
    let text = std::fs::read_to_string(&setup.matrix).unwrap();
    let changed = edit(text.clone());
    assert_ne!(text, changed, "the edit did not apply");
    std::fs::write(&setup.matrix, changed).unwrap();
    setup
}

/// `list`, `verify` and `run` all exit 2 naming every needle, without a panic.
fn every_command_refuses(setup: &FaultSetup, needles: &[&str]) {
    let out = setup.out();
    let commands: [&[&str]; 3] = [
        &["list"],
        &["verify"],
        &["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()],
    ];
    for args in commands {
        let o = setup.command(args).output().unwrap();
        let text = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: expected exit 2:\n{text}");
        assert!(!text.contains("panicked"), "{args:?}: panic:\n{text}");
        for n in needles {
            assert!(text.contains(n), "{args:?}: expected {n:?} in:\n{text}");
        }
    }
}

#[test]
fn profile_numbers_out_of_range_are_refused_naming_the_key() {
    let cases = [
        ("measurement = 0.1", "measurement = inf", "measurement"),
        ("measurement = 0.1", "measurement = 1e300", "measurement"),
        ("measurement = 0.1", "measurement = nan", "measurement"),
        ("measurement = 0.1", "measurement = -1.0", "measurement"),
        ("measurement = 0.1", "measurement = 0.0", "measurement"),
        ("warm_up = 0.05", "warm_up = inf", "warm_up"),
        ("warm_up = 0.05", "warm_up = -nan", "warm_up"),
        ("warm_up = 0.05", "warm_up = 1e300", "warm_up"),
        ("sample_size = 10", "sample_size = 5", "sample_size"),
        ("sample_size = 10", "sample_size = 1000000000000", "sample_size"),
        ("sample_size = 10", "sample_size = -10", "sample_size"),
        ("nresamples = 1000", "nresamples = 0", "nresamples"),
        ("nresamples = 1000", "nresamples = 100000000000000", "nresamples"),
    ];
    for (from, to, key) in cases {
        let setup = edited("profile-numbers", |t| t.replace(from, to));
        every_command_refuses(&setup, &[key]);
    }
}

#[test]
fn an_adapter_path_that_does_not_exist_is_refused() {
    let setup = edited("adapter-path", |t| {
        let good = workspace().join("testing/fault-adapter");
        t.replace(good.to_str().unwrap(), "benches/adapters/no-such-crate")
    });
    every_command_refuses(
        &setup,
        &["fault-ok", "benches/adapters/no-such-crate", "does not exist"],
    );
}

#[test]
fn unknown_and_duplicate_buses_and_duplicate_adapters_are_refused() {
    let setup = edited("unknown-bus", |t| t + "[[bus]]\nid = \"kdbus\"\n");
    every_command_refuses(&setup, &["unknown bus \"kdbus\"", "dbus-daemon", "p2p"]);
    let setup = edited("duplicate-bus", |t| {
        t + "[[bus]]\nid = \"p2p\"\n[[bus]]\nid = \"p2p\"\n"
    });
    every_command_refuses(&setup, &["duplicate bus id \"p2p\""]);
    let setup = edited("duplicate-adapter", |t| {
        let entry = t[t.find("[[adapter]]").unwrap()..t.find("[[scenario]]").unwrap()].to_string();
        t.replacen(
            "[[scenario]]",
            &format!(
                "{}[[scenario]]",
                entry.replace("package = \"fault-ok\"", "package = \"fault-ok2\"")
            ),
            1,
        )
    });
    every_command_refuses(&setup, &["duplicate adapter id \"fault-ok\""]);
}

#[test]
fn the_runner_itself_is_refused_as_an_adapter() {
    let setup = edited("self-adapter", |t| {
        t.replace("package = \"fault-ok\"", "package = \"dbus-matrix\"")
    });
    every_command_refuses(&setup, &["dbus-matrix", "runner itself"]);
    // Under another name too: a symlink to the runner's binary.
    let setup = edited("self-symlink", |t| {
        t.replace("package = \"fault-ok\"", "package = \"fault-ok-runner\"")
    });
    std::os::unix::fs::symlink(runner_bin(), setup.bin_dir.join("fault-ok-runner")).unwrap();
    every_command_refuses(&setup, &["fault-ok-runner", "runner itself"]);
}

#[test]
fn a_runner_started_by_a_runner_refuses_to_run() {
    // A wrapper script the name check cannot see through: it execs the
    // runner, which must see that a runner started it and stop at once.
    let setup = edited("self-script", |t| {
        t.replace("package = \"fault-ok\"", "package = \"wrapper\"")
    });
    let script = setup.bin_dir.join("wrapper");
    std::fs::write(&script, format!("#!/bin/sh\nexec {} \"$@\"\n", runner_bin().display())).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let started = Instant::now();
    let o = setup
        .command(&["list"])
        .env("DBUS_MATRIX_MATRIX", &setup.matrix)
        .output()
        .unwrap();
    let out = text(&o);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}:\n{out}",
        started.elapsed()
    );
    assert!(out.contains("started by dbus-matrix"), "{out}");
    // The guard itself: a runner with the variable set refuses everything.
    let o = dbus_matrix(&["list"]).env("DBUS_MATRIX_DEPTH", "1").output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("started by dbus-matrix"), "{}", text(&o));
}

#[test]
fn an_adapter_that_says_it_is_another_is_refused_by_list_and_verify() {
    let setup = edited("wrong-id", |t| t.replace("id = \"fault-ok\"", "id = \"fault-renamed\""));
    every_command_refuses(&setup, &["fault-renamed", "\"fault-ok\""]);
}
