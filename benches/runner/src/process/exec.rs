//! Running a child process with a timeout, in its own process group, so a
//! hang or crash becomes a cell state and never takes the runner down.

use std::fs::File;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use harness::contract;

#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    Exited(i32),
    Signaled(i32),
    TimedOut(Duration),
    Interrupted,
}

#[derive(Debug)]
pub struct Outcome {
    pub ending: Ending,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Outcome {
    pub fn success(&self) -> bool {
        self.ending == Ending::Exited(0)
    }

    /// The reason an adapter gave for exiting with "unsupported" (status 3).
    pub fn unsupported_reason(&self) -> Option<String> {
        (self.ending == Ending::Exited(contract::EXIT_UNSUPPORTED as i32))
            .then(|| contract::unsupported_reason(&self.stderr_tail(1)).to_string())
    }

    /// The last `n` lines of stderr, for failure reasons.
    pub fn stderr_tail(&self, n: usize) -> String {
        reason_tail(&self.stderr, n)
    }

    /// A one-line description of how the process ended, for failed cells.
    pub fn describe(&self) -> String {
        let how = match &self.ending {
            Ending::Exited(c) => format!("exit status {c}"),
            Ending::Signaled(s) => format!("killed by signal {s} ({})", signal_name(*s)),
            Ending::TimedOut(d) => {
                format!("timed out after {:.0} s and was killed", d.as_secs_f64())
            }
            Ending::Interrupted => "interrupted".to_string(),
        };
        let tail = self.stderr_tail(3);
        if tail.is_empty() {
            how
        } else {
            format!("{how}: {tail}")
        }
    }
}

/// The last `n` meaningful lines of a child's stderr, joined with " | ":
/// without blank lines, backtraces (a child run with a backtrace variable
/// set by hand, or a library error printed with its backtrace) and Rust's
/// hint to set RUST_BACKTRACE, which would crowd out the message itself.
pub fn reason_tail(stderr: &str, n: usize) -> String {
    let mut lines = Vec::new();
    let mut in_backtrace = false;
    for line in stderr.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t.eq_ignore_ascii_case("stack backtrace:") {
            in_backtrace = true;
            continue;
        }
        let frame = t.split_once(": ").is_some_and(|(n, _)| n.parse::<u32>().is_ok()) || t.starts_with("at ");
        if in_backtrace && frame {
            continue;
        }
        in_backtrace = false;
        let hint = t.starts_with("note: run with `RUST_BACKTRACE=")
            || t.starts_with("note: Some details are omitted")
            || t.starts_with("note: Backtrace omitted");
        if !hint {
            lines.push(t);
        }
    }
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// How long to sleep before looking at the child again: about 2% of the time
/// it has run, between 50 µs and 10 ms. Cold starts are timed around `run`,
/// so a fixed 10 ms poll would round every process of a few ms up to 10 ms.
fn poll_interval(elapsed: Duration) -> Duration {
    (elapsed / 50).clamp(Duration::from_micros(50), Duration::from_millis(10))
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGABRT => "SIGABRT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        _ => "signal",
    }
}

/// Runs `cmd` with stdin from `stdin` (if any), output captured through files
/// in `scratch` (pipes could fill and block), killing its whole process group
/// on timeout or when `interrupted` becomes true.
pub fn run(
    mut cmd: Command,
    stdin: Option<&[u8]>,
    scratch: &Path,
    timeout: Duration,
    interrupted: &AtomicBool,
) -> Result<Outcome> {
    let out_path = scratch.join("stdout");
    let err_path = scratch.join("stderr");
    cmd.stdout(File::create(&out_path)?).stderr(File::create(&err_path)?);
    match stdin {
        Some(bytes) => {
            let in_path = scratch.join("stdin");
            std::fs::write(&in_path, bytes)?;
            cmd.stdin(File::open(&in_path)?);
        }
        None => {
            cmd.stdin(Stdio::null());
        }
    }
    cmd.process_group(0);
    // Also when the runner is SIGKILLed (valgrind and other wrappers included).
    bus::die_with_parent(&mut cmd);
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {:?}", cmd.get_program()))?;
    let pgid = child.id() as i32;
    let ending = loop {
        if let Some(status) = child.try_wait()? {
            break ending_of(status);
        }
        let stop = if interrupted.load(Ordering::SeqCst) {
            Some(Ending::Interrupted)
        } else if start.elapsed() >= timeout {
            Some(Ending::TimedOut(timeout))
        } else {
            None
        };
        if let Some(ending) = stop {
            kill_group(pgid);
            let _ = child.wait();
            break ending;
        }
        std::thread::sleep(poll_interval(start.elapsed()));
    };
    // Children of the adapter (servers it started) go with it.
    kill_group(pgid);
    Ok(Outcome {
        ending,
        stdout: std::fs::read(&out_path).unwrap_or_default(),
        stderr: String::from_utf8_lossy(&std::fs::read(&err_path).unwrap_or_default()).into_owned(),
    })
}

fn ending_of(status: ExitStatus) -> Ending {
    match (status.code(), status.signal()) {
        (Some(c), _) => Ending::Exited(c),
        (None, Some(s)) => Ending::Signaled(s),
        _ => Ending::Exited(-1),
    }
}

/// Runs `cmd` to its end, as `status()` does, but in a process group of
/// its own that is killed within 50 ms of `interrupted` being set: a long
/// child (a cargo build) must not hold a signalled runner. `None` when it
/// was interrupted.
pub fn status_unless_interrupted(cmd: &mut Command, interrupted: &AtomicBool) -> std::io::Result<Option<ExitStatus>> {
    let mut child = cmd.process_group(0).spawn()?;
    let pgid = child.id() as i32;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if interrupted.load(Ordering::SeqCst) {
            kill_group(pgid);
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn kill_group(pgid: i32) {
    // SAFETY: kill(2) on a process group we created; errors (already gone) are fine.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::scratch::Scratch;

    /// Issue 42 (7): a signal during a cargo build waited for the build's end.
    #[test]
    fn an_interrupt_stops_the_child_and_its_group_at_once() {
        let flag = std::sync::Arc::new(AtomicBool::new(false));
        let setter = {
            let flag = flag.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                flag.store(true, Ordering::SeqCst);
            })
        };
        let started = Instant::now();
        // A grandchild too: the group goes, not only the child.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30 & sleep 30; wait"]);
        let status = status_unless_interrupted(&mut cmd, &flag).unwrap();
        setter.join().unwrap();
        assert!(status.is_none(), "{status:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        let mut cmd = Command::new("true");
        let status = status_unless_interrupted(&mut cmd, &AtomicBool::new(false)).unwrap();
        assert!(status.is_some_and(|s| s.success()));
    }

    #[test]
    fn reasons_leave_out_backtraces_and_the_backtrace_hint() {
        let stderr = "Benchmarking x\nthread 'main' panicked at src/main.rs:9:5:\n\
            called `Result::unwrap()` on an `Err` value: injected\n\nStack backtrace:\n   0: std::rt::lang_start\n\
            \x20            at /rustc/library/std/src/rt.rs:1:1\n   1: main\n\
            note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(
            reason_tail(stderr, 3),
            "Benchmarking x | thread 'main' panicked at src/main.rs:9:5: | \
             called `Result::unwrap()` on an `Err` value: injected"
        );
        // Numbered lines outside a backtrace are kept.
        assert_eq!(reason_tail("a\n1: b\n", 2), "a | 1: b");
    }

    #[test]
    fn polling_keeps_short_processes_precise() {
        let ms = Duration::from_millis;
        assert_eq!(poll_interval(Duration::ZERO), Duration::from_micros(50));
        // A 5 ms cold start is seen within 100 µs of its end, not rounded up to 10 ms.
        assert_eq!(poll_interval(ms(5)), Duration::from_micros(100));
        assert_eq!(poll_interval(ms(100)), ms(2));
        assert_eq!(poll_interval(ms(60_000)), ms(10));
    }

    fn scratch() -> Scratch {
        Scratch::new("exec-test").unwrap()
    }

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn captures_output_and_status() {
        let flag = AtomicBool::new(false);
        let dir = scratch();
        let o = run(
            sh("cat; echo oops >&2; exit 3"),
            Some(b"in"),
            dir.path(),
            Duration::from_secs(10),
            &flag,
        )
        .unwrap();
        assert_eq!(o.ending, Ending::Exited(3));
        assert_eq!(o.stdout, b"in");
        assert_eq!(o.describe(), "exit status 3: oops");
    }

    #[test]
    fn kills_a_hang_with_its_children() {
        let flag = AtomicBool::new(false);
        let dir = scratch();
        let script = format!("sleep 30 & echo $! > {}/child; wait", dir.path().display());
        let start = Instant::now();
        let o = run(sh(&script), None, dir.path(), Duration::from_millis(300), &flag).unwrap();
        assert!(matches!(o.ending, Ending::TimedOut(_)));
        assert!(start.elapsed() < Duration::from_secs(5));
        let child: i32 = std::fs::read_to_string(dir.path().join("child"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let alive = std::fs::read_to_string(format!("/proc/{child}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false);
        assert!(!alive, "the grandchild {child} survived");
    }

    #[test]
    fn reports_signals() {
        let flag = AtomicBool::new(false);
        let dir = scratch();
        let o = run(sh("kill -SEGV $$"), None, dir.path(), Duration::from_secs(10), &flag).unwrap();
        assert_eq!(o.ending, Ending::Signaled(libc::SIGSEGV));
        assert!(o.describe().contains("SIGSEGV"));
    }
}
