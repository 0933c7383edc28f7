//! A closed stdout (`dbus-matrix list | head -1`) is a quiet exit: the
//! command's own status, no panic, no "failed printing to stdout".

use std::process::{Command, Output, Stdio};

use crate::common::*;

/// Runs `c` with its stdout a pipe whose reading end is already closed, so
/// the first write fails with EPIPE.
fn with_closed_stdout(mut c: Command) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    c.stdout(writer).stderr(Stdio::piped()).output().unwrap()
}

/// The same command once with a readable and once with a closed stdout:
/// the same exit status, nothing about the pipe on stderr.
fn quiet_when_closed(make: impl Fn() -> Command, what: &str) {
    let open = make().output().unwrap();
    assert!(
        !open.stdout.is_empty(),
        "{what} printed nothing, so the test proves nothing:\n{}",
        text(&open)
    );
    let closed = with_closed_stdout(make());
    let stderr = String::from_utf8_lossy(&closed.stderr);
    assert_eq!(
        closed.status.code(),
        open.status.code(),
        "{what}: with stdout closed the exit status changed ({:?}):\n{stderr}",
        closed.status
    );
    for bad in ["panicked", "failed printing", "Broken pipe", "os error 32"] {
        assert!(!stderr.contains(bad), "{what}: {bad:?} on stderr:\n{stderr}");
    }
}

#[test]
fn every_printing_command_exits_quietly_into_a_closed_pipe() {
    let fixtures = workspace().join("runner/tests/fixtures");
    let (one, two) = (fixtures.join("run-1.json"), fixtures.join("run-2.json"));
    let (one, two) = (one.to_str().unwrap(), two.to_str().unwrap());
    for format in ["markdown", "csv", "json", "bmf", "critcmp", "html"] {
        quiet_when_closed(|| dbus_matrix(&["report", "--format", format, one]), format);
    }
    for format in ["markdown", "json"] {
        quiet_when_closed(
            || dbus_matrix(&["compare", "--format", format, one, two]),
            &format!("compare {format}"),
        );
        quiet_when_closed(
            || dbus_matrix(&["history", "--format", format, one, two]),
            &format!("history {format}"),
        );
    }
    let setup = fault_setup("closed-stdout", &["fault-ok", "fault-wrong-bytes"], &["marshal/mixed"]);
    quiet_when_closed(|| setup.command(&["list"]), "list");
    // verify exits 1 here (a wrong-bytes adapter): closing stdout keeps that.
    quiet_when_closed(|| setup.command(&["verify"]), "verify");
    let out = setup.out();
    quiet_when_closed(
        || {
            setup.command(&[
                "run",
                "--profile",
                "smoke",
                "--quiet",
                "--adapters",
                "fault-ok",
                "--out",
                out.to_str().unwrap(),
            ])
        },
        "run",
    );
}
