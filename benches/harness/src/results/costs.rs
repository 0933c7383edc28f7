//! What an IPC operation costs beyond its time: per process (CPU, context
//! switches, system calls, memory), on the bus (messages), and what held
//! connections cost the bus daemon.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What held connections cost in memory, read by the runner from
/// `/proc/PID/status` at both ends of one `repeat --windows 1` window: none
/// of the client's connections open at its start, all `connections` at its end.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ConnectionMemory {
    pub connections: u64,
    /// VmRSS of the bus daemon (every process of it), in bytes, before and with the connections held.
    pub bus_rss_before_bytes: u64,
    pub bus_rss_held_bytes: u64,
    /// (held - before) / connections: what one connection costs the daemon
    /// (negative when the daemon gave memory back meanwhile).
    pub bus_bytes_per_connection: f64,
    /// The client process with the connections held: VmRSS and its peak, VmHWM.
    pub client_rss_bytes: u64,
    pub client_hwm_bytes: u64,
    /// Threads of the client with the connections held (`/proc/PID/status` `Threads`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_threads: Option<u64>,
    /// What holding them idle costs each process over a quiet window (the
    /// smallest count only, [`IdleCost`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<IdleCost>,
}

/// Threads, CPU time and wake-ups of the processes of a cell while nothing
/// happens: the client holding its connections, the server holding its own
/// (idle on the cell's bus), and the bus daemon holding the client's; counted
/// by the runner from `/proc/PID/task/*` over `window_s` seconds in which no
/// process is asked for anything.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IdleCost {
    pub window_s: f64,
    /// One entry per role: `client`, `server`, `bus`.
    pub processes: Vec<IdleProcess>,
    /// What could not be counted, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl IdleCost {
    pub fn process(&self, role: &str) -> Option<&IdleProcess> {
        self.processes.iter().find(|p| p.role == role)
    }
}

/// One role's processes (all their threads) over an idle window.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IdleProcess {
    pub role: String,
    /// Threads at the end of the window (`/proc/PID/status` `Threads`, summed over the role's processes).
    pub threads: u64,
    /// CPU time per second of the window (`/proc/PID/task/*/schedstat`).
    pub cpu_ns_per_s: f64,
    /// Wake-ups per second: voluntary context switches (a thread that slept and was woken).
    pub wakeups_per_s: f64,
    /// Involuntary context switches per second (preempted while running).
    pub preemptions_per_s: f64,
}

/// Machine-independent costs of one IPC operation: counts from the kernel
/// for every process involved, and the messages that crossed the bus.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IpcCosts {
    /// Operations in the counted window (after connecting and verifying).
    pub operations: u64,
    /// One entry per role: `client`, `server`, `subscribers`, `bus` (none for
    /// `property/cold-start`: only its bus messages are counted).
    pub processes: Vec<ProcessCost>,
    /// Messages the bus routed per operation, counted by a monitor
    /// connection between two marker signals (absent peer to peer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_messages_per_op: Option<f64>,
    /// Bytes of those messages per operation, as the monitor received them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_bytes_per_op: Option<f64>,
    /// Those messages per operation by kind (`bus::routed::kind`: type,
    /// `interface.member`, direction), where they were recorded: the
    /// monitored cold start of `property/cold-start` (Hello, AddMatch,
    /// Introspect, Get... of one whole process).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bus_messages_by_kind: BTreeMap<String, f64>,
    /// What could not be counted, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl IpcCosts {
    pub fn process(&self, role: &str) -> Option<&ProcessCost> {
        self.processes.iter().find(|p| p.role == role)
    }

    /// The sum over every process of one per-operation figure.
    pub fn total(&self, figure: impl Fn(&ProcessCost) -> Option<f64>) -> Option<f64> {
        self.processes.iter().map(figure).sum()
    }
}

/// Per-operation costs of one process (all its threads) in an IPC cell.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProcessCost {
    /// `client`, `server`, `subscribers` or `bus`.
    pub role: String,
    /// CPU time in ns (`/proc/PID/task/*/schedstat`).
    pub cpu_ns_per_op: f64,
    /// Voluntary context switches (waiting: `/proc/PID/task/*/status`).
    pub voluntary_switches_per_op: f64,
    /// Involuntary context switches (preempted).
    pub involuntary_switches_per_op: f64,
    /// Every system call (perf tracepoint `raw_syscalls:sys_enter`), when
    /// perf events are allowed (root, or `kernel.perf_event_paranoid` -1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syscalls_per_op: Option<f64>,
    /// read-family calls (`/proc/PID/io` syscr; recvmsg is not among them).
    pub read_calls_per_op: f64,
    /// write-family calls (`/proc/PID/io` syscw; sendmsg is not among them).
    pub write_calls_per_op: f64,
    /// Peak resident memory in KiB (`VmHWM` of `/proc/PID/status`, summed
    /// over the role's processes), read at the end of the counted window.
    /// Absent in files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_hwm_kib: Option<u64>,
    /// Resident memory in KiB at the end of the counted window (`VmRSS`, summed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm_rss_kib: Option<u64>,
}
