//! Instructions per operation of every process of an IPC cell (client,
//! server, subscribers, bus daemon) under valgrind's callgrind, over one
//! verified window of operations: each process runs under callgrind with
//! its gdbserver on (`--vgdb=yes`), the runner zeroes every process's
//! counters when the client announces the window (`vgdb … zero`) and dumps
//! them when it ends (`vgdb … dump`), as `callgrind_control -z` / `-d` do.
//! All threads of a process are counted. Callgrind's virtual CPU makes the
//! counts of the same files the same on any machine (docs/benchmarking.md);
//! hardware counters would need a PMU, which [`hardware_unavailable`] looks for.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use harness::contract::{self, Repeat, GO, WINDOW_BEGIN, WINDOW_END};
use harness::ipc::Transport;
use harness::results::{CountMethod, IpcInstructions, ProcessInstructions};

use super::costs::Participant;
use super::instructions::{self, totals};
use crate::process::adapter::Running;

/// Operations in the counted window: a fixed number, so that the window's
/// constant (the two handshakes with the runner) weighs the same in every run.
pub const ITERATIONS: u64 = 20;
/// How long one `vgdb` command may take (it wakes a process blocked in a
/// system call through ptrace after 100 ms).
const VGDB_TIMEOUT: Duration = Duration::from_secs(30);
/// Where the kernel lists the PMUs perf can use.
const EVENT_SOURCES: &str = "/sys/bus/event_source/devices";

/// Why instruction counts come from callgrind rather than hardware counters.
pub fn hardware_unavailable() -> String {
    hardware_unavailable_in(Path::new(EVENT_SOURCES))
}

fn hardware_unavailable_in(devices: &Path) -> String {
    let has = |name: &str| devices.join(name).exists();
    if has("cpu") || has("cpu_core") || has("cpu_atom") || has("armv8_pmuv3_0") {
        "hardware counters are not implemented in the runner (written on a machine without a PMU): callgrind counts"
            .into()
    } else {
        format!("no PMU: software events only ({} lists no cpu PMU)", devices.display())
    }
}

/// Callgrind for the processes of one cell: their output files and gdbserver
/// FIFOs in one directory.
pub struct Callgrind {
    dir: PathBuf,
}

impl Callgrind {
    /// Uses (and empties) `dir`.
    pub fn new(dir: &Path) -> Result<Callgrind> {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Callgrind { dir: dir.to_path_buf() })
    }

    /// valgrind and its options: a program to run a process under. Without
    /// `GLIBC_TUNABLES` ([`instructions::UNSET`]).
    pub fn wrapper(&self) -> Vec<OsString> {
        vec![
            "env".into(),
            "-u".into(),
            instructions::UNSET.into(),
            "valgrind".into(),
            "--tool=callgrind".into(),
            "--vgdb=yes".into(),
            format!("--vgdb-prefix={}", self.vgdb_prefix().display()).into(),
            format!("--callgrind-out-file={}/callgrind.%p", self.dir.display()).into(),
            // A file per thread: the calling thread apart from a runtime's helpers.
            "--separate-threads=yes".into(),
            // Its own log goes to a file: a process's stderr stays its own.
            format!("--log-file={}/valgrind.%p.log", self.dir.display()).into(),
        ]
    }

    fn vgdb_prefix(&self) -> PathBuf {
        self.dir.join("vgdb")
    }

    fn vgdb(&self, pid: u32, command: &str) -> Result<()> {
        let mut child = Command::new("vgdb")
            .arg(format!("--vgdb-prefix={}", self.vgdb_prefix().display()))
            .arg(format!("--pid={pid}"))
            .arg(command)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot run vgdb (valgrind's gdbserver client)")?;
        let deadline = Instant::now() + VGDB_TIMEOUT;
        let status = loop {
            if let Some(s) = child.try_wait()? {
                break s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                bail!("vgdb {command} of process {pid} did not finish within {VGDB_TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        if !status.success() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            bail!("vgdb {command} of process {pid}: {status}: {}", err.trim());
        }
        Ok(())
    }

    /// Zeroes the counters of process `pid`.
    pub fn zero(&self, pid: u32) -> Result<()> {
        self.vgdb(pid, "zero")
    }

    /// Dumps the counters of process `pid`: the instructions of each of its
    /// threads since the last zero, in callgrind's thread order.
    pub fn dump(&self, pid: u32) -> Result<Vec<u64>> {
        let before = self.dumps(pid)?;
        self.vgdb(pid, "dump")?;
        let new: Vec<Dump> = self.dumps(pid)?.into_iter().filter(|d| !before.contains(d)).collect();
        let part = new
            .iter()
            .map(|d| d.part)
            .max()
            .with_context(|| format!("callgrind wrote no dump for process {pid}"))?;
        let mut threads: Vec<&Dump> = new.iter().filter(|d| d.part == part).collect();
        threads.sort_by_key(|d| d.thread);
        threads
            .into_iter()
            .map(|d| {
                let text = std::fs::read_to_string(&d.path).with_context(|| format!("reading {}", d.path.display()))?;
                totals(&text).with_context(|| format!("no instruction total in {}", d.path.display()))
            })
            .collect()
    }

    /// The dump files of `pid`: `callgrind.PID.N-TT` (dump N of thread TT),
    /// or `callgrind.PID.N` from a run without `--separate-threads`.
    fn dumps(&self, pid: u32) -> Result<Vec<Dump>> {
        let prefix = format!("callgrind.{pid}.");
        let entries = std::fs::read_dir(&self.dir).with_context(|| format!("reading {}", self.dir.display()))?;
        Ok(entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().to_string();
                let rest = name.strip_prefix(&prefix)?;
                let (part, thread) = rest.split_once('-').unwrap_or((rest, "1"));
                Some(Dump {
                    part: part.parse().ok()?,
                    thread: thread.parse().ok()?,
                    path: e.path(),
                })
            })
            .collect())
    }
}

/// One file callgrind wrote when asked to dump.
#[derive(PartialEq)]
struct Dump {
    part: u64,
    thread: u64,
    path: PathBuf,
}

/// The counted client and the other processes of the cell (already running
/// under the same [`Callgrind`]).
pub struct IpcWindow<'a> {
    pub bin: &'a Path,
    pub scenario: &'a str,
    pub transport: Option<&'a Transport>,
    pub ack_fifo: Option<&'a Path>,
    pub others: Vec<Participant>,
    pub client_cpu: Option<usize>,
    pub timeout: Duration,
}

/// Runs the client under `cg` for one window of [`ITERATIONS`] operations and
/// counts every process over it. `Err` is why the counts are missing.
pub fn count(cg: &Callgrind, w: &IpcWindow, interrupted: &AtomicBool) -> Result<IpcInstructions, String> {
    let repeat = contract::Command::Repeat(Repeat {
        scenario: w.scenario.to_string(),
        iterations: ITERATIONS,
        windows: 1,
        transport: w.transport.cloned(),
        ack_fifo: w.ack_fifo.map(Path::to_path_buf),
    });
    let what = "the counted client (callgrind)".to_string();
    let mut client = Running::start_under(&cg.wrapper(), w.bin, &repeat, w.client_cpu, what, true)?;
    client.expect(WINDOW_BEGIN, w.timeout, interrupted)?;
    let client_pid = [client.pid()];
    let roles: Vec<(&str, &[u32])> = std::iter::once(("client", &client_pid[..]))
        .chain(w.others.iter().map(|p| (p.role, p.pids.as_slice())))
        .collect();
    let all = || roles.iter().flat_map(|(_, pids)| pids.iter().copied());
    for pid in all() {
        cg.zero(pid).map_err(|e| format!("{e:#}"))?;
    }
    client.send(GO)?;
    client.expect(WINDOW_END, w.timeout, interrupted)?;
    let mut processes = Vec::new();
    for (role, pids) in &roles {
        let mut threads = Vec::new();
        for &pid in *pids {
            threads.extend(cg.dump(pid).map_err(|e| format!("{e:#}"))?);
        }
        let per_op = |n: u64| n as f64 / ITERATIONS as f64;
        processes.push(ProcessInstructions {
            role: role.to_string(),
            instructions_per_op: per_op(threads.iter().sum()),
            threads: threads.into_iter().map(per_op).collect(),
        });
    }
    client.send(GO)?;
    client.finish(interrupted)?;
    Ok(IpcInstructions {
        method: CountMethod::Callgrind,
        operations: ITERATIONS,
        processes,
        hardware_unavailable: Some(hardware_unavailable()),
        notes: Vec::new(),
    })
}

#[cfg(test)]
#[path = "window_count_tests.rs"]
mod window_count_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_without_a_cpu_pmu_says_so() {
        let dir = std::env::temp_dir().join(format!("dbus-matrix-pmu-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("software")).unwrap();
        let none = hardware_unavailable_in(&dir);
        std::fs::create_dir_all(dir.join("cpu")).unwrap();
        let some = hardware_unavailable_in(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(none.starts_with("no PMU: software events only"), "{none}");
        assert!(some.starts_with("hardware counters are not implemented"), "{some}");
    }
}
