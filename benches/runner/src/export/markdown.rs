//! The default report: Markdown tables for terminals and READMEs.

use std::fmt::Write;

use harness::results::{CellStatus, ResultsFile};

use super::table::{self, duration, row_label};

pub fn render(r: &ResultsFile) -> String {
    let mut out = String::new();
    let e = &r.environment;
    let _ = writeln!(
        out,
        "dbus-matrix `{}` profile, revision `{}`, {}{}\n\n{} ({} CPUs, {:.0} GiB), {}, kernel {}, {}, mode {}\n",
        r.run.profile,
        r.run.revision,
        r.run.started_at,
        if r.run.complete { "" } else { " (incomplete run)" },
        e.cpu_model,
        e.cpus,
        e.memory_bytes as f64 / (1u64 << 30) as f64,
        e.os,
        e.kernel,
        e.rustc,
        e.mode
    );
    let mut notes: Vec<String> = Vec::new();
    for t in table::tables(r) {
        if let Some(bus) = &t.bus {
            let _ = writeln!(out, "### bus: {bus}\n");
        }
        let _ = writeln!(out, "| library | {} |", t.columns.join(" | "));
        let _ = writeln!(out, "|---|{}", "---:|".repeat(t.columns.len()));
        for row in &t.rows {
            let cells: Vec<String> = row
                .cells
                .iter()
                .map(|e| match e {
                    None => "–".to_string(),
                    Some(e) => match e.cell.status {
                        CellStatus::Ok => {
                            let m = e.cell.median_ns().unwrap_or(f64::NAN);
                            match e.ratio {
                                Some(ratio) => format!("{} ({ratio:.2}×)", duration(m)),
                                None => duration(m),
                            }
                        }
                        status => {
                            notes.push(format!(
                                "{} {} {}: {}",
                                row.adapter.id,
                                e.cell.scenario,
                                table::status_word(status),
                                e.cell.reason.as_deref().unwrap_or("no reason recorded")
                            ));
                            format!("{} [{}]", table::status_word(status), notes.len())
                        }
                    },
                })
                .collect();
            let _ = writeln!(out, "| {} | {} |", row_label(row.adapter), cells.join(" | "));
        }
        out.push('\n');
    }
    out.push_str(
        "Cells: median wall time per operation (criterion), and in brackets the ratio to the fastest library in the column (1.00× = fastest; the baseline is not a library and may go below 1).\n",
    );
    if !notes.is_empty() {
        out.push('\n');
        for (i, n) in notes.iter().enumerate() {
            let _ = writeln!(out, "[{}] {n}", i + 1);
        }
    }
    out
}
