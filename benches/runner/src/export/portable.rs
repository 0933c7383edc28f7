//! The portable table as Markdown, which the Markdown report leads with
//! (issue 30): [`crate::export::model::portable`] per scenario family, when
//! the run counted IPC instructions (`run --instructions`).

use std::fmt::Write;

use harness::results::portability::Portability;

use crate::export::model::portable::{self, INSTRUCTION_COLUMNS};
use crate::export::model::table;

/// The section, or "" when no IPC cell has instruction counts.
pub fn markdown(r: &harness::results::ResultsFile) -> String {
    let families = portable::families(r);
    if families.is_empty() {
        return String::new();
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
    for family in families {
        let _ = writeln!(out, "### {}: portable\n", family.name);
        let heads: Vec<&str> = portable::COLUMNS.iter().map(|c| c.head).collect();
        let _ = writeln!(out, "| library | bus | scenario | {} |", heads.join(" | "));
        let _ = writeln!(out, "|---|---|---|{}", "---:|".repeat(heads.len()));
        for row in family.rows {
            let cells: Vec<String> = row
                .values
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    None => "–".to_string(),
                    Some(n) if i < INSTRUCTION_COLUMNS => table::si(*n),
                    Some(v) => format!("{v:.1}"),
                })
                .collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                row.label,
                row.cell.bus.as_deref().unwrap_or("—"),
                row.cell.scenario,
                cells.join(" | ")
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
                    threads: vec![],
                },
                ProcessInstructions {
                    role: "bus".into(),
                    instructions_per_op: 90138.0,
                    threads: vec![],
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
