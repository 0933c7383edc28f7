//! The portable table every report format leads with (issue 30), computed
//! once for all of them: per scenario family, one row per library, bus and
//! scenario of the same-library IPC cells whose instructions were counted
//! (`run --instructions`), with the figures another machine running the same
//! files reproduces: instructions per operation of each process under
//! callgrind, bus messages, the client's allocations, the bus daemon's
//! system calls. Which figure is portable comes from the one table,
//! `harness::results::portability::FIGURES`; [`label`] reads it for the
//! formats that label every figure they print (csv, json, bmf, html), and
//! [`LEGEND`] says what the two labels mean.

use std::collections::BTreeMap;

use harness::results::portability::{self, Portability, FIGURES};
use harness::results::{Cell, CountMethod, ResultsFile, Role};

use super::table::{self, ROLES};

/// A column of the portable table: its name in machine formats, its head
/// in tables, and the figure of `portability::FIGURES` it shows.
pub struct Column {
    pub key: &'static str,
    pub head: &'static str,
    pub figure: &'static str,
}

/// The portable table's columns, in order: instructions of each role of
/// [`ROLES`] (client, server, subscribers, bus), then bus messages,
/// allocations and the bus daemon's system calls.
pub const COLUMNS: [Column; 7] = [
    Column {
        key: "client_instructions_per_op",
        head: "instructions client",
        figure: "ipc_instructions (callgrind)",
    },
    Column {
        key: "server_instructions_per_op",
        head: "server",
        figure: "ipc_instructions (callgrind)",
    },
    Column {
        key: "subscribers_instructions_per_op",
        head: "subscribers",
        figure: "ipc_instructions (callgrind)",
    },
    Column {
        key: "bus_instructions_per_op",
        head: "bus",
        figure: "ipc_instructions (callgrind)",
    },
    Column {
        key: "bus_messages_per_op",
        head: "bus messages",
        figure: "costs.bus_messages_per_op",
    },
    Column {
        key: "allocations_per_op",
        head: "allocations",
        figure: "alloc.allocations_per_op",
    },
    Column {
        key: "bus_syscalls_per_op",
        head: "bus syscalls",
        figure: "costs.processes.syscalls_per_op (bus)",
    },
];

/// How many of [`COLUMNS`] are instruction counts (one per role of [`ROLES`]).
pub const INSTRUCTION_COLUMNS: usize = ROLES.len();

/// One counted cell: its library label and its portable figures by [`COLUMNS`].
pub struct Row<'a> {
    pub cell: &'a Cell,
    pub label: String,
    /// How the instructions were counted.
    pub method: CountMethod,
    /// By column of [`COLUMNS`]; `None` where the cell has no such figure or
    /// it is not portable (instructions from hardware counters).
    pub values: [Option<f64>; 7],
}

/// The rows of one scenario family (what precedes the first `/`).
pub struct Family<'a> {
    pub name: &'a str,
    pub rows: Vec<Row<'a>>,
}

/// The portable table by family (in name order, rows by adapter, bus and
/// scenario); empty when no IPC cell has instruction counts.
pub fn families(r: &ResultsFile) -> Vec<Family<'_>> {
    let mut by_family: BTreeMap<&str, Vec<Row>> = BTreeMap::new();
    for c in r.cells.iter().filter(|c| c.role == Role::Same) {
        let Some(m) = c.measurement() else { continue };
        let Some(i) = &m.ipc_instructions else { continue };
        let portable = portability::of_instructions(i.method).is_portable();
        let instructions = ROLES.map(|role| i.process(role).filter(|_| portable));
        let bus_syscalls = m
            .costs
            .as_ref()
            .and_then(|c| c.process("bus"))
            .and_then(|p| p.syscalls_per_op)
            .filter(|_| portability::of_syscalls("bus").is_portable());
        let [client, server, subscribers, bus] = instructions;
        let values = [
            client,
            server,
            subscribers,
            bus,
            m.costs.as_ref().and_then(|c| c.bus_messages_per_op),
            m.alloc.as_ref().map(|a| a.allocations_per_op),
            bus_syscalls,
        ];
        let label = r
            .adapters
            .iter()
            .find(|a| a.id == c.adapter)
            .map_or_else(|| c.adapter.clone(), |a| table::label(r, a));
        let family = c.scenario.split('/').next().unwrap_or(&c.scenario);
        by_family.entry(family).or_default().push(Row {
            cell: c,
            label,
            method: i.method,
            values,
        });
    }
    by_family
        .into_iter()
        .map(|(name, mut rows)| {
            rows.sort_by(|a, b| {
                (&a.cell.adapter, &a.cell.bus, &a.cell.scenario).cmp(&(&b.cell.adapter, &b.cell.bus, &b.cell.scenario))
            });
            Family { name, rows }
        })
        .collect()
}

/// The label of a figure path of `portability::FIGURES`; a path the table
/// lacks is machine-bound (nothing is claimed portable by default). Every
/// path the formats use is in the table (tested below).
pub fn label(figure: &str) -> Portability {
    portability::of(figure).unwrap_or(Portability::MachineBound)
}

/// What the two labels mean, for a legend.
pub const LEGEND: &str = "portable: another machine running the same files (runner, adapters, bus daemon, valgrind, \
     glibc and the libraries they load) reproduces the figure, identically or within 0.5% (counts: callgrind \
     instructions, allocations, bus messages and bytes, the bus daemon's system calls); machine-bound: the figure \
     moves with the machine, its load and its scheduler (times, CPU time, context switches, memory, the system calls \
     of clients and servers, hardware instruction counts). Evidence: docs/benchmarking.md, \"What travels and what \
     doesn't\".";

/// The figure paths of `portability::FIGURES` with label `p`, in table order.
pub fn figures(p: Portability) -> Vec<&'static str> {
    FIGURES.iter().filter(|(_, l)| *l == p).map(|&(f, _)| f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::model::table::COST_FIGURES;

    #[test]
    fn every_figure_the_formats_label_is_in_the_one_table() {
        for c in &COLUMNS {
            assert_eq!(portability::of(c.figure), Some(Portability::Portable), "{}", c.figure);
        }
        for f in &COST_FIGURES {
            assert!(portability::of(f.figure).is_some(), "{}", f.figure);
        }
        assert_eq!(label("no.such.figure"), Portability::MachineBound);
        assert!(figures(Portability::Portable).contains(&"alloc.allocations_per_op"));
        assert!(figures(Portability::MachineBound).contains(&"wall"));
        assert_eq!(
            figures(Portability::Portable).len() + figures(Portability::MachineBound).len(),
            FIGURES.len()
        );
    }
}
