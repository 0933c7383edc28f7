//! Which figures another machine reproduces from the same files (portable)
//! and which belong to the machine that measured them (machine-bound): the
//! one table that `compare`, the reports and docs/results.schema.json
//! (`x-portability`) follow. The evidence is in docs/benchmarking.md, "What
//! travels and what doesn't".

use serde::Serialize;

use super::CountMethod;

/// Whether a second machine running the same files gets the same figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Portability {
    /// Reproduced by another machine (identical counts, or within 0.5%).
    Portable,
    /// Moves with the machine, its load and its scheduler.
    MachineBound,
}

impl Portability {
    pub fn word(self) -> &'static str {
        match self {
            Portability::Portable => "portable",
            Portability::MachineBound => "machine-bound",
        }
    }

    pub fn is_portable(self) -> bool {
        self == Portability::Portable
    }
}

/// The figures of a results file, by their path in it (`FIGURES` lists them).
pub const FIGURES: &[(&str, Portability)] = &[
    ("wall", Portability::MachineBound),
    ("floor_ratio", Portability::MachineBound),
    ("alloc.allocations_per_op", Portability::Portable),
    ("alloc.bytes_per_op", Portability::Portable),
    ("instructions_per_op", Portability::Portable),
    ("ipc_instructions (callgrind)", Portability::Portable),
    ("ipc_instructions (perf)", Portability::MachineBound),
    ("costs.bus_messages_per_op", Portability::Portable),
    ("costs.bus_bytes_per_op", Portability::Portable),
    ("costs.bus_messages_by_kind", Portability::Portable),
    ("costs.processes.syscalls_per_op (bus)", Portability::Portable),
    (
        "costs.processes.syscalls_per_op (client, server, subscribers)",
        Portability::MachineBound,
    ),
    ("costs.processes.cpu_ns_per_op", Portability::MachineBound),
    ("costs.processes.voluntary_switches_per_op", Portability::MachineBound),
    ("costs.processes.involuntary_switches_per_op", Portability::MachineBound),
    ("costs.processes.read_calls_per_op", Portability::MachineBound),
    ("costs.processes.write_calls_per_op", Portability::MachineBound),
    ("costs.processes.vm_hwm_kib", Portability::MachineBound),
    ("costs.processes.vm_rss_kib", Portability::MachineBound),
    ("connection_memory", Portability::MachineBound),
];

/// Instruction counts: callgrind's virtual CPU travels; hardware counts
/// follow the code glibc dispatches for the CPU.
pub fn of_instructions(method: CountMethod) -> Portability {
    match method {
        CountMethod::Callgrind => Portability::Portable,
        CountMethod::Perf => Portability::MachineBound,
    }
}

/// System calls per operation of a role: the bus daemon's (single-threaded
/// dbus-daemon, measured identical on two machines) travel; a client's or
/// server's move with the scheduler where the library runs threads (zbus-6
/// call/void: 6.95 on one machine, 10.1 on another), and which library
/// does is not recorded, so none is claimed portable.
pub fn of_syscalls(role: &str) -> Portability {
    match role {
        "bus" => Portability::Portable,
        _ => Portability::MachineBound,
    }
}

/// The label of a figure path of [`FIGURES`]; `None` for an unknown path.
pub fn of(figure: &str) -> Option<Portability> {
    FIGURES.iter().find(|(f, _)| *f == figure).map(|&(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_travel_and_times_do_not() {
        assert_eq!(of("wall"), Some(Portability::MachineBound));
        assert_eq!(of("alloc.allocations_per_op"), Some(Portability::Portable));
        assert_eq!(of("no.such.figure"), None);
        assert!(of_instructions(CountMethod::Callgrind).is_portable());
        assert!(!of_instructions(CountMethod::Perf).is_portable());
        assert!(of_syscalls("bus").is_portable());
        assert!(!of_syscalls("client").is_portable());
        assert_eq!(Portability::MachineBound.word(), "machine-bound");
    }
}
