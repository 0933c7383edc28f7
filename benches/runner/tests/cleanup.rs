//! Nothing of a run outlives it, however it ends: SIGKILL of the runner (its
//! bus daemon and adapter servers die with it, and the next run removes its
//! directories and says so), SIGHUP, a second Ctrl-C. And the commands that
//! only read files answer SIGINT/SIGTERM even while blocked.
//!
//! Each test gives the runner a private $TMPDIR, so whatever is found there
//! is that test's run's.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use libc::{SIGHUP, SIGINT, SIGKILL, SIGTERM};

const IPC_SCENARIOS: &str = "call/void,call/in-int,call/out-int,call/in-out-int,call/in-string,call/out-string,\
                             call/in-out-string,call/object-ref,call/echo-bytes/1,call/echo-bytes/64,\
                             call/echo-bytes/1024,call/echo-bytes/4096";

/// [`send_signal`], which must reach the process (a SIGKILL may find it gone).
fn signal(pid: u32, sig: i32) {
    let rc = send_signal(pid, sig);
    assert!(rc == 0 || sig == SIGKILL, "kill {sig} {pid}");
}

/// `/proc/PID/stat` fields after the command name: state, ppid, ...
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(") ")?.1;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

fn cmdline(pid: u32) -> String {
    String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()).replace('\0', " ")
}

/// A process as seen once: still the same process if its command line is.
#[derive(Clone, Debug)]
struct Seen {
    pid: u32,
    cmdline: String,
}

impl Seen {
    fn alive(&self) -> bool {
        stat_fields(self.pid).is_some_and(|f| f[0] != "Z") && cmdline(self.pid) == self.cmdline
    }
}

/// Every live descendant of `root`.
fn descendants(root: u32) -> Vec<Seen> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter_map(|pid| {
            let f = stat_fields(pid)?;
            (f[0] != "Z").then(|| (pid, f[1].parse().unwrap_or(0)))
        })
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(pid, _)| *pid));
        i += 1;
    }
    found[1..]
        .iter()
        .map(|&pid| Seen {
            pid,
            cmdline: cmdline(pid),
        })
        .collect()
}

/// Processes (anywhere) whose command line mentions the test's $TMPDIR.
fn mentioning(tmp: &Path) -> Vec<Seen> {
    processes_mentioning(&tmp.display().to_string())
        .into_iter()
        .map(|line| {
            let pid = line.split_once(": ").unwrap().0.parse().unwrap();
            Seen {
                pid,
                cmdline: cmdline(pid),
            }
        })
        .filter(|s| !s.cmdline.is_empty())
        .collect()
}

/// A test's private $TMPDIR; kills whatever of its runs survived when the test ends.
struct Sandbox {
    dir: TempDir,
    seen: Vec<Seen>,
}

impl Sandbox {
    // Short names: the bus socket ends up at tmp()/dbus-matrix-run-…/
    // dbus-matrix-<bus>-…/bus and must fit in sun_path (108 bytes) under the Nix
    // sandbox's $TMPDIR (/build) and the simulation's (nix/tests/sandbox-nextest.sh).
    fn new(tag: &str) -> Sandbox {
        let dir = TempDir(std::env::temp_dir().join(format!("dmt-{tag}-{}", std::process::id())));
        let _ = std::fs::remove_dir_all(dir.path());
        std::fs::create_dir_all(dir.path().join("t")).unwrap();
        Sandbox { dir, seen: Vec::new() }
    }

    fn tmp(&self) -> PathBuf {
        self.dir.path().join("t")
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = smoke_run_of_repo(&self.out(), args);
        c.env("TMPDIR", self.tmp())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Starts a run of IPC cells on `bus` and waits until a cell runs:
    /// the bus daemon and an adapter server are up.
    // The child is returned; every caller waits for it.
    #[allow(clippy::zombie_processes)]
    fn start_ipc_run(&mut self, bus: &str) -> Child {
        let mut child = self
            .command(&["--adapters", "zbus-6", "--buses", bus, "--scenarios", IPC_SCENARIOS])
            .spawn()
            .unwrap();
        let start = Instant::now();
        loop {
            if start.elapsed() > Duration::from_secs(120) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no IPC cell started");
            }
            let procs = descendants(child.id());
            // The daemon itself, not its `--version`: its command line names its directory.
            let daemon = procs
                .iter()
                .any(|p| p.cmdline.contains(bus) && p.cmdline.contains("dbus-matrix-"));
            let server = procs.iter().any(|p| p.cmdline.contains(" serve "));
            // A cell's client: the server is ready, the bus fully up.
            let client = procs.iter().any(|p| p.cmdline.contains(" bench --scenario=call/"));
            // dbus-broker-launch's child, the broker itself (in the private mount namespace).
            let broker = bus != "dbus-broker" || procs.iter().any(|p| p.cmdline.contains("--controller"));
            if daemon && server && client && broker {
                self.seen = procs;
                return child;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What of the run is still alive after up to 5 s.
    fn survivors(&self) -> Vec<Seen> {
        let start = Instant::now();
        loop {
            let mut left: Vec<Seen> = self.seen.iter().filter(|s| s.alive()).cloned().collect();
            left.extend(mentioning(&self.tmp()));
            if left.is_empty() || start.elapsed() > Duration::from_secs(5) {
                return left;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Entries of the private $TMPDIR.
    fn tmp_entries(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.tmp())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect()
    }

    fn assert_nothing_left(&mut self, when: &str) {
        let left = self.survivors();
        assert!(left.is_empty(), "{when}: processes of the run survive: {left:#?}");
        let entries = self.tmp_entries();
        assert!(entries.is_empty(), "{when}: left in $TMPDIR: {entries:?}");
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let mut all = self.seen.clone();
        all.extend(mentioning(&self.tmp()));
        for s in all.iter().filter(|s| s.alive()) {
            signal(s.pid, SIGKILL);
        }
    }
}

fn wait_at_most(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn stderr_of(child: Child) -> String {
    text(&child.wait_with_output().unwrap())
}

#[test]
fn sigkill_of_the_runner_leaves_nothing_after_the_next_run() {
    sigkill_mid_ipc_cell("dbus-daemon");
}

/// dbus-broker runs in a private mount namespace, started through unshare,
/// sh and dbus-broker-launch: every layer must go.
#[test]
fn sigkill_of_the_runner_takes_dbus_broker_along() {
    sigkill_mid_ipc_cell("dbus-broker");
}

fn sigkill_mid_ipc_cell(bus: &str) {
    // kd or kb: a short directory name (see Sandbox::new).
    let mut sb = Sandbox::new(&format!("k{}", &bus[5..6]));
    let mut runner = sb.start_ipc_run(bus);
    let killed = runner.id();
    signal(killed, SIGKILL);
    let _ = runner.wait();
    let left = sb.survivors();
    assert!(
        left.is_empty(),
        "the bus daemon and servers must die with the runner: {left:#?}"
    );
    let leftovers = sb.tmp_entries();
    assert!(!leftovers.is_empty(), "the killed run had directories in $TMPDIR");

    // The next run (a small one) removes the dead run's directories and says so.
    let o = sb
        .command(&["--adapters", "raw", "--scenarios", "marshal/mixed"])
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    for dir in &leftovers {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            out.contains(&name) && out.contains("removed"),
            "the next run did not report removing {name}:\n{out}"
        );
    }
    sb.assert_nothing_left("after the next run");
}

#[test]
fn sighup_stops_the_run_cleanly() {
    let mut sb = Sandbox::new("hup");
    let mut runner = sb.start_ipc_run("dbus-daemon");
    signal(runner.id(), SIGHUP);
    let status = wait_at_most(&mut runner, Duration::from_secs(30));
    let out = stderr_of(runner);
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(130),
        "SIGHUP is an interruption:\n{out}"
    );
    assert!(out.contains("--resume"), "the results are kept:\n{out}");
    let r = validate(&results_file(&sb.out()));
    assert!(!r.run.complete);
    sb.assert_nothing_left("after SIGHUP");
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_still_cleans_up() {
    let mut sb = Sandbox::new("int2");
    let mut runner = sb.start_ipc_run("dbus-daemon");
    // A few ms apart: the second comes while the first's clean stop is under
    // way, and after the first was delivered (a pending signal absorbs a second).
    signal(runner.id(), SIGINT);
    std::thread::sleep(Duration::from_millis(3));
    signal(runner.id(), SIGINT);
    let status = wait_at_most(&mut runner, Duration::from_secs(10));
    let out = stderr_of(runner);
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{out}");
    sb.assert_nothing_left("after two SIGINTs");
}

/// `report`, `compare`, `history` and `spread` blocked on a FIFO (nothing writes to it)
/// exit with 130 on SIGTERM and SIGINT.
#[test]
fn reading_commands_answer_signals_while_blocked() {
    let dir = TempDir::new("cleanup-fifo");
    let fifo = dir.path().join("results.json");
    let ok = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(ok.success());
    let fifo = fifo.to_str().unwrap();
    for (args, sig) in [
        (vec!["report", fifo], SIGTERM),
        (vec!["compare", fifo, fifo], SIGTERM),
        (vec!["history", fifo], SIGTERM),
        (vec!["spread", fifo, fifo], SIGINT),
        (vec!["report", fifo], SIGINT),
    ] {
        let mut child = dbus_matrix(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(500));
        signal(child.id(), sig);
        let status = wait_at_most(&mut child, Duration::from_secs(5));
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(130),
            "{args:?} after {sig}: {status:?} (None: still blocked after 5 s)"
        );
    }
}

/// `verify` has nothing to keep: the first signal ends it with 130, its
/// adapter processes and its directory go with it.
#[test]
fn verify_ends_at_the_first_signal_and_leaves_nothing() {
    let mut sb = Sandbox::new("verify-sig");
    let mut child = dbus_matrix(&["--matrix", repo_matrix().to_str().unwrap(), "verify"])
        .env("TMPDIR", sb.tmp())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while sb.tmp_entries().is_empty() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!sb.tmp_entries().is_empty(), "verify made no scratch directory");
    std::thread::sleep(Duration::from_millis(200));
    sb.seen = descendants(child.id());
    signal(child.id(), SIGTERM);
    let status = wait_at_most(&mut child, Duration::from_secs(5));
    let out = stderr_of(child);
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{out}");
    sb.assert_nothing_left("after SIGTERM to verify");
}

/// What a SIGKILL leaves mid-write is removed by the next command there: a
/// results temp file of a dead writer (`.NAME.tmp-PID`) by a report of that
/// directory, and a scratch directory killed while created (holding only
/// `.owner-lock.new`) by the next run. A live writer's temp file is kept.
#[test]
fn leftovers_of_killed_writes_are_removed_by_the_next_command() {
    // A pid no process has: above the kernel's largest.
    let dead = 4_194_305;
    let dir = TempDir::new("cleanup-leftovers");
    let results = dir.path().join("r.json");
    std::fs::copy(workspace().join("runner/tests/fixtures/run-1.json"), &results).unwrap();
    let stale = dir.path().join(format!(".r.json.tmp-{dead}"));
    let live = dir.path().join(format!(".r.json.tmp-{}", std::process::id()));
    // A write cut short: the start of what the runner writes (another
    // program's file of that name, holding anything else, is kept).
    std::fs::write(&stale, b"{\n  \"format\": \"dbus-ma").unwrap();
    std::fs::write(&live, b"").unwrap();
    let o = dbus_matrix(&["report", results.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!stale.exists(), "a dead writer's temp file stays");
    assert!(live.exists(), "a live writer's temp file was removed");

    let setup = fault_setup("cleanup-scratch", &["fault-ok"], &["marshal/mixed"]);
    let tmp = setup.dir.path().join("t");
    let half_made = tmp.join(format!("dbus-matrix-run-{dead}-0"));
    std::fs::create_dir_all(&half_made).unwrap();
    std::fs::write(half_made.join(".owner-lock.new"), b"").unwrap();
    let out = setup.out();
    let o = setup
        .command(&["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!half_made.exists(), "a scratch directory killed while created stays");
    assert!(
        text(&o).contains(&format!("removed {}", half_made.display())),
        "{}",
        text(&o)
    );
}
