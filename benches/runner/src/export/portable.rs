//! The portable table a report leads with (issue 30): per scenario family,
//! one row per library, bus and scenario, with the figures another machine
//! running the same files reproduces (`harness::results::portability`):
//! instructions per operation of each process under callgrind, bus
//! messages, allocations, the bus daemon's system calls. Shown when the run
//! counted IPC instructions (`run --instructions`).

use std::collections::BTreeMap;
use std::fmt::Write;

use harness::results::portability::{self, Portability};
use harness::results::{Cell, Measurement, ResultsFile, Role};

use crate::export::model::table;

/// The section, or "" when no IPC cell has instruction counts.
pub fn markdown(r: &ResultsFile) -> String {
    let counted: Vec<(&Cell, &Measurement)> = r
        .cells
        .iter()
        .filter(|c| c.role == Role::Same)
        .filter_map(|c| Some((c, c.measurement()?)))
        .filter(|(_, m)| m.ipc_instructions.is_some())
        .collect();
    if counted.is_empty() {
        return String::new();
    }
    let mut families: BTreeMap<&str, Vec<(&Cell, &Measurement)>> = BTreeMap::new();
    for (c, m) in counted {
        let family = c.scenario.split('/').next().unwrap_or(&c.scenario);
        families.entry(family).or_default().push((c, m));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Portable figures: what another machine reproduces\n\n\
         Per operation, counted over one window of operations after verification: instructions of each process \
         under callgrind (client / server / subscribers / bus daemon), messages the bus routed, the client's \
         allocations, the bus daemon's system calls. Times and the other figures below are {}.\n",
        Portability::MachineBound.word()
    );
    for (family, mut cells) in families {
        cells.sort_by(|a, b| (&a.0.adapter, &a.0.bus, &a.0.scenario).cmp(&(&b.0.adapter, &b.0.bus, &b.0.scenario)));
        let _ = writeln!(out, "### {family}: portable\n");
        let _ = writeln!(
            out,
            "| library | bus | scenario | instructions client | server | subscribers | bus | bus messages | allocations | bus syscalls |"
        );
        let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|");
        for (c, m) in cells {
            let i = m.ipc_instructions.as_ref().expect("filtered above");
            let instr = |role: &str| {
                i.process(role)
                    .filter(|_| portability::of_instructions(i.method).is_portable())
                    .map_or_else(|| "–".to_string(), table::si)
            };
            let bus_messages = m.costs.as_ref().and_then(|c| c.bus_messages_per_op);
            let bus_syscalls = m
                .costs
                .as_ref()
                .and_then(|c| c.process("bus"))
                .and_then(|p| p.syscalls_per_op)
                .filter(|_| portability::of_syscalls("bus").is_portable());
            let num = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |v| format!("{v:.1}"));
            let label = r
                .adapters
                .iter()
                .find(|a| a.id == c.adapter)
                .map_or_else(|| c.adapter.clone(), |a| table::label(r, a));
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                c.bus.as_deref().unwrap_or("—"),
                c.scenario,
                instr("client"),
                instr("server"),
                instr("subscribers"),
                instr("bus"),
                num(bus_messages),
                num(m.alloc.as_ref().map(|a| a.allocations_per_op)),
                num(bus_syscalls),
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use harness::results::{CountMethod, IpcInstructions, ProcessInstructions};

    use crate::export::test_fixtures::tiny;

    #[test]
    fn leads_only_when_ipc_instructions_were_counted() {
        let mut r = tiny();
        assert_eq!(super::markdown(&r), "");
        let ipc = r
            .cells
            .iter_mut()
            .filter(|c| c.bus.is_some())
            .find_map(|c| c.measurement_mut())
            .expect("tiny has an IPC cell");
        ipc.ipc_instructions = Some(IpcInstructions {
            method: CountMethod::Callgrind,
            operations: 20,
            processes: vec![
                ProcessInstructions {
                    role: "client".into(),
                    instructions_per_op: 14150.0,
                },
                ProcessInstructions {
                    role: "bus".into(),
                    instructions_per_op: 90138.0,
                },
            ],
            hardware_unavailable: None,
            notes: vec![],
        });
        let md = super::markdown(&r);
        assert!(md.contains("## Portable figures"), "{md}");
        assert!(md.contains("| 14.2 k | – | – | 90.1 k |"), "{md}");
    }
}
