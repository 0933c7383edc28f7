//! An adapter command (`harness::contract::Command`) as a process: the one
//! place the runner starts adapters. Either run to its end ([`run`],
//! [`run_under`]: timeout, process group, interruption, through `exec`), or
//! kept running and talked to line by line ([`Running`]: servers,
//! subscribers, the counted client), killed with its group on drop.

mod binary;

pub use binary::*;

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use harness::contract::{self, Command as AdapterCommand};

use crate::placement;
use crate::process::exec;

/// Set in every adapter's environment; a runner that finds it set was
/// started as an adapter and refuses to run (no recursion, whatever the
/// adapter binary turns out to be).
pub const NESTED_ENV: &str = "DBUS_MATRIX_DEPTH";

/// The environment every adapter process gets.
fn adapter_env(cmd: &mut Command) {
    // Failure reasons are the last stderr lines: the panic message, not a
    // backtrace (RUST_LIB_BACKTRACE would make anyhow errors carry one).
    cmd.env("RUST_BACKTRACE", "0")
        .env_remove("RUST_LIB_BACKTRACE")
        .env(NESTED_ENV, "1");
    // The interpreters of program adapters, for launchers that start one.
    for (var, path) in harness::interpreter::environment() {
        cmd.env(var, path);
    }
}

/// The process of `command` in the adapter binary `bin`, on `cpu` if given.
fn process(bin: &Path, command: &AdapterCommand, cpu: Option<usize>) -> Command {
    process_under(&[], bin, command, cpu)
}

/// As [`process`], under `wrapper` (a program and its arguments, e.g.
/// valgrind's) when it is not empty.
fn process_under(wrapper: &[OsString], bin: &Path, command: &AdapterCommand, cpu: Option<usize>) -> Command {
    // A program that names its interpreter (`#!/usr/bin/env python3`) runs
    // with the one the runner supplies (harness::interpreter).
    let interpreter = harness::interpreter::of_program(bin);
    // The wrapper's words, the interpreter, the file: the first is run.
    let mut argv: Vec<&std::ffi::OsStr> = wrapper.iter().map(OsString::as_os_str).collect();
    argv.extend(interpreter.as_deref().map(Path::as_os_str));
    argv.push(bin.as_os_str());
    let mut cmd = Command::new(argv[0]);
    cmd.args(&argv[1..]);
    cmd.args(command.to_args());
    adapter_env(&mut cmd);
    placement::pin_command(&mut cmd, cpu);
    bus::die_with_parent(&mut cmd);
    cmd
}

/// Runs `command` to its end; see `exec::run` for `stdin`, `scratch`, `timeout`.
pub fn run(
    bin: &Path,
    command: &AdapterCommand,
    stdin: Option<&[u8]>,
    scratch: &Path,
    timeout: Duration,
    interrupted: &AtomicBool,
    cpu: Option<usize>,
) -> anyhow::Result<exec::Outcome> {
    exec::run(process(bin, command, cpu), stdin, scratch, timeout, interrupted)
}

/// Runs `command` under `wrapper` (e.g. valgrind and its options), which is
/// given the adapter binary and the command's arguments.
pub fn run_under(
    mut wrapper: Command,
    bin: &Path,
    command: &AdapterCommand,
    scratch: &Path,
    timeout: Duration,
    interrupted: &AtomicBool,
) -> anyhow::Result<exec::Outcome> {
    wrapper.arg(bin).args(command.to_args());
    adapter_env(&mut wrapper);
    exec::run(wrapper, None, scratch, timeout, interrupted)
}

/// Why an expected line did not come.
enum Missed {
    Interrupted,
    TimedOut,
    Ended,
}

/// A running adapter process, killed with its process group on drop.
pub struct Running {
    child: Child,
    /// What it is, for messages: "the zbus-6 server".
    what: String,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
}

impl Running {
    /// Starts `command`; stdout is read line by line, stderr kept for
    /// failure reasons. With `talk`, its stdin is a pipe for [`Running::send`].
    pub fn start(
        bin: &Path,
        command: &AdapterCommand,
        cpu: Option<usize>,
        what: String,
        talk: bool,
    ) -> Result<Running, String> {
        Running::start_under(&[], bin, command, cpu, what, talk)
    }

    /// [`Running::start`] under `wrapper` (see [`process_under`]).
    pub fn start_under(
        wrapper: &[OsString],
        bin: &Path,
        command: &AdapterCommand,
        cpu: Option<usize>,
        what: String,
        talk: bool,
    ) -> Result<Running, String> {
        let mut cmd = process_under(wrapper, bin, command, cpu);
        cmd.stdin(if talk { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn().map_err(|e| format!("cannot start {what}: {e}"))?;
        let stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        // Read to the end, so a chatty process never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let (etx, erx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            let _ = etx.send(s);
        });
        Ok(Running {
            stdin: child.stdin.take(),
            child,
            what,
            lines,
            stderr: erx,
        })
    }

    /// Starts `command` under `wrapper` (see [`process_under`]; empty:
    /// none) and waits up to `timeout` for it to print READY.
    pub fn start_ready_under(
        wrapper: &[OsString],
        bin: &Path,
        command: &AdapterCommand,
        cpu: Option<usize>,
        what: String,
        timeout: Duration,
    ) -> Result<Running, String> {
        let mut running = Running::start_under(wrapper, bin, command, cpu, what, false)?;
        let never = AtomicBool::new(false);
        match running.wait_line(contract::READY, timeout, &never) {
            Ok(()) => Ok(running),
            Err(missed) => {
                running.kill(); // which closes stderr
                let why = match missed {
                    Missed::TimedOut => format!("was not ready after {:.0} s", timeout.as_secs_f64()),
                    Missed::Ended | Missed::Interrupted => "exited before it was ready".to_string(),
                };
                let tail = running.stderr_tail();
                Err(format!(
                    "{} {why}{}",
                    running.what,
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(": {tail}")
                    }
                ))
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the line `line` (other lines are ignored).
    pub fn expect(&mut self, line: &str, timeout: Duration, interrupted: &AtomicBool) -> Result<(), String> {
        self.wait_line(line, timeout, interrupted)
            .map_err(|missed| match missed {
                Missed::Interrupted => "interrupted".to_string(),
                Missed::TimedOut => format!(
                    "{} did not print {line} within {:.0} s",
                    self.what,
                    timeout.as_secs_f64()
                ),
                Missed::Ended => self.ended_early(line),
            })
    }

    fn wait_line(&mut self, line: &str, timeout: Duration, interrupted: &AtomicBool) -> Result<(), Missed> {
        let deadline = Instant::now() + timeout;
        loop {
            if interrupted.load(Ordering::SeqCst) {
                return Err(Missed::Interrupted);
            }
            match self.lines.recv_timeout(Duration::from_millis(100)) {
                Ok(l) if l.trim() == line => return Ok(()),
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                Err(mpsc::RecvTimeoutError::Timeout) => return Err(Missed::TimedOut),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(Missed::Ended),
            }
        }
    }

    /// Writes `line` to its stdin (started with `talk`).
    pub fn send(&mut self, line: &str) -> Result<(), String> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| format!("{} was started without a stdin to talk to", self.what))?;
        writeln!(stdin, "{line}")
            .and_then(|_| stdin.flush())
            .map_err(|e| format!("cannot talk to {}: {e}", self.what))
    }

    /// Waits (up to 30 s) for a clean exit.
    pub fn finish(&mut self, interrupted: &AtomicBool) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(_)) => return Err(self.ended_early("its exit")),
                Ok(None) if Instant::now() < deadline && !interrupted.load(Ordering::SeqCst) => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Ok(None) => return Err(format!("{} did not exit when it was done", self.what)),
                Err(e) => return Err(format!("waiting for {}: {e}", self.what)),
            }
        }
    }

    /// `Err(reason)` if the process has exited.
    pub fn check_alive(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            // With what it said last: a server a bus cut off says why (issue 31).
            Ok(Some(status)) => {
                let said = self.stderr_tail();
                Err(format!("{} died ({status}): {said}", self.what))
            }
            Err(e) => Err(format!("{}: {e}", self.what)),
        }
    }

    fn ended_early(&mut self, before: &str) -> String {
        let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
        let tail = self.stderr_tail();
        format!("{} ended ({status}) before {before}: {tail}", self.what)
    }

    /// The last three non-empty stderr lines (once the process is gone).
    fn stderr_tail(&mut self) -> String {
        let stderr = self.stderr.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
        exec::reason_tail(&stderr, 3)
    }

    fn kill(&mut self) {
        exec::kill_group(self.child.id() as i32);
        let _ = self.child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    use super::*;

    /// A stand-in adapter: a shell script that ignores its arguments, in a
    /// directory of its own (per test: tests run in parallel threads), which
    /// goes with it.
    struct Script(PathBuf);

    impl Script {
        fn new(name: &str, body: &str) -> Script {
            let dir = std::env::temp_dir().join(format!("dbus-matrix-adapter-test-{}-{name}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            Script(path)
        }
    }

    impl Drop for Script {
        fn drop(&mut self) {
            if let Some(dir) = self.0.parent() {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }

    #[test]
    fn talks_line_by_line_and_sees_a_clean_exit() {
        let s = Script::new("echo", "echo READY; read line; echo \"got $line\"; exit 0");
        let never = AtomicBool::new(false);
        let mut r = Running::start(&s.0, &AdapterCommand::List, None, "the echo".into(), true).unwrap();
        r.expect(contract::READY, Duration::from_secs(10), &never).unwrap();
        r.send(contract::GO).unwrap();
        r.expect("got go", Duration::from_secs(10), &never).unwrap();
        r.finish(&never).unwrap();
    }

    #[test]
    fn a_process_that_dies_before_ready_says_why() {
        let s = Script::new("dies", "echo first >&2; echo 'no socket' >&2; exit 1");
        let err = Running::start_ready_under(
            &[],
            &s.0,
            &AdapterCommand::List,
            None,
            "the dying server".into(),
            Duration::from_secs(10),
        )
        .err()
        .expect("it never printed READY");
        assert_eq!(err, "the dying server exited before it was ready: first | no socket");
    }

    #[test]
    fn a_silent_process_times_out_and_is_killed() {
        let s = Script::new("silent", "echo $$ > \"$0.pid\"; exec sleep 30");
        let started = Instant::now();
        let err = Running::start_ready_under(
            &[],
            &s.0,
            &AdapterCommand::List,
            None,
            "the mute".into(),
            Duration::from_millis(300),
        )
        .err()
        .expect("it never printed READY");
        assert!(err.starts_with("the mute was not ready after"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(10));
        let pid = std::fs::read_to_string(format!("{}.pid", s.0.display())).unwrap();
        let _ = std::fs::remove_file(format!("{}.pid", s.0.display()));
        let alive = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .map(|st| !st.contains(") Z "))
            .unwrap_or(false);
        assert!(!alive, "the process {} survived", pid.trim());
    }
}
