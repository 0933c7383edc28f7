//! `compare` between machines: when the two runs' environments differ (not
//! the same machine), verdicts are given on portable figures only
//! (`harness::results::portability`): instruction counts under callgrind
//! (codec cells and every process of an IPC cell), allocations, bus
//! messages. Times are still shown, not judged. On one machine times are
//! judged too, beside the same counts.

use harness::results::portability::{self, Portability};
use harness::results::{Environment, Measurement, ResultsFile};

/// Whether the two runs were made on different machines: the host (its
/// hostname's hash), its CPU model, CPU count or memory, or the mode (host
/// or a VM) differ. A kernel, OS or toolchain update on the same machine
/// is not another machine: its effect on times is what such a comparison
/// is for (`compare` names those differences anyway).
pub fn machines_differ(old: &ResultsFile, new: &ResultsFile) -> bool {
    let key = |e: &Environment| {
        (
            e.hostname_hash.clone(),
            e.cpu_model.clone(),
            e.cpus,
            e.memory_bytes,
            e.mode.clone(),
        )
    };
    key(&old.environment) != key(&new.environment)
}

/// A portable figure of a measured cell, by its name in the comparison.
pub struct Figure {
    pub name: &'static str,
    pub value: fn(&Measurement) -> Option<f64>,
}

/// The per-operation counts `compare` judges exactly (their threshold alone
/// decides) on any pair of machines; each is portable by
/// [`portability::FIGURES`].
pub const PORTABLE: &[Figure] = &[
    Figure {
        name: "allocations_per_op",
        value: |m| m.alloc.as_ref().map(|a| a.allocations_per_op),
    },
    Figure {
        name: "ipc_instructions_per_op",
        value: |m| {
            m.ipc_instructions
                .as_ref()
                .filter(|i| portability::of_instructions(i.method).is_portable())
                .map(|i| i.total())
        },
    },
    Figure {
        name: "bus_messages_per_op",
        value: |m| m.costs.as_ref().and_then(|c| c.bus_messages_per_op),
    },
];

/// Whether the wall time is judged: only between runs of one machine.
pub fn judges_time(portable_only: bool) -> bool {
    !portable_only && portability::of("wall") == Some(Portability::MachineBound)
}

/// The sentence the report gives when the machines differ.
pub const PORTABLE_ONLY_NOTE: &str = "Different machines: verdicts judge portable figures only (callgrind \
     instruction counts, allocations, bus messages per operation; docs/benchmarking.md, \"What travels and what \
     doesn't\"). Times are shown, not judged; a cell with no portable figure is unchanged.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_fixtures::tiny;

    #[test]
    fn another_host_is_another_machine_and_another_rustc_is_not() {
        let a = tiny();
        let mut b = tiny();
        b.environment.rustc = "rustc 9.99.0".into();
        b.environment.kernel = "6.12.0".into();
        assert!(!machines_differ(&a, &b));
        b.environment.cpus += 14;
        assert!(machines_differ(&a, &b));
        assert!(judges_time(false));
        assert!(!judges_time(true));
    }
}
