//! Buses and servers that die in the middle of a run: the cells that needed
//! them fail with the reason, the run goes on and ends, the results file
//! stays valid, and nothing is left behind.

use std::time::{Duration, Instant};

use crate::common::*;
use harness::results::{CellStatus, ResultsFile};

const SCENARIOS: &[&str] = &[
    "call/void",
    "call/echo-bytes/1",
    "call/echo-bytes/64",
    "call/echo-bytes/1024",
    "call/echo-bytes/4096",
    "call/echo-bytes/32768",
];

/// Waits until the results file has a finished bus cell, then runs `kill`.
fn after_first_bus_cell(setup: &FaultSetup, runner_pid: u32, kill: impl FnOnce(u32)) {
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < Duration::from_secs(120), "no bus cell finished");
        if let Ok(files) = std::fs::read_dir(setup.out()) {
            for f in files
                .flatten()
                .filter(|f| f.path().extension().is_some_and(|e| e == "json"))
            {
                if let Ok(r) = serde_json::from_slice::<ResultsFile>(&std::fs::read(f.path()).unwrap_or_default()) {
                    if r.cells.iter().any(|c| c.bus.is_some() && c.status() == CellStatus::Ok) {
                        return kill(runner_pid);
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pid_of(needle: &str) -> u32 {
    let found = processes_mentioning(needle);
    assert!(!found.is_empty(), "no process mentions {needle}");
    found[0].split(':').next().unwrap().parse().unwrap()
}

fn run_and_kill(tag: &str, victim: impl Fn(&FaultSetup, u32) -> String) -> (ResultsFile, String) {
    let setup = fault_setup_with_buses(tag, &["fault-ok"], SCENARIOS, &["dbus-daemon"]);
    let child = setup
        .smoke_command()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let runner_pid = child.id();
    after_first_bus_cell(&setup, runner_pid, |pid| {
        let target = pid_of(&victim(&setup, pid));
        send_signal(target, libc::SIGKILL);
    });
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "cells after the kill must fail:\n{}",
        text(&o)
    );
    let r = validate(&results_file(&setup.out()));
    assert!(r.run.complete, "the run must go on to the end");
    assert_eq!(r.cells.len(), SCENARIOS.len());
    let tag = format!("-{runner_pid}-");
    let left: Vec<_> = processes_mentioning("dbus-matrix-")
        .into_iter()
        .filter(|p| p.contains(&tag))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(
        processes_mentioning(&setup.bin("fault-ok")).is_empty(),
        "the server outlived the run"
    );
    (r, text(&o))
}

fn check_cells(r: &ResultsFile, reason_part: &str) {
    let ok = r.cells.iter().filter(|c| c.status() == CellStatus::Ok).count();
    let failed: Vec<_> = r.cells.iter().filter(|c| c.status() == CellStatus::Failed).collect();
    assert!(ok >= 1, "the first cell finished before the kill");
    assert!(!failed.is_empty(), "no cell noticed the kill");
    for c in &failed {
        let reason = c.reason().unwrap_or("");
        assert!(reason.contains(reason_part), "{}: {reason}", c.scenario);
    }
}

#[test]
fn a_bus_daemon_killed_mid_run_fails_the_remaining_cells() {
    let (r, _) = run_and_kill("kill-bus", |_, runner| format!("dbus-matrix-dbus-daemon-{runner}-"));
    check_cells(&r, "bus daemon died");
}

#[test]
fn a_server_killed_mid_run_fails_the_remaining_cells() {
    let (r, _) = run_and_kill("kill-server", |s, _| format!("{} serve", s.bin("fault-ok")));
    check_cells(&r, "server died");
}

/// `--system-bus` (the NixOS VM tests): IPC over an existing bus named by
/// DBUS_SYSTEM_BUS_ADDRESS, here a private dbus-daemon standing in for it.
#[test]
fn system_bus_mode_uses_the_existing_bus() {
    // Like a NixOS system bus with our policy: fault-ok's service (run::bus_session::service_name) may be called.
    let opts = bus::BusOptions {
        services: vec!["io.killing.spark.Bench.fault_ok".into()],
        ..bus::BusOptions::default()
    };
    let system = bus::start(bus::BusKind::DbusDaemon, &opts).unwrap();
    let setup = fault_setup("system-bus", &["fault-ok"], &["call/void", "call/echo-bytes/64"]);
    let run = |address: &str| {
        let _ = std::fs::remove_dir_all(setup.out());
        let o = setup
            .command(&[
                "run",
                "--profile",
                "smoke",
                "--quiet",
                "--system-bus",
                "--out",
                setup.out().to_str().unwrap(),
            ])
            .env("DBUS_SYSTEM_BUS_ADDRESS", address)
            .output()
            .unwrap();
        (o.status.code(), validate(&results_file(&setup.out())), text(&o))
    };
    let (code, r, out) = run(system.address());
    assert_eq!(code, Some(0), "{out}");
    let ids: Vec<&str> = r.buses.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["system", "p2p"]);
    assert!(r.buses[0].description.contains(system.address()));
    for s in ["call/void", "call/echo-bytes/64"] {
        let c = r
            .cells
            .iter()
            .find(|c| c.scenario == s && c.bus.as_deref() == Some("system"))
            .unwrap();
        assert_eq!(c.status(), CellStatus::Ok, "{s}: {:?}", c.reason());
    }
    // No system bus: the cells fail and say why; the file is still valid.
    let (code, r, out) = run("unix:path=/nonexistent/system_bus_socket");
    assert_eq!(code, Some(1), "{out}");
    let c = r.cells.iter().find(|c| c.bus.as_deref() == Some("system")).unwrap();
    assert!(
        c.reason().unwrap_or("").contains("no system bus socket"),
        "{:?}",
        c.reason()
    );
}
