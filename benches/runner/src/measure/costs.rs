//! What one IPC operation costs each process, and the bus, in counts the
//! kernel keeps: CPU time, context switches, system calls, and the messages
//! the bus routed. Counted after timing, by the adapter's
//! `repeat --windows 2`: the same verified operation, a fixed number of times,
//! twice. Window 1 is bracketed by snapshots of every process of the cell
//! (client, server, subscribers, bus daemon); window 2 by a bus monitor,
//! which is not connected during window 1 because copying every message to
//! it is work for the bus.
//!
//! Sources, per thread of each process (a thread that ends inside a window
//! takes its counts with it, and a note says so):
//! - CPU time: `/proc/PID/task/TID/schedstat` (ns on a CPU);
//! - context switches: `/proc/PID/task/TID/status` (voluntary = waited,
//!   involuntary = preempted);
//! - read/write calls: `/proc/PID/io` syscr/syscw (the read and write
//!   families only: sendmsg/recvmsg, which most D-Bus libraries use, are not
//!   among them);
//! - every system call: a perf counter on the `raw_syscalls:sys_enter`
//!   tracepoint (inherited by threads started in the window), when perf
//!   events are allowed (root, or `kernel.perf_event_paranoid` -1).

use std::collections::BTreeMap;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use bus::monitor::BusMonitor;
use harness::contract::{self, Repeat, GO, WINDOW_BEGIN, WINDOW_END};
use harness::ipc::Transport;
use harness::results::{IpcCosts, ProcessCost};

use crate::process::adapter::Running;

/// The counted windows last about this share of the profile's measurement time.
pub const WINDOW_SHARE: f64 = 0.25;
/// Operations slower than this are not counted (two windows of them).
pub const MAX_NATIVE_NS: f64 = 1e9;

/// Operations per window: about `budget` of work, at least 3, at most 100 000.
pub fn iterations(median_ns: f64, budget: Duration) -> u64 {
    ((budget.as_nanos() as f64 / median_ns.max(1.0)) as u64).clamp(3, 100_000)
}

/// One process of the cell (or several, for a bus daemon and its launcher).
pub struct Participant {
    pub role: &'static str,
    pub pids: Vec<u32>,
}

/// Where the counted client connects, and what else to count.
pub struct Window<'a> {
    pub bin: &'a Path,
    pub scenario: &'a str,
    /// Where the service is, and the fan-out subscribers' ack FIFO, as for `bench`.
    pub transport: Option<&'a Transport>,
    pub ack_fifo: Option<&'a Path>,
    pub iterations: u64,
    /// Every process of the cell except the client.
    pub others: Vec<Participant>,
    /// The bus socket, when there is a bus to monitor.
    pub bus_socket: Option<&'a Path>,
    pub client_cpu: Option<usize>,
    pub timeout: Duration,
}

/// Counts `window.iterations` operations twice (processes, then bus traffic).
/// `Err` is the reason the costs are missing (a note of the cell, or "interrupted").
pub fn count(window: &Window, interrupted: &AtomicBool) -> Result<IpcCosts, String> {
    let repeat = contract::Command::Repeat(Repeat {
        scenario: window.scenario.to_string(),
        iterations: window.iterations,
        windows: 2,
        transport: window.transport.cloned(),
        ack_fifo: window.ack_fifo.map(Path::to_path_buf),
    });
    let what = "the counted client".to_string();
    let mut client = Running::start(window.bin, &repeat, window.client_cpu, what, true)?;
    let mut notes = Vec::new();

    // Window 1: every process.
    client.expect(WINDOW_BEGIN, window.timeout, interrupted)?;
    let client_pid = [client.pid()];
    let participants: Vec<(&str, &[u32])> = std::iter::once(("client", &client_pid[..]))
        .chain(window.others.iter().map(|p| (p.role, p.pids.as_slice())))
        .collect();
    let syscall_event = syscall_event(&mut notes);
    let snapshot = Snapshot::take(&participants, syscall_event).map_err(|e| format!("{e:#}"))?;
    client.send(GO)?;
    client.expect(WINDOW_END, window.timeout, interrupted)?;
    let processes = snapshot.close(window.iterations, &mut notes)?;

    // Window 2: the bus, through a monitor connected only now.
    client.send(GO)?;
    client.expect(WINDOW_BEGIN, window.timeout, interrupted)?;
    // A monitor that cannot be had or loses a marker costs the bus figures
    // only: the process figures of window 1 stand.
    let monitor = window.bus_socket.map(|socket| {
        let mut m = BusMonitor::connect(socket)?;
        let id = m.begin()?;
        Ok::<_, anyhow::Error>((m, id))
    });
    client.send(GO)?;
    client.expect(WINDOW_END, window.timeout, interrupted)?;
    let traffic = match monitor.map(|opened| opened.and_then(|(mut m, id)| m.end(id))) {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => {
            notes.push(format!("bus messages not counted: {e:#}"));
            None
        }
    };
    client.send(GO)?;
    client.finish(interrupted)?;
    let n = window.iterations as f64;
    Ok(IpcCosts {
        operations: window.iterations,
        processes,
        bus_messages_per_op: traffic.map(|t| t.messages as f64 / n),
        bus_bytes_per_op: traffic.map(|t| t.bytes as f64 / n),
        bus_messages_by_kind: Default::default(),
        notes,
    })
}

/// The counters of every participant at the start of a window.
pub struct Snapshot<'a> {
    roles: Vec<(&'a str, Vec<ProcessCounters>)>,
}

impl<'a> Snapshot<'a> {
    /// Opens counters on every process of every role; `syscall_event` from
    /// [`syscall_event`] (`None`: system calls are not counted).
    pub fn take(participants: &[(&'a str, &[u32])], syscall_event: Option<u64>) -> Result<Snapshot<'a>> {
        let roles = participants
            .iter()
            .map(|&(role, pids)| {
                let counters = pids
                    .iter()
                    .map(|&pid| ProcessCounters::open(pid, syscall_event))
                    .collect::<Result<_>>()?;
                Ok((role, counters))
            })
            .collect::<Result<_>>()?;
        Ok(Snapshot { roles })
    }

    /// Per-operation costs of each role over `operations` operations since
    /// [`Snapshot::take`], with their memory at this moment.
    pub fn close(self, operations: u64, notes: &mut Vec<String>) -> Result<Vec<ProcessCost>, String> {
        let mut processes = Vec::new();
        for (role, before) in self.roles {
            let mut delta = Delta::default();
            for counters in before {
                let closed = counters.close().map_err(|e| format!("{e:#}"))?;
                delta.add(&closed, role, notes);
            }
            processes.push(delta.per_op(role, operations));
        }
        Ok(processes)
    }
}

/// The perf event to count system calls with, or `None` with a note why not.
pub fn syscall_event(notes: &mut Vec<String>) -> Option<u64> {
    match syscall_tracepoint() {
        Ok(id) => Some(*id),
        Err(why) => {
            notes.push(format!("system calls not counted: {why}"));
            None
        }
    }
}

/// Counters of one thread, from /proc.
#[derive(Clone, Copy, Default)]
pub(crate) struct ThreadCounts {
    pub cpu_ns: u64,
    pub voluntary: u64,
    pub involuntary: u64,
}

fn read_thread(pid: u32, tid: &str) -> Option<ThreadCounts> {
    let dir = format!("/proc/{pid}/task/{tid}");
    let schedstat = std::fs::read_to_string(format!("{dir}/schedstat")).ok()?;
    let status = std::fs::read_to_string(format!("{dir}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
    };
    Some(ThreadCounts {
        cpu_ns: schedstat.split_whitespace().next()?.parse().ok()?,
        voluntary: field("voluntary_ctxt_switches:")?,
        involuntary: field("nonvoluntary_ctxt_switches:")?,
    })
}

pub(crate) fn read_threads(pid: u32) -> Result<BTreeMap<String, ThreadCounts>> {
    let dir = format!("/proc/{pid}/task");
    let entries = std::fs::read_dir(&dir).with_context(|| format!("cannot read {dir}"))?;
    Ok(entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let tid = e.file_name().to_string_lossy().to_string();
            read_thread(pid, &tid).map(|c| (tid, c))
        })
        .collect())
}

/// syscr and syscw of the whole process (every thread, ended ones too).
fn read_io(pid: u32) -> Result<(u64, u64)> {
    let path = format!("/proc/{pid}/io");
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {path}"))?;
    let field = |name: &str| -> Result<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .with_context(|| format!("{path} has no {name}"))
    };
    Ok((field("syscr:")?, field("syscw:")?))
}

/// Resident memory of a process, in KiB.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Memory {
    /// Peak resident set (`VmHWM`).
    pub hwm_kib: u64,
    /// Resident set now (`VmRSS`).
    pub rss_kib: u64,
}

/// `VmHWM` and `VmRSS` of `pid` (`None` for a process that is gone, or a
/// kernel thread without them).
pub fn read_memory(pid: u32) -> Option<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |name: &str| -> Option<u64> {
        let value = status.lines().find_map(|l| l.strip_prefix(name))?;
        value.trim().strip_suffix("kB")?.trim().parse().ok()
    };
    Some(Memory {
        hwm_kib: kib("VmHWM:")?,
        rss_kib: kib("VmRSS:")?,
    })
}

/// One process at the start of a window: its counters and open perf counters.
struct ProcessCounters {
    pid: u32,
    threads: BTreeMap<String, ThreadCounts>,
    io: (u64, u64),
    /// One syscall counter per thread (inherited by threads it starts).
    syscalls: Option<Vec<OwnedFd>>,
}

/// What a process's threads did in the window.
struct Closed {
    threads: BTreeMap<String, ThreadCounts>,
    before: BTreeMap<String, ThreadCounts>,
    io: (u64, u64),
    io_before: (u64, u64),
    syscalls: Option<u64>,
    /// Counters were asked for but could not be opened on every thread.
    syscalls_missing: bool,
    /// Memory at the end of the window; `None` when /proc did not say.
    memory: Option<Memory>,
}

impl ProcessCounters {
    fn open(pid: u32, syscall_event: Option<u64>) -> Result<ProcessCounters> {
        let threads = read_threads(pid)?;
        let syscalls = syscall_event.map(|event| {
            threads
                .keys()
                .filter_map(|tid| open_counter(event, tid.parse().ok()?).ok())
                .collect()
        });
        Ok(ProcessCounters {
            pid,
            io: read_io(pid)?,
            threads,
            syscalls,
        })
    }

    fn close(self) -> Result<Closed> {
        let syscalls = match &self.syscalls {
            Some(fds) if fds.len() == self.threads.len() => Some(fds.iter().map(read_counter).sum::<Result<u64>>()?),
            _ => None,
        };
        Ok(Closed {
            syscalls_missing: self.syscalls.is_some() && syscalls.is_none(),
            threads: read_threads(self.pid)?,
            before: self.threads,
            io: read_io(self.pid)?,
            io_before: self.io,
            syscalls,
            memory: read_memory(self.pid),
        })
    }
}

/// The sum of the processes of one role.
#[derive(Default)]
struct Delta {
    counts: ThreadCounts,
    reads: u64,
    writes: u64,
    /// `None` once any process could not count its system calls.
    syscalls: Option<Option<u64>>,
    /// Summed over the role's processes; `None` once any could not be read.
    memory: Option<Option<Memory>>,
}

impl Delta {
    fn add(&mut self, c: &Closed, role: &str, notes: &mut Vec<String>) {
        for (tid, now) in &c.threads {
            // A thread started in the window counts from zero.
            let then = c.before.get(tid).copied().unwrap_or_default();
            self.counts.cpu_ns += now.cpu_ns.saturating_sub(then.cpu_ns);
            self.counts.voluntary += now.voluntary.saturating_sub(then.voluntary);
            self.counts.involuntary += now.involuntary.saturating_sub(then.involuntary);
        }
        let ended = c.before.keys().filter(|t| !c.threads.contains_key(*t)).count();
        if ended > 0 {
            notes.push(format!(
                "{ended} thread(s) of the {role} ended inside the window: their CPU time and switches are missing"
            ));
        }
        self.reads += c.io.0.saturating_sub(c.io_before.0);
        self.writes += c.io.1.saturating_sub(c.io_before.1);
        if c.syscalls_missing {
            notes.push(format!(
                "system calls of the {role} not counted: a counter could not be opened on every thread"
            ));
        }
        let so_far = self.syscalls.unwrap_or(Some(0));
        self.syscalls = Some(so_far.zip(c.syscalls).map(|(a, b)| a + b));
        let memory_so_far = self.memory.unwrap_or(Some(Memory::default()));
        self.memory = Some(memory_so_far.zip(c.memory).map(|(a, b)| Memory {
            hwm_kib: a.hwm_kib + b.hwm_kib,
            rss_kib: a.rss_kib + b.rss_kib,
        }));
    }

    fn per_op(&self, role: &str, operations: u64) -> ProcessCost {
        let n = operations as f64;
        ProcessCost {
            role: role.into(),
            cpu_ns_per_op: self.counts.cpu_ns as f64 / n,
            voluntary_switches_per_op: self.counts.voluntary as f64 / n,
            involuntary_switches_per_op: self.counts.involuntary as f64 / n,
            syscalls_per_op: self.syscalls.flatten().map(|s| s as f64 / n),
            read_calls_per_op: self.reads as f64 / n,
            write_calls_per_op: self.writes as f64 / n,
            vm_hwm_kib: self.memory.flatten().map(|m| m.hwm_kib),
            vm_rss_kib: self.memory.flatten().map(|m| m.rss_kib),
        }
    }
}

/// The id of the `raw_syscalls:sys_enter` tracepoint, or why there is none.
/// Read from tracefs; where it is not mounted, from a tracefs mounted in a
/// private mount namespace (the machine's mounts are not touched).
fn syscall_tracepoint() -> Result<&'static u64, &'static String> {
    static ID: OnceLock<Result<u64, String>> = OnceLock::new();
    ID.get_or_init(|| {
        const REL: &str = "events/raw_syscalls/sys_enter/id";
        let mounted = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
            .iter()
            .find_map(|dir| std::fs::read_to_string(format!("{dir}/{REL}")).ok());
        let text = match mounted {
            Some(t) => t,
            None => {
                let out = Command::new("unshare")
                    .args(["--mount", "--propagation", "private", "sh", "-c"])
                    .arg(format!(
                        "mount -t tracefs tracefs /sys/kernel/tracing && cat /sys/kernel/tracing/{REL}"
                    ))
                    .stderr(Stdio::null())
                    .output()
                    .map_err(|e| format!("tracefs is not mounted and unshare failed: {e}"))?;
                String::from_utf8_lossy(&out.stdout).to_string()
            }
        };
        let id: u64 = text.trim().parse().map_err(|_| {
            "the raw_syscalls:sys_enter tracepoint is not available (tracefs cannot be read)".to_string()
        })?;
        // Allowed at all? Try on ourselves.
        open_counter(id, 0).map(|_| id).map_err(|e| format!("{e:#}"))
    })
    .as_ref()
}

/// `struct perf_event_attr` up to `config1` (PERF_ATTR_SIZE_VER0, 64 bytes).
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_FLAG_INHERIT: u64 = 1 << 1;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// A counting perf event on tracepoint `event` for thread `tid` (0: this one).
fn open_counter(event: u64, tid: i32) -> Result<OwnedFd> {
    let attr = PerfEventAttr {
        kind: PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: event,
        flags: PERF_FLAG_INHERIT,
        ..Default::default()
    };
    // SAFETY: perf_event_open with a valid, fully initialised attribute struct.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            tid,
            -1 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        bail!("perf_event_open: {e} (needs root or kernel.perf_event_paranoid = -1)");
    }
    // SAFETY: a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

fn read_counter(fd: &OwnedFd) -> Result<u64> {
    let mut f = std::fs::File::from(fd.try_clone()?);
    let mut b = [0u8; 8];
    f.read_exact(&mut b).context("reading a perf counter")?;
    Ok(u64::from_ne_bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterations_fill_the_budget_within_bounds() {
        assert_eq!(iterations(100_000.0, Duration::from_millis(250)), 2500);
        assert_eq!(iterations(1e9, Duration::from_millis(250)), 3);
        assert_eq!(iterations(1.0, Duration::from_secs(1)), 100_000);
    }

    #[test]
    fn counts_this_threads_own_syscalls_and_switches() {
        let me = std::process::id();
        let event = syscall_tracepoint().ok().copied();
        let before = ProcessCounters::open(me, event).unwrap();
        for _ in 0..100 {
            let _ = std::fs::metadata("/");
        }
        std::thread::sleep(Duration::from_millis(20));
        // 15 ms of this thread's CPU time, however loaded the machine is.
        let thread_cpu = || {
            let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: a valid clock id and a valid pointer.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
            t.tv_sec as f64 * 1e9 + t.tv_nsec as f64
        };
        let spin_start = thread_cpu();
        while thread_cpu() - spin_start < 15e6 {}
        let closed = before.close().unwrap();
        let mut d = Delta::default();
        let mut notes = Vec::new();
        d.add(&closed, "client", &mut notes);
        let cost = d.per_op("client", 1);
        assert!(cost.cpu_ns_per_op >= 10e6, "{}", cost.cpu_ns_per_op);
        assert!(cost.voluntary_switches_per_op >= 1.0);
        let hwm = cost.vm_hwm_kib.expect("this process has a VmHWM");
        assert!(
            hwm > 0 && hwm >= cost.vm_rss_kib.unwrap(),
            "{hwm} {:?}",
            cost.vm_rss_kib
        );
        if let Some(s) = cost.syscalls_per_op {
            assert!(s >= 100.0, "{s}");
        }
    }
}
