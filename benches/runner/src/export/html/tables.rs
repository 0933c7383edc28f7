//! The matrix tables of the page: median wall time per cell, instructions
//! per operation and IPC costs, with notes for cells that did not run.

use std::fmt::Write;

use harness::results::{AdapterRecord, Cell};

use super::{esc, num, summary, Page};
use crate::export::model::report::{CellView, ReportTable, Timed};
use crate::export::model::table::Group;
use crate::export::model::width;

/// ": <code>bus</code>" after a heading about one table's cells.
fn group_suffix(g: &Group) -> String {
    match g {
        Group::Bus(b) => format!(": <code>{}</code>", esc(b)),
        Group::Role(role, b) => format!(": {} on <code>{}</code>", role, esc(b)),
        Group::Floor => ": floor".into(),
        Group::Codec => String::new(),
    }
}

fn table_heading(t: &ReportTable) -> String {
    match &t.table.group {
        Group::Codec => "Codec: marshal and demarshal".into(),
        Group::Floor => "Floor: bytes ping-ponged over a Unix socket pair".into(),
        Group::Bus(bus) => {
            let daemon = t.bus_description.map(|d| format!(" <span>({})</span>", esc(d)));
            format!("Bus: <code>{}</code>{}", esc(bus), daemon.unwrap_or_default())
        }
        Group::Role(role, bus) => format!(
            "{} on <code>{}</code> <span>({})</span>",
            esc(&upper_first(role.view())),
            esc(bus),
            esc(t.role_note.as_deref().unwrap_or_default())
        ),
    }
}

/// The tooltip of a timed cell: interval, samples, rounds, allocations.
fn tip(t: &Timed, cell: &Cell) -> String {
    let Some(m) = cell.measurement() else {
        return String::new();
    };
    let mut tip = format!(
        "median {} (95% CI {} – {}), {} samples",
        t.median, t.lower, t.upper, m.wall.samples
    );
    if t.rounds > 1 {
        let _ = write!(tip, ", {} rounds", t.rounds);
    }
    if let Some(a) = &m.alloc {
        let _ = write!(
            tip,
            "; {} allocations, {} bytes per op",
            num(a.allocations_per_op),
            num(a.bytes_per_op)
        );
    } else if let Some(why) = &m.alloc_unavailable {
        let _ = write!(tip, "; allocations: — ({why})");
    }
    tip
}

impl Page<'_> {
    /// Rows are scenarios and columns libraries (the transpose of the
    /// Markdown table: many scenarios, few libraries, fits a screen).
    pub(super) fn matrix_table(&mut self, t: &ReportTable) {
        let _ = writeln!(self.out, "<h3>{}</h3>", table_heading(t));
        if let Some(line) = &t.placement {
            let _ = writeln!(self.out, "<p class=\"explain\">{}</p>", esc(line));
        }
        self.open_table(t, "");
        for (i, col) in t.table.columns.iter().enumerate() {
            let _ = write!(self.out, "<tr><th title=\"{}\">{}</th>", esc(&summary(col)), esc(col));
            for (row, views) in t.table.rows.iter().zip(&t.cells) {
                let td = match (&row.cells[i], &views[i]) {
                    (Some(e), Some(v)) => self.cell_td(v, e.cell, row.adapter.baseline),
                    _ => "<td class=\"none\">–</td>".to_string(),
                };
                self.out.push_str(&td);
            }
            self.out.push_str("</tr>\n");
        }
        self.out.push_str("</tbody></table></div>\n");
    }

    /// A scrolling `<table>` (with `attributes`) and its header row: a
    /// column of scenarios, then one per library of `t`.
    fn open_table(&mut self, t: &ReportTable, attributes: &str) {
        let _ = write!(
            self.out,
            "<div class=\"scroll\"><table{attributes}>\n<thead><tr><th>scenario</th>"
        );
        for row in &t.table.rows {
            self.lib_header(row.adapter);
        }
        self.out.push_str("</tr></thead>\n<tbody>\n");
    }

    fn lib_header(&mut self, a: &AdapterRecord) {
        let mut sub = if a.baseline {
            "baseline".to_string()
        } else {
            a.version.clone()
        };
        if self.report.adapters.iter().any(|r| r.record.id == a.id && r.with_id) {
            sub = format!("{sub} · {}", a.id);
        }
        let _ = write!(
            self.out,
            "<th class=\"lib\" title=\"{}\">{}<small>{}</small></th>",
            esc(&a.id),
            esc(&a.library),
            esc(&sub)
        );
    }

    fn cell_td(&mut self, v: &CellView, cell: &Cell, baseline: bool) -> String {
        match v {
            CellView::Timed(t) => {
                let tip = tip(t, cell);
                let mut extra: Vec<String> = t.calls_per_second.iter().cloned().collect();
                let mut class = "num";
                if let Some(r) = t.ratio {
                    extra.push(format!("{r:.2}×"));
                    class = match r {
                        // The baseline is not a library: no colour for it.
                        _ if baseline => "num",
                        r if r <= 1.005 => "num best",
                        r if r <= 1.5 => "num",
                        r if r <= 3.0 => "num r2",
                        r if r <= 10.0 => "num r3",
                        _ => "num r4",
                    };
                }
                if let Some(f) = &t.floor {
                    extra.push(match &f.below_note {
                        None => f.text.clone(),
                        Some(note) => {
                            let n = self.notes.number(note.clone());
                            format!("{}<sup><a href=\"#note-{n}\">[{n}]</a></sup>", f.text)
                        }
                    });
                }
                extra.extend(t.rounds_text.clone());
                if let Some(note) = &t.cut_note {
                    let n = self.notes.number(note.clone());
                    extra.push(format!(
                        "<span class=\"cut\">cut</span><sup><a href=\"#note-{n}\">[{n}]</a></sup>"
                    ));
                }
                let small = if extra.is_empty() {
                    String::new()
                } else {
                    format!("<small>{}</small>", extra.join(" · "))
                };
                let (wide, flag) = if t.above_target {
                    (" wide", width::FLAG)
                } else {
                    ("", "")
                };
                let ci = t
                    .width
                    .as_ref()
                    .map_or_else(String::new, |w| format!(" <span class=\"width\">{w}{flag}</span>"));
                format!(
                    "<td class=\"{class}{wide}\" title=\"{}\">{}{ci}{small}</td>",
                    esc(&tip),
                    t.median
                )
            }
            CellView::NotRun { word, reason, note } => {
                let n = self.notes.number(note.clone());
                format!(
                    "<td class=\"{word}\" title=\"{}\">{word}<sup><a href=\"#note-{n}\">[{n}]</a></sup></td>",
                    esc(reason)
                )
            }
        }
    }

    /// Instructions per operation (`run --instructions`) with the ratio to
    /// the fewest in the row; only for tables where some cell has them.
    pub(super) fn instructions_table(&mut self, t: &ReportTable) {
        let Some(rows) = &t.instructions else {
            return;
        };
        let _ = writeln!(
            self.out,
            "<h3>Instructions per operation (callgrind){}</h3>",
            group_suffix(&t.table.group)
        );
        self.open_table(t, "");
        for (i, col) in t.table.columns.iter().enumerate() {
            let _ = write!(self.out, "<tr><th>{}</th>", esc(col));
            for row in rows {
                let _ = match &row[i] {
                    Some(n) => match n.ratio {
                        Some(ratio) => write!(
                            self.out,
                            "<td class=\"num{}\">{}<small>{ratio:.2}×</small></td>",
                            if n.best { " best" } else { "" },
                            n.text
                        ),
                        None => write!(self.out, "<td class=\"num\">{}</td>", n.text),
                    },
                    None => write!(self.out, "<td class=\"none\">–</td>"),
                };
            }
            self.out.push_str("</tr>\n");
        }
        self.out.push_str("</tbody></table></div>\n");
    }

    /// The per-operation costs of IPC cells, one table per figure that some
    /// cell of `t` has: the total, then each process (client / server [/
    /// subscribers] / bus).
    pub(super) fn cost_tables(&mut self, t: &ReportTable) {
        for f in &t.costs {
            let each = if f.per_process {
                " <small>total (client / server [/ subscribers] / bus)</small>"
            } else {
                ""
            };
            let _ = writeln!(
                self.out,
                "<h3>{}{}{each}</h3>",
                esc(&f.title[..1].to_uppercase()) + &esc(&f.title[1..]),
                group_suffix(&t.table.group)
            );
            self.open_table(t, " class=\"costs\"");
            for (i, col) in t.table.columns.iter().enumerate() {
                let _ = write!(self.out, "<tr><th>{}</th>", esc(col));
                for row in &f.texts {
                    let _ = match &row[i] {
                        Some(text) => write!(self.out, "<td class=\"num\">{}</td>", esc(text)),
                        None => write!(self.out, "<td class=\"none\">–</td>"),
                    };
                }
                self.out.push_str("</tr>\n");
            }
            self.out.push_str("</tbody></table></div>\n");
        }
    }
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
