//! Instructions per operation of every process of an IPC cell (client,
//! server, subscribers, bus daemon), counted over one verified window of
//! operations, and how they were counted (callgrind or hardware counters).

use serde::{Deserialize, Serialize};

/// How an instruction count was made.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CountMethod {
    /// valgrind's callgrind: its own virtual CPU, so the same files give the
    /// same count on any machine (portable).
    Callgrind,
    /// Hardware counters (`perf_event_open`, user-space instructions): no
    /// slowdown, but the count follows the code glibc dispatches for this
    /// CPU (machine-bound).
    Perf,
}

/// Instructions per operation of each process of one IPC cell.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct IpcInstructions {
    pub method: CountMethod,
    /// Operations in the counted window (after connecting and verifying).
    pub operations: u64,
    /// One entry per role: `client`, `server`, `subscribers`, `bus`.
    pub processes: Vec<ProcessInstructions>,
    /// Why hardware counters were not used, where they were not (e.g. "no
    /// PMU: software events only").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware_unavailable: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl IpcInstructions {
    pub fn process(&self, role: &str) -> Option<f64> {
        self.processes
            .iter()
            .find(|p| p.role == role)
            .map(|p| p.instructions_per_op)
    }

    /// Every process together.
    pub fn total(&self) -> f64 {
        self.processes.iter().map(|p| p.instructions_per_op).sum()
    }
}

/// Instructions per operation of one role's process (all its threads).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProcessInstructions {
    pub role: String,
    pub instructions_per_op: f64,
    /// The same per thread (callgrind's `--separate-threads`), in the order
    /// callgrind numbers them (the first is the process's main thread; for
    /// a role of several processes, such as dbus-broker and its launcher,
    /// process after process). A runtime's helper threads move with the
    /// schedule while the thread that calls does not. Empty in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<f64>,
}
