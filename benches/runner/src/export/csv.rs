//! One row per cell, every number the results file holds, for spreadsheets.
//! `ci_width`, `rounds`, `above_target` and `cut` are the cell's interval
//! width facts as `export::model::width` defines them (`ci_width` the fraction
//! `(upper - lower) / median`; `above_target` empty without a target).
//! `placement`: where an IPC cell's processes ran (`Measurement::placement`).
//! Runs with `connect/idle-connections` cells get `export::model::connection_memory`'s
//! columns after `placement`.
//!
//! Then, last (issue 30): `instructions_method` and the instructions per
//! operation of each process of an IPC cell (`<role>_instructions_per_op`,
//! `run --instructions`), and `portable_figures`: the columns of this row
//! whose figure is portable (another machine running the same files
//! reproduces it; `harness::results::portability::FIGURES`), separated by
//! `;`, the portable table's figures first. Every other figure column of the
//! row is machine-bound; [`figure_of`] says which figure each column holds.

use harness::results::{Cell, CountMethod, ResultsFile};

use super::model::portable;
use super::model::table::{status_word, ROLES};
use super::model::{connection_memory, width};

const HEADER: &str = "adapter,library,version,baseline,bus,scenario,status,median_ns,median_lower_ns,median_upper_ns,ci_width,rounds,above_target,mean_ns,samples,throughput_bytes,mb_per_s,allocations_per_op,bytes_allocated_per_op,instructions_per_op,bus_messages_per_op,bus_bytes_per_op";
/// Per role of `table::ROLES`, after the columns above.
const PROCESS_COLUMNS: [&str; 8] = [
    "cpu_ns_per_op",
    "syscalls_per_op",
    "voluntary_switches_per_op",
    "involuntary_switches_per_op",
    "read_calls_per_op",
    "write_calls_per_op",
    "vm_hwm_kib",
    "vm_rss_kib",
];
/// The columns after the per-role ones (`cell_role`: which side of the cell
/// the adapter is: same, client, server).
const TAIL_COLUMNS: [&str; 4] = ["reason", "cut", "cell_role", "placement"];
/// Last: the IPC cell's instruction counts and the labels (issue 30).
const INSTRUCTION_METHOD: &str = "instructions_method";
const PORTABLE_FIGURES: &str = "portable_figures";

/// Columns that hold no figure: what the cell is, how it was measured, why not.
#[cfg(test)]
const NOT_FIGURES: [&str; 18] = [
    "adapter",
    "library",
    "version",
    "baseline",
    "bus",
    "scenario",
    "status",
    "rounds",
    "above_target",
    "samples",
    "throughput_bytes",
    "reason",
    "cut",
    "cell_role",
    "placement",
    "connections",
    INSTRUCTION_METHOD,
    PORTABLE_FIGURES,
];

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| format!("{v}"))
}

fn method_word(m: CountMethod) -> &'static str {
    match m {
        CountMethod::Callgrind => "callgrind",
        CountMethod::Perf => "perf",
    }
}

/// The figure of `portability::FIGURES` a column holds (`method`: how the
/// row's IPC instructions were counted); `None` for a column of
/// [`NOT_FIGURES`] or one this module does not know.
fn figure_of(column: &str, method: Option<CountMethod>) -> Option<&'static str> {
    Some(match column {
        "median_ns"
        | "median_lower_ns"
        | "median_upper_ns"
        | "ci_width"
        | "mean_ns"
        | "mb_per_s"
        | "connect_ns_per_connection" => "wall",
        "allocations_per_op" => "alloc.allocations_per_op",
        "bytes_allocated_per_op" | "heap_bytes_per_connection" => "alloc.bytes_per_op",
        "instructions_per_op" => "instructions_per_op",
        "bus_messages_per_op" => "costs.bus_messages_per_op",
        "bus_bytes_per_op" => "costs.bus_bytes_per_op",
        "bus_rss_bytes_per_connection" | "client_rss_bytes" | "client_hwm_bytes" => "connection_memory",
        _ => return process_figure(column, method),
    })
}

/// The figure of a `<role>_<figure>` column.
fn process_figure(column: &str, method: Option<CountMethod>) -> Option<&'static str> {
    let (role, figure) = ROLES
        .iter()
        .find_map(|r| Some((*r, column.strip_prefix(r)?.strip_prefix('_')?)))?;
    Some(match figure {
        "cpu_ns_per_op" => "costs.processes.cpu_ns_per_op",
        "syscalls_per_op" if role == "bus" => "costs.processes.syscalls_per_op (bus)",
        "syscalls_per_op" => "costs.processes.syscalls_per_op (client, server, subscribers)",
        "voluntary_switches_per_op" => "costs.processes.voluntary_switches_per_op",
        "involuntary_switches_per_op" => "costs.processes.involuntary_switches_per_op",
        "read_calls_per_op" => "costs.processes.read_calls_per_op",
        "write_calls_per_op" => "costs.processes.write_calls_per_op",
        "vm_hwm_kib" => "costs.processes.vm_hwm_kib",
        "vm_rss_kib" => "costs.processes.vm_rss_kib",
        "instructions_per_op" => match method? {
            CountMethod::Callgrind => "ipc_instructions (callgrind)",
            CountMethod::Perf => "ipc_instructions (perf)",
        },
        _ => return None,
    })
}

/// The header's column names, in order (`memory`: with the idle-connection columns).
fn columns(memory: bool) -> Vec<String> {
    let mut names: Vec<String> = HEADER.split(',').map(str::to_string).collect();
    for role in ROLES {
        names.extend(PROCESS_COLUMNS.iter().map(|col| format!("{role}_{col}")));
    }
    names.extend(TAIL_COLUMNS.iter().map(|s| s.to_string()));
    if memory {
        names.extend(connection_memory::CSV_COLUMNS.iter().map(|s| s.to_string()));
    }
    names.push(INSTRUCTION_METHOD.into());
    names.extend(ROLES.iter().map(|role| format!("{role}_instructions_per_op")));
    names.push(PORTABLE_FIGURES.into());
    names
}

/// `portable_figures` of a row: its non-empty columns whose figure is
/// portable, the portable table's columns first.
fn portable_figures(names: &[String], values: &[String], method: Option<CountMethod>) -> String {
    let mut found: Vec<&str> = names
        .iter()
        .zip(values)
        .filter(|(_, v)| !v.is_empty())
        .filter(|(n, _)| figure_of(n, method).is_some_and(|f| portable::label(f).is_portable()))
        .map(|(n, _)| n.as_str())
        .collect();
    // The portable table's order: instructions of each process, bus messages, allocations, bus syscalls.
    let lead = |n: &str| portable::COLUMNS.iter().position(|c| c.key == n).unwrap_or(usize::MAX);
    found.sort_by_key(|n| lead(n));
    found.join(";")
}

pub fn render(r: &ResultsFile) -> String {
    // Only in runs with idle-connection cells: other reports keep their columns.
    let memory = connection_memory::present(r);
    let names = columns(memory);
    let mut out = names.join(",");
    out.push('\n');
    let target = width::target(r);
    for c in &r.cells {
        let values = row(r, c, memory, target);
        let method = c
            .measurement()
            .and_then(|m| m.ipc_instructions.as_ref())
            .map(|i| i.method);
        out.push_str(&values.join(","));
        out.push(',');
        out += &portable_figures(&names, &values, method);
        out.push('\n');
    }
    out
}

/// The values of one row, every column but `portable_figures`.
fn row(r: &ResultsFile, c: &Cell, memory: bool, target: Option<f64>) -> Vec<String> {
    let a = r.adapters.iter().find(|a| a.id == c.adapter);
    let m = c.measurement();
    let costs = m.and_then(|m| m.costs.as_ref());
    let median = m.map(|m| m.wall.median_ns.point);
    let w = m.map(|m| width::of(m, target));
    let mbps = m.and_then(|m| {
        median
            .filter(|v| *v > 0.0)
            .map(|ns| m.throughput_bytes as f64 / ns * 1e3)
    });
    let mut values = vec![
        field(&c.adapter),
        field(a.map_or("", |a| &a.library)),
        field(a.map_or("", |a| &a.version)),
        a.is_some_and(|a| a.baseline).to_string(),
        field(c.bus.as_deref().unwrap_or("")),
        field(&c.scenario),
        status_word(c.status()).to_string(),
        num(median),
        num(m.map(|m| m.wall.median_ns.lower)),
        num(m.map(|m| m.wall.median_ns.upper)),
        num(w.as_ref().and_then(|w| w.relative)),
        w.as_ref().map_or_else(String::new, |w| w.rounds.to_string()),
        w.as_ref()
            .filter(|_| target.is_some())
            .map_or_else(String::new, |w| w.above_target.to_string()),
        num(m.map(|m| m.wall.mean_ns.point)),
        m.map_or_else(String::new, |m| m.wall.samples.to_string()),
        m.map_or_else(String::new, |m| m.throughput_bytes.to_string()),
        num(mbps),
        num(m.and_then(|m| m.alloc.as_ref()).map(|a| a.allocations_per_op)),
        num(m.and_then(|m| m.alloc.as_ref()).map(|a| a.bytes_per_op)),
        num(m.and_then(|m| m.instructions_per_op)),
        num(costs.and_then(|c| c.bus_messages_per_op)),
        num(costs.and_then(|c| c.bus_bytes_per_op)),
    ];
    for role in ROLES {
        let p = costs.and_then(|c| c.process(role));
        let figures = [
            p.map(|p| p.cpu_ns_per_op),
            p.and_then(|p| p.syscalls_per_op),
            p.map(|p| p.voluntary_switches_per_op),
            p.map(|p| p.involuntary_switches_per_op),
            p.map(|p| p.read_calls_per_op),
            p.map(|p| p.write_calls_per_op),
            p.and_then(|p| p.vm_hwm_kib).map(|k| k as f64),
            p.and_then(|p| p.vm_rss_kib).map(|k| k as f64),
        ];
        values.extend(figures.into_iter().map(num));
    }
    values.push(field(c.reason().unwrap_or("")));
    values.push(field(w.as_ref().and_then(|w| w.cut).unwrap_or("")));
    values.push(c.role.as_str().to_string());
    values.push(field(m.and_then(|m| m.placement.as_deref()).unwrap_or("")));
    if memory {
        values.extend(connection_memory::csv_values(c).into_iter().map(num));
    }
    let ipc = m.and_then(|m| m.ipc_instructions.as_ref());
    values.push(ipc.map_or_else(String::new, |i| method_word(i.method).to_string()));
    values.extend(ROLES.iter().map(|role| num(ipc.and_then(|i| i.process(role)))));
    values
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_fixtures::tiny;
    use harness::results::{IpcInstructions, ProcessInstructions};

    #[test]
    fn every_column_is_a_labelled_figure_or_no_figure() {
        for name in columns(true) {
            let known = figure_of(&name, Some(CountMethod::Callgrind)).is_some();
            assert!(
                known != NOT_FIGURES.contains(&name.as_str()),
                "{name}: a figure of portability::FIGURES, or in NOT_FIGURES (one of the two)"
            );
            if let Some(f) = figure_of(&name, Some(CountMethod::Callgrind)) {
                assert!(harness::results::portability::of(f).is_some(), "{name}: {f}");
            }
        }
        assert_eq!(
            figure_of("bus_syscalls_per_op", None),
            Some("costs.processes.syscalls_per_op (bus)")
        );
        assert_eq!(
            figure_of("client_instructions_per_op", Some(CountMethod::Perf)),
            Some("ipc_instructions (perf)")
        );
    }

    #[test]
    fn portable_figures_name_the_counts_first_and_never_a_time() {
        let mut r = tiny();
        let ipc = r
            .cells
            .iter_mut()
            .filter(|c| c.bus.is_some())
            .find_map(|c| c.measurement_mut())
            .unwrap();
        ipc.alloc = Some(harness::results::AllocCost {
            allocations_per_op: 3.0,
            bytes_per_op: 96.0,
        });
        ipc.ipc_instructions = Some(IpcInstructions {
            method: CountMethod::Callgrind,
            operations: 20,
            processes: vec![ProcessInstructions {
                role: "client".into(),
                instructions_per_op: 14150.0,
                threads: vec![],
            }],
            hardware_unavailable: None,
            notes: vec![],
        });
        let csv = render(&r);
        let mut lines = csv.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert_eq!(head.last(), Some(&PORTABLE_FIGURES));
        let counted = lines.find(|l| l.contains(",callgrind,")).expect("the counted row");
        assert!(
            counted
                .ends_with(",callgrind,14150,,,,client_instructions_per_op;allocations_per_op;bytes_allocated_per_op"),
            "{counted}"
        );
        // Perf counts are machine-bound: not named.
        r.cells
            .iter_mut()
            .find_map(|c| c.measurement_mut().and_then(|m| m.ipc_instructions.as_mut()))
            .unwrap()
            .method = CountMethod::Perf;
        let csv = render(&r);
        let counted = csv.lines().find(|l| l.contains(",perf,")).unwrap();
        assert!(
            counted.ends_with(",perf,14150,,,,allocations_per_op;bytes_allocated_per_op"),
            "{counted}"
        );
    }
}
