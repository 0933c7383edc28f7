//! Whether `run --instructions` counts an IPC cell's processes under
//! callgrind, decided from the planned cell and its median alone: a pure
//! function, which [`super::ipc_instructions`] obeys and which the tests
//! below put every IPC cell of the smoke and quick plans through.
//!
//! Counting runs the cell's client as `repeat` of its adapter scenario under
//! callgrind, against a server, subscribers and a private bus daemon started
//! under callgrind too (or peer to peer, no daemon). A cell that cannot be
//! run so gets a [`Reason`], recorded on the cell as a note
//! ("instructions not counted: …").

use std::fmt;

use harness::ipc::IpcOp;
use harness::scenario::Driver;

use crate::measure::instructions;
use crate::run::bus_session::SYSTEM_BUS;
use crate::run::plan::Planned;

/// Why an IPC cell's instructions are not counted.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    /// `call/parallel-clients/*`: K clients released and timed by the runner.
    ParallelClients,
    /// `signal/match-rules/*`: the runner's own connections hold the rules.
    RunnerMatchRules,
    /// `property/cold-start`: a whole process (the `cold-start` command).
    ColdStart,
    /// A daemon the runner cannot start under callgrind, and why.
    BusNotWrapped(&'static str),
    /// `--system-bus`: the machine's own bus.
    SystemBus,
    /// A bus id the runner does not know (matrix.toml is checked for them).
    UnknownBus(String),
    /// One operation slower than callgrind's budget allows.
    TooSlow { median_ns: f64 },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::ParallelClients => f.write_str("parallel clients are timed by the runner, not `repeat`"),
            Reason::RunnerMatchRules => f.write_str("the runner's own match-rule connections are not under callgrind"),
            Reason::ColdStart => f.write_str("a cold start is a whole process, timed by the runner"),
            Reason::BusNotWrapped(why) => write!(f, "{why}: not run under callgrind"),
            Reason::SystemBus => f.write_str("the machine's system bus is not ours to run under callgrind"),
            Reason::UnknownBus(id) => write!(f, "bus {id:?} is not one the runner starts"),
            Reason::TooSlow { median_ns } => write!(
                f,
                "{:.0} ms per operation is too slow for callgrind (limit {:.0} ms)",
                median_ns / 1e6,
                instructions::MAX_NATIVE_NS / 1e6
            ),
        }
    }
}

/// `Ok` when the cell is counted, else why not. Every driver is named: a new
/// kind of cell must be decided here before it compiles.
pub fn decide(cell: &Planned, median_ns: f64) -> Result<(), Reason> {
    match cell.scenario.driver {
        Driver::ParallelClients(_) => return Err(Reason::ParallelClients),
        Driver::MatchRules(..) => return Err(Reason::RunnerMatchRules),
        Driver::Adapter => {}
    }
    if matches!(cell.scenario.ipc_op(), Some(IpcOp::PropertyColdStart)) {
        return Err(Reason::ColdStart);
    }
    match cell.bus.map(|b| b.id.as_str()) {
        None | Some("p2p") => {}
        Some(SYSTEM_BUS) => return Err(Reason::SystemBus),
        Some(id) => match id.parse::<bus::BusKind>() {
            Ok(kind) => {
                if let Some(why) = kind.wrapper_unsupported() {
                    return Err(Reason::BusNotWrapped(why));
                }
            }
            Err(_) => return Err(Reason::UnknownBus(id.to_string())),
        },
    }
    if median_ns > instructions::MAX_NATIVE_NS {
        return Err(Reason::TooSlow { median_ns });
    }
    Ok(())
}

#[cfg(test)]
#[path = "count_decision_tests.rs"]
mod tests;
