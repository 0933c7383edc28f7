//! Fault injection: adapters that hang, crash, print garbage, emit wrong
//! bytes or fail; the run goes on, each cell ends in its documented state,
//! the results file stays valid and the exit status says a cell failed.

use std::time::Duration;

use crate::common::*;
use harness::results::CellStatus;

#[test]
fn each_fault_becomes_a_failed_cell_and_the_run_goes_on() {
    let setup = fault_setup(
        "faults",
        &[
            "fault-ok",
            "fault-hang",
            "fault-crash",
            "fault-garbage-list",
            "fault-wrong-bytes",
            "fault-exit",
        ],
        &["marshal/mixed", "demarshal/mixed"],
    );
    let o = setup
        .command(&[
            "run",
            "--profile",
            "smoke",
            "--quiet",
            "--cell-timeout",
            "5",
            "--out",
            setup.out().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "a failed cell must give exit 1:\n{out}");
    let r = validate(&results_file(&setup.out()));
    assert!(r.run.complete);
    let reason = |a: &str, s: &str| {
        r.cells
            .iter()
            .find(|c| c.adapter == a && c.scenario == s)
            .unwrap()
            .reason()
            .unwrap_or_default()
            .to_string()
    };
    for s in ["marshal/mixed", "demarshal/mixed"] {
        assert_eq!(status_of(&r, "fault-ok", s), CellStatus::Ok);
        // Each fault fails its cell, with the reason that names it.
        for (bad, why) in [
            ("fault-hang", "timed out after 5 s"),
            ("fault-crash", "SIGABRT"),
            ("fault-garbage-list", "not an adapter listing"),
            ("fault-wrong-bytes", "verification"),
            ("fault-exit", "injected library error"),
        ] {
            assert_eq!(status_of(&r, bad, s), CellStatus::Failed, "{bad} {s}");
            assert!(reason(bad, s).contains(why), "{bad} {s}: {}", reason(bad, s));
        }
    }
    // The summary names every failure.
    assert!(out.matches("failed: fault-").count() >= 10, "{out}");
    assert!(
        processes_mentioning(&setup.bin("fault-hang")).is_empty(),
        "a hung adapter survived"
    );
}

#[test]
fn interrupting_a_run_keeps_finished_cells_and_resume_completes_it() {
    let setup = fault_setup(
        "interrupt",
        &["fault-ok", "fault-hang"],
        &["marshal/mixed", "demarshal/mixed"],
    );
    let mut child = setup
        .command(&[
            "run",
            "--profile",
            "smoke",
            "--quiet",
            "--cell-timeout",
            "60",
            "--out",
            setup.out().to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the hang adapter is running (the ok cell is done by then).
    wait_for_process(
        &format!("{} bench", setup.bin("fault-hang")),
        Duration::from_secs(60),
        "the hang cell never started",
    );
    send_signal(child.id(), libc::SIGTERM);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "SIGTERM must end the run with 130");
    assert!(
        processes_mentioning(&setup.bin("fault-hang")).is_empty(),
        "the adapter outlived the runner"
    );
    let file = results_file(&setup.out());
    let r = validate(&file);
    assert!(!r.run.complete);
    assert_eq!(status_of(&r, "fault-ok", "marshal/mixed"), CellStatus::Ok);
    assert!(
        !r.cells
            .iter()
            .any(|c| c.adapter == "fault-hang" && c.scenario == "marshal/mixed"),
        "an interrupted cell is missing, not failed"
    );
    let leftovers: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("dbus-matrix-run-{}-", child.id()))
        })
        .collect();
    assert!(leftovers.is_empty(), "scratch directory left behind");

    // Resume with only the healthy adapter finishing: run the missing cells.
    let o = setup
        .command(&[
            "run",
            "--profile",
            "smoke",
            "--quiet",
            "--cell-timeout",
            "3",
            "--resume",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let r2 = validate(&file);
    assert!(r2.run.complete);
    assert_eq!(r2.cells.len(), 4);
    assert_eq!(status_of(&r2, "fault-ok", "marshal/mixed"), CellStatus::Ok);
    // The cell finished before the interruption was kept, not rerun.
    let before = r
        .cells
        .iter()
        .find(|c| c.adapter == "fault-ok" && c.scenario == "marshal/mixed")
        .unwrap();
    let after = r2
        .cells
        .iter()
        .find(|c| c.adapter == "fault-ok" && c.scenario == "marshal/mixed")
        .unwrap();
    assert_eq!(before, after);
    assert_eq!(status_of(&r2, "fault-hang", "demarshal/mixed"), CellStatus::Failed);
}

#[test]
fn failure_reasons_carry_no_backtrace_whatever_the_environment_asks() {
    let setup = fault_setup("backtrace", &["fault-unwrap"], &["marshal/mixed"]);
    let o = setup
        .smoke_command()
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LIB_BACKTRACE", "1")
        .output()
        .unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let r = validate(&results_file(&setup.out()));
    let reason = r.cells[0].reason().unwrap_or_default().to_string();
    assert!(reason.contains("injected library error"), "{reason}");
    for fragment in [
        "stack backtrace",
        "Stack backtrace",
        "RUST_BACKTRACE",
        "std::rt::",
        " at /",
    ] {
        assert!(!reason.contains(fragment), "{fragment:?} in the reason: {reason}");
    }
}
