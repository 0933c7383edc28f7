//! The count of a window zeroed and dumped through vgdb, as every process of
//! an IPC cell is counted, checked against the real thing: the difference
//! between two whole runs of the same process under callgrind, which needs
//! no zero. The process is dbus-daemon, the work `dbus-send` calls to the
//! bus driver (each connects, says Hello, asks GetId and leaves).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::Callgrind;
use crate::measure::instructions::totals;

/// Calls before the window, and in it (the whole runs make CALLS and 2×CALLS).
const CALLS: u32 = 5;

struct Bus {
    child: Child,
    address: String,
}

/// dbus-daemon under `cg`'s callgrind, its address read from stdout.
fn start(cg: &Callgrind, dir: &Path) -> Bus {
    let conf = dir.join("bus.conf");
    std::fs::write(
        &conf,
        format!(
            "<busconfig><type>session</type><listen>unix:dir={}</listen>\
             <policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/>\
             <allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>",
            dir.display()
        ),
    )
    .unwrap();
    let wrapper = cg.wrapper();
    let mut child = Command::new(&wrapper[0])
        .args(&wrapper[1..])
        .arg("dbus-daemon")
        .arg(format!("--config-file={}", conf.display()))
        .args(["--nofork", "--print-address"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("valgrind dbus-daemon");
    let mut address = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut address)
        .unwrap();
    assert!(
        !address.trim().is_empty(),
        "dbus-daemon under callgrind printed no address"
    );
    Bus {
        child,
        address: address.trim().to_string(),
    }
}

fn calls(bus: &Bus, n: u32) {
    for _ in 0..n {
        let status = Command::new("dbus-send")
            .arg(format!("--bus={}", bus.address))
            .args([
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/",
                "org.freedesktop.DBus.GetId",
            ])
            .stdout(Stdio::null())
            .status()
            .expect("dbus-send");
        assert!(status.success(), "dbus-send: {status}");
    }
}

/// Ends the bus (SIGTERM: callgrind writes its final file) and returns the
/// instructions of its whole run.
fn stop(mut bus: Bus, cg_dir: &Path) -> u64 {
    let pid = bus.child.id();
    // SIGTERM, not SIGKILL: callgrind writes its file as the process exits.
    // SAFETY: kill(2) on our own child, which has not been waited for.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) }, 0);
    bus.child.wait().unwrap();
    // The end-of-run file of each thread: callgrind.PID-TT.
    let whole = format!("callgrind.{pid}");
    let mut total = 0;
    let mut files = 0;
    for entry in std::fs::read_dir(cg_dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name == whole || name.strip_prefix(&whole).is_some_and(|t| t.starts_with('-')) {
            // With --separate-threads, callgrind.PID itself holds no costs.
            let text = std::fs::read_to_string(cg_dir.join(&name)).unwrap();
            if let Some(n) = totals(&text) {
                total += n;
                files += 1;
            }
        }
    }
    assert!(
        files > 0,
        "callgrind wrote no file for process {pid} in {}",
        cg_dir.display()
    );
    total
}

fn missing_tools() -> Vec<&'static str> {
    ["valgrind", "vgdb", "dbus-daemon", "dbus-send"]
        .into_iter()
        .filter(|t| {
            Command::new("sh")
                .arg("-c")
                .arg(format!("command -v {t}"))
                .stdout(Stdio::null())
                .status()
                .map_or(true, |s| !s.success())
        })
        .collect()
}

#[test]
fn a_zeroed_window_counts_what_two_whole_runs_differ_by() {
    let missing = missing_tools();
    if !missing.is_empty() {
        // .ci/run installs them all; only a machine without them skips.
        eprintln!("SKIPPED: {} not on PATH", missing.join(", "));
        return;
    }
    let root = std::env::temp_dir().join(format!("dmw-{}", std::process::id()));
    let whole = |n: u32, name: &str| {
        let dir = root.join(name);
        let cg = Callgrind::new(&dir.join("cg")).unwrap();
        let bus = start(&cg, &dir);
        calls(&bus, n);
        stop(bus, &dir.join("cg"))
    };
    let once = whole(CALLS, "a");
    let twice = whole(2 * CALLS, "b");
    let truth = (twice - once) as f64 / f64::from(CALLS);

    let dir = root.join("w");
    let cg = Callgrind::new(&dir.join("cg")).unwrap();
    let bus = start(&cg, &dir);
    calls(&bus, CALLS);
    cg.zero(bus.child.id()).unwrap();
    calls(&bus, CALLS);
    let window = cg.dump(bus.child.id()).unwrap().iter().sum::<u64>() as f64 / f64::from(CALLS);
    stop(bus, &dir.join("cg"));
    std::fs::remove_dir_all(&root).unwrap();

    // The window adds only vgdb's two wake-ups (tens of instructions per call).
    let off = (window - truth) / truth;
    assert!(
        off.abs() < 0.005,
        "a window counts {window:.0} instructions per call, two whole runs differ by {truth:.0} per call ({:+.2}%)",
        off * 100.0
    );
}
