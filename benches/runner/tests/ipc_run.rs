//! IPC cells through the runner: every bus of the matrix is started, used and
//! stopped, leaving no process and no directory behind.

use crate::common::*;
use harness::results::CellStatus;

#[test]
fn buses_are_started_recorded_and_torn_down() {
    let out = TempDir::new("ipc-run");
    let child = smoke_run_of_repo(
        out.path(),
        &[
            "--adapters",
            "raw,zbus-6",
            "--scenarios",
            "call/void,call/echo-bytes/64,baseline/raw-socket/1,baseline/raw-socket/64",
        ],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let runner_pid = child.id();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let r = validate(&results_file(out.path()));
    let ids: Vec<&str> = r.buses.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["dbus-daemon", "dbus-broker", "busd", "p2p"]);
    for b in &r.buses {
        assert!(
            !b.description.starts_with("could not start"),
            "{}: {}",
            b.id,
            b.description
        );
    }
    // The floor ran once, without a bus, for the baseline only.
    for s in ["baseline/raw-socket/1", "baseline/raw-socket/64"] {
        let floor: Vec<_> = r.cells.iter().filter(|c| c.scenario == s).collect();
        assert_eq!(floor.len(), 1);
        assert_eq!((floor[0].adapter.as_str(), floor[0].bus.as_deref()), ("raw", None));
        assert_eq!(floor[0].status(), CellStatus::Ok);
    }
    // Every library cell exists on every bus.
    for bus in &ids {
        for s in ["call/void", "call/echo-bytes/64"] {
            assert!(r
                .cells
                .iter()
                .any(|c| c.adapter == "zbus-6" && c.scenario == s && c.bus.as_deref() == Some(bus)));
        }
    }
    // Nothing of the run survives it: daemons, servers, directories.
    let tag = format!("-{runner_pid}-");
    let survivors: Vec<String> = processes_mentioning("dbus-matrix-")
        .into_iter()
        .filter(|p| p.contains(&tag))
        .collect();
    assert!(survivors.is_empty(), "left behind: {survivors:?}");
    let dirs: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(&tag))
        .collect();
    assert!(dirs.is_empty(), "directories left behind: {dirs:?}");
}
