//! The count of a window zeroed and dumped through vgdb, as every process of
//! an IPC cell is counted, checked against the real thing: the difference
//! between two whole runs of the same process under callgrind, which needs
//! no zero. The process is dbus-daemon, the work GetId calls to the bus
//! driver over one connection, each waiting for its reply: a connection per
//! call (`dbus-send`) made the daemon's count follow the schedule (how the
//! SASL lines arrive), and the whole runs then differed from the window by 2%
//! in the Nix check's build, under load.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use harness::ipc::stream;
use harness::wire::{self, Value};

use super::Callgrind;
use crate::measure::instructions::totals;

/// Calls before the window, and in it (the whole runs make CALLS and 2×CALLS).
const CALLS: u32 = 100;

struct Bus {
    child: Child,
    address: String,
}

/// A failed assertion must leave no daemon running.
impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The test's directory, removed however the test ends.
struct Scratch(std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
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

/// A connection to the bus that has said Hello.
struct Client {
    stream: UnixStream,
    serial: u32,
}

impl Client {
    fn connect(bus: &Bus) -> Client {
        // `unix:path=…,guid=…` (the listen address is `unix:dir=`).
        let path = bus.address.strip_prefix("unix:path=").expect("a unix:path address");
        let path = path.split(',').next().unwrap();
        let mut stream = UnixStream::connect(path).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(60)))
            .unwrap();
        stream::authenticate(&mut stream, false).unwrap();
        let mut c = Client { stream, serial: 0 };
        c.call("Hello");
        c
    }

    /// A method of the bus driver, and its reply.
    fn call(&mut self, member: &str) {
        self.serial += 1;
        let fields = [
            (wire::FIELD_PATH, Value::ObjectPath("/org/freedesktop/DBus".into())),
            (wire::FIELD_INTERFACE, Value::Str("org.freedesktop.DBus".into())),
            (wire::FIELD_MEMBER, Value::Str(member.into())),
            (wire::FIELD_DESTINATION, Value::Str("org.freedesktop.DBus".into())),
        ];
        let bytes = wire::encode_message(wire::MESSAGE_METHOD_CALL, 0, self.serial, &fields, &[]);
        self.stream.write_all(&bytes).unwrap();
        loop {
            let m = stream::read_message(&mut self.stream).unwrap();
            if m.header.field(wire::FIELD_REPLY_SERIAL) == Some(&Value::U32(self.serial)) {
                assert_ne!(m.header.message_type, wire::MESSAGE_ERROR, "{member}: {m:?}");
                return;
            }
        }
    }

    fn calls(&mut self, n: u32) {
        for _ in 0..n {
            self.call("GetId");
        }
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
    ["valgrind", "vgdb", "dbus-daemon"]
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
        let _ = writeln!(std::io::stderr(), "SKIPPED: {} not on PATH", missing.join(", "));
        return;
    }
    let scratch = Scratch(std::env::temp_dir().join(format!("dmw-{}", std::process::id())));
    let root = &scratch.0;
    let whole = |n: u32, name: &str| {
        let dir = root.join(name);
        let cg = Callgrind::new(&dir.join("cg")).unwrap();
        let bus = start(&cg, &dir);
        Client::connect(&bus).calls(n);
        stop(bus, &dir.join("cg"))
    };
    let once = whole(CALLS, "a");
    let twice = whole(2 * CALLS, "b");
    let truth = (twice - once) as f64 / f64::from(CALLS);

    let dir = root.join("w");
    let cg = Callgrind::new(&dir.join("cg")).unwrap();
    let bus = start(&cg, &dir);
    let mut client = Client::connect(&bus);
    client.calls(CALLS);
    cg.zero(bus.child.id()).unwrap();
    client.calls(CALLS);
    let window = cg.dump(bus.child.id()).unwrap().iter().sum::<u64>() as f64 / f64::from(CALLS);
    drop(client);
    stop(bus, &dir.join("cg"));

    // The window adds only vgdb's two wake-ups (tens of instructions per call).
    let off = (window - truth) / truth;
    assert!(
        off.abs() < 0.005,
        "a window counts {window:.0} instructions per call, two whole runs differ by {truth:.0} per call ({:+.2}%)",
        off * 100.0
    );
}
