//! Hostile or unlucky input (issue 27): a $TMPDIR holding shell syntax,
//! spaces, XML specials or too many bytes; `--pin` under a CPU mask;
//! `--reference`, `--rerun` and `--force` given where they cannot apply; a
//! full stderr. Each gets what it means or exit 2, never a shell, a panic or
//! a cell-by-cell failure.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use harness::results::CellStatus;
use libc::SIGINT;

use crate::common::*;

/// [`send_signal`], which must reach the process.
fn signal(pid: u32, sig: i32) {
    assert_eq!(send_signal(pid, sig), 0, "kill {sig} {pid}");
}

/// Every path under `dir` whose name is `name`.
fn find_named(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.flatten() {
        let p = e.path();
        if e.file_name() == name {
            found.push(p.clone());
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            found.extend(find_named(&p, name));
        }
    }
    found
}

/// A smoke run of `setup` with `$TMPDIR` at `tmp` and its working directory in
/// the setup's directory; returns the output and the results directory.
fn run_in_tmpdir(setup: &FaultSetup, tmp: &Path, out_name: &str, args: &[&str]) -> (std::process::Output, PathBuf) {
    std::fs::create_dir_all(tmp).unwrap();
    let out = setup.dir.path().join(out_name);
    let mut all = vec!["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = setup
        .command(&all)
        .env("TMPDIR", tmp)
        .current_dir(setup.dir.path())
        .output()
        .unwrap();
    (o, out)
}

fn assert_all_ok(out: &Path, o: &std::process::Output, what: &str) {
    let log = text(o);
    assert!(o.status.success(), "{what}: the run failed:\n{log}");
    let r = validate(&results_file(out));
    assert!(!r.cells.is_empty(), "{what}: no cells");
    for c in &r.cells {
        assert_eq!(
            c.status(),
            CellStatus::Ok,
            "{what}: {} {} {:?}: {:?}",
            c.adapter,
            c.scenario,
            c.bus,
            c.reason()
        );
    }
}

/// The dbus-broker launcher once was a shell script built from paths:
/// `$(touch PWNED)` in $TMPDIR ran, and a lone quote broke the broker.
#[test]
fn a_tmpdir_with_shell_syntax_runs_dbus_broker_and_runs_nothing_else() {
    let setup = fault_setup_with_buses("inject", &["fault-ok"], &["call/void"], &["dbus-broker"]);
    for (i, name) in ["q'$(touch PWNED)'q", "lone'quote"].into_iter().enumerate() {
        let tmp = setup.dir.path().join(name);
        let (o, out) = run_in_tmpdir(&setup, &tmp, &format!("out{i}"), &[]);
        let pwned = find_named(setup.dir.path(), "PWNED");
        assert!(
            pwned.is_empty(),
            "TMPDIR {name:?} ran a command: {pwned:?}\n{}",
            text(&o)
        );
        assert_all_ok(&out, &o, &format!("TMPDIR {name:?}"));
    }
}

/// A space, `&<>`, quotes and `$` in $TMPDIR: the bus addresses are escaped
/// as the D-Bus specification says, the configs as XML, on every bus, for
/// the fault adapter (a raw socket) and for the libdbus adapters (dbus-0.9,
/// the C program, dbus-python), which parse the address (also peer to peer).
#[test]
fn a_tmpdir_with_spaces_and_xml_specials_works_on_every_bus() {
    let buses = ["dbus-daemon", "dbus-broker", "busd"];
    let setup = fault_setup_with_buses("esc", &["fault-ok"], &["call/void"], &buses);
    // Short: libdbus allows 99 bytes of a socket path, and the peer-to-peer
    // sockets lie three directories below $TMPDIR.
    let tmp_dir = TempDir(std::env::temp_dir().join(format!("dmt s&<>'\"${}", std::process::id())));
    let tmp = tmp_dir.path();
    let (o, out) = run_in_tmpdir(&setup, tmp, "out-fault", &[]);
    assert_all_ok(&out, &o, "fault-ok");

    let out = setup.dir.path().join("out-libdbus");
    let mut all = vec!["dbus-daemon", "dbus-broker", "busd"];
    // Peer to peer the socket lies in the run's directory: where $TMPDIR is
    // deep (the Nix sandbox simulation's), it would not fit libdbus's 99
    // bytes, which a_tmpdir_too_long_for_sockets_is_refused_up_front covers.
    let p2p_socket = tmp.join("dbus-matrix-run-4194304-0/bus-p2p/adapter-dbus-python-1-3.sock");
    if p2p_socket.as_os_str().len() <= 99 {
        all.push("p2p");
    }
    let o = smoke_run_of_repo(
        &out,
        &[
            "--adapters",
            "dbus-0.9,libdbus-c-1.14,dbus-python-1.3",
            "--scenarios",
            "call/void",
            "--roles",
            "same",
            "--buses",
            &all.join(","),
        ],
    )
    .env("TMPDIR", tmp)
    .output()
    .unwrap();
    assert_none_failed(&out, &o, &all, "libdbus adapters");
}

/// A $TMPDIR too long for the sockets' 108-byte `sun_path` is refused once,
/// before any cell, naming the limit (it failed cell by cell); a run without
/// sockets still runs there.
#[test]
fn a_tmpdir_too_long_for_sockets_is_refused_up_front() {
    let setup = fault_setup_with_buses("long", &["fault-ok"], &["call/void", "marshal/mixed"], &["dbus-daemon"]);
    let mut tmp = setup.dir.path().to_path_buf();
    while tmp.as_os_str().len() < 120 {
        tmp.push("d123456789");
    }
    let (o, out) = run_in_tmpdir(&setup, &tmp, "out-ipc", &[]);
    let log = text(&o);
    assert_eq!(o.status.code(), Some(2), "expected exit 2:\n{log}");
    assert!(
        log.contains("sun_path") && log.contains("TMPDIR"),
        "the reason is named:\n{log}"
    );
    assert!(!out.exists(), "a cell ran before the refusal:\n{log}");

    let (o, out) = run_in_tmpdir(&setup, &tmp, "out-codec", &["--scenarios", "marshal/mixed"]);
    assert_all_ok(&out, &o, "marshal only, long TMPDIR");
}

/// The CPUs of this process (`Cpus_allowed_list`, e.g. `0-3,8`).
fn allowed_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let mut cpus = Vec::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => cpus.push(part.parse().unwrap()),
        }
    }
    cpus
}

/// `--pin` names CPUs, checked against the ones the runner may use (a
/// `taskset` mask), not against their count.
#[test]
fn pin_is_checked_against_the_allowed_cpus() {
    let last = *allowed_cpus().last().unwrap();
    if last == 0 {
        // One CPU numbered 0: no CPU outside the mask to refuse; nothing to check.
        eprintln!("skipped: this machine allows only CPU 0");
        return;
    }
    let setup = fault_setup_with_buses("pin", &["fault-ok"], &["call/void"], &["dbus-daemon"]);
    let log_file = setup.dir.path().join("invocations.log");
    let run = |pin: &str, out: &str| {
        let out = setup.dir.path().join(out);
        let mut c = Command::new("taskset");
        c.arg("-c").arg(last.to_string()).arg(runner_bin());
        c.arg("--matrix")
            .arg(&setup.matrix)
            .arg("--bin-dir")
            .arg(&setup.bin_dir);
        c.args(["run", "--profile", "smoke", "--quiet", "--pin", pin, "--out"])
            .arg(&out);
        c.env("FAULT_ADAPTER_LOG", &log_file);
        (c.output().unwrap(), out)
    };
    let (o, out) = run(&format!("client={last}"), "out-ok");
    assert_all_ok(&out, &o, &format!("--pin client={last} under taskset -c {last}"));
    let log = std::fs::read_to_string(&log_file).unwrap();
    assert!(
        log.lines()
            .any(|l| l.starts_with("fault-ok bench call/void") && l.ends_with(&format!("cpus={last}"))),
        "the client ran on CPU {last}:\n{log}"
    );

    let (o, out) = run("client=0", "out-refused");
    let log = text(&o);
    assert_eq!(o.status.code(), Some(2), "CPU 0 is outside the mask:\n{log}");
    assert!(
        log.contains("CPU 0") && log.contains(&format!("allowed: {last}")),
        "the allowed set is named:\n{log}"
    );
    assert!(!out.exists(), "a cell ran:\n{log}");
}

/// `--reference` is checked whenever it is given, before any cell: an
/// unknown id or a baseline is exit 2 in `run` (whatever `--roles`) and in
/// `interop` (whatever `--pairs`); `run --interop reference` without any
/// reference too.
#[test]
fn reference_is_validated_before_any_cell() {
    let m = repo_matrix();
    let m = m.to_str().unwrap();
    let dir = TempDir::new("reference");
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--matrix",
            m,
            "run",
            "--profile",
            "smoke",
            "--quiet",
            "--out",
            o,
            "--adapters",
            "raw",
            "--scenarios",
            "marshal/mixed",
        ];
        args.extend_from_slice(extra);
        dbus_matrix(&args)
    };
    let cases: Vec<(Command, &str)> = vec![
        (
            run(&["--roles", "same", "--reference", "bogus"]),
            "\"bogus\" is not an adapter",
        ),
        (run(&["--roles", "same", "--reference", "raw"]), "\"raw\" is a baseline"),
        (
            dbus_matrix(&["--matrix", m, "interop", "--reference", "raw"]),
            "\"raw\" is a baseline",
        ),
        (
            dbus_matrix(&["--matrix", m, "interop", "--pairs", "all", "--reference", "bogus"]),
            "\"bogus\" is not an adapter",
        ),
    ];
    for (mut c, needle) in cases {
        let r = c.output().unwrap();
        let log = text(&r);
        assert_eq!(r.status.code(), Some(2), "{c:?}: expected exit 2:\n{log}");
        assert!(log.contains(needle), "{c:?}: expected {needle:?} in:\n{log}");
        assert!(!out.exists(), "{c:?}: a cell ran before the refusal:\n{log}");
    }

    // A matrix without [roles]: `--interop reference` has no reference.
    let setup = fault_setup_with_buses("no-reference", &["fault-ok"], &["call/void"], &["dbus-daemon"]);
    let r = setup
        .command(&[
            "run",
            "--profile",
            "smoke",
            "--quiet",
            "--interop",
            "reference",
            "--out",
        ])
        .arg(setup.out())
        .output()
        .unwrap();
    let log = text(&r);
    assert_eq!(r.status.code(), Some(2), "expected exit 2:\n{log}");
    assert!(log.contains("reference"), "{log}");
    assert!(!setup.out().exists(), "the cells ran before the refusal:\n{log}");
}

/// `--rerun` and `--force` only mean something with `--resume`.
#[test]
fn rerun_and_force_need_resume() {
    let setup = fault_setup("rerun-force", &["fault-ok"], &["marshal/mixed"]);
    for flag in [&["--rerun", "fault-ok/*"][..], &["--force"]] {
        let mut args = vec!["run", "--profile", "smoke", "--quiet", "--out"];
        let out = setup.out();
        args.push(out.to_str().unwrap());
        args.extend_from_slice(flag);
        let o = setup.command(&args).output().unwrap();
        let log = text(&o);
        assert_eq!(o.status.code(), Some(2), "{flag:?} without --resume:\n{log}");
        assert!(log.contains("--resume"), "{log}");
        assert!(!out.exists(), "{flag:?}: a run started:\n{log}");
    }
}

/// `--rerun` with many stars answers at once (a backtracking glob took 12.6 s
/// for 6 stars and never ended for 28).
#[test]
fn rerun_with_many_stars_answers_at_once() {
    let setup = fault_setup("many-stars", &["fault-ok"], &["marshal/mixed"]);
    let file = smoke_run(&setup, "first", false);
    let pattern = format!("{}z", "*".repeat(28));
    let mut child = setup
        .command(&[
            "run",
            "--quiet",
            "--resume",
            file.to_str().unwrap(),
            "--rerun",
            &pattern,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_at_most(&mut child, Duration::from_secs(5));
    let log = text(&child.wait_with_output().unwrap());
    assert!(status.is_some(), "--rerun with 28 stars ran for more than 5 s");
    assert_eq!(status.and_then(|s| s.code()), Some(2), "{log}");
    assert!(log.contains("matches no cell"), "{log}");
}

/// Waits for `child` up to `limit`; kills it after.
fn wait_at_most(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Interrupted during `run --interop`'s check, the run is an interrupted
/// run: exit 130, the cells' table on stdout, the results file kept.
#[test]
fn an_interrupt_during_run_interop_exits_130_with_the_report() {
    // Several adapters: enough pairs that the interrupt comes before the last.
    let adapters = ["fault-a", "fault-b", "fault-c", "fault-d"];
    let setup = fault_setup_with_buses("interop-int", &adapters, &["call/void"], &["dbus-daemon"]);
    let log_file = setup.dir.path().join("invocations.log");
    let mut child = setup
        .command(&["run", "--profile", "smoke", "--quiet", "--interop", "all", "--out"])
        .arg(setup.out())
        .env("FAULT_ADAPTER_LOG", &log_file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The run lists each adapter once; the interop check lists them again.
    let start = Instant::now();
    loop {
        let log = std::fs::read_to_string(&log_file).unwrap_or_default();
        if log.lines().filter(|l| l.split(' ').nth(1) == Some("list")).count() > adapters.len() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the interop check never began:\n{log}"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before its interop check:\n{log}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    signal(child.id(), SIGINT);
    let status = wait_at_most(&mut child, Duration::from_secs(60));
    let o = child.wait_with_output().unwrap();
    let log = text(&o);
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{log}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    for a in adapters {
        assert!(stdout.contains(a), "the report names {a}:\n{log}");
    }
    assert!(log.contains("interrupted"), "{log}");
    let r = validate(&results_file(&setup.out()));
    assert_eq!(r.cells.len(), adapters.len(), "the finished cells are kept:\n{log}");
}

fn dev_full() -> std::fs::File {
    std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap()
}

/// With stderr on a full device, saying that a dead run's directory was
/// removed is not a panic.
#[test]
fn a_full_stderr_is_not_a_panic() {
    let setup = fault_setup("full-stderr", &["fault-ok"], &["marshal/mixed"]);
    let tmp = setup.dir.path().join("t");
    // A dead run's directory: ours by name, its lock free.
    let dead = tmp.join("dbus-matrix-run-1-0");
    std::fs::create_dir_all(&dead).unwrap();
    std::fs::write(dead.join(".owner-lock"), b"").unwrap();
    let o = setup
        .command(&["run", "--profile", "smoke", "--quiet", "--out"])
        .arg(setup.out())
        .env("TMPDIR", &tmp)
        .stderr(dev_full())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!dead.exists(), "the dead run's directory is removed");
}

/// A second Ctrl-C ends the run at once even when stderr is full (the
/// signal thread once panicked saying so, and the run went on). The bus is
/// a stand-in that never answers, so the first Ctrl-C's clean stop waits
/// for its start to time out (20 s).
#[test]
fn a_second_ctrl_c_with_a_full_stderr_still_ends_the_run_at_once() {
    // A short tag: its TMPDIR nests two levels below the test's, and the bus
    // socket must still fit (the sandbox simulation's TMPDIR is 26 bytes long).
    let setup = fault_setup_with_buses("c2", &["fault-ok"], &["call/void"], &["dbus-daemon"]);
    let daemon = setup.dir.path().join("silent-dbus-daemon");
    std::fs::write(
        &daemon,
        "#!/bin/sh\ncase \"$1\" in --version) echo 'silent 0';; *) touch \"$STAND_IN_STARTED\"; exec sleep 60;; esac\n",
    )
    .unwrap();
    std::fs::set_permissions(&daemon, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let started = setup.dir.path().join("stand-in-started");
    let tmp = setup.dir.path().join("t");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = setup
        .command(&["run", "--profile", "smoke", "--quiet", "--out"])
        .arg(setup.out())
        .env("TMPDIR", &tmp)
        .env("DBUS_MATRIX_DBUS_DAEMON", &daemon)
        .env("STAND_IN_STARTED", &started)
        .stdout(Stdio::null())
        .stderr(dev_full())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !started.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the stand-in bus never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(child.id(), SIGINT);
    std::thread::sleep(Duration::from_millis(50));
    let second = Instant::now();
    signal(child.id(), SIGINT);
    let status = wait_at_most(&mut child, Duration::from_secs(30));
    let took = second.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "the second Ctrl-C took {took:?} to end the run ({status:?})"
    );
    assert_eq!(status.and_then(|s| s.code()), Some(130));
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "left in $TMPDIR: {left:?}");
}

/// Everything the runner and the bus crate write to stderr goes through the
/// runner's non-panicking printer (`output::errln!`); `eprintln!` panics when
/// stderr is full.
#[test]
fn nothing_prints_with_a_panicking_macro() {
    let mut offenders = Vec::new();
    for dir in ["runner/src", "bus/src"] {
        let mut stack = vec![workspace().join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("runner/src/output.rs") {
                    let src = std::fs::read_to_string(&p).unwrap();
                    for (n, line) in src.lines().enumerate() {
                        let code = line.split("//").next().unwrap_or("");
                        if ["eprintln!", "eprint!", "println!", "print!("]
                            .iter()
                            .any(|m| code.contains(m))
                        {
                            offenders.push(format!("{}:{}: {}", p.display(), n + 1, line.trim()));
                        }
                    }
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "panicking print macros:\n{}",
        offenders.join("\n")
    );
}
