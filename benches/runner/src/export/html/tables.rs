//! The matrix tables of the page: median wall time per cell, instructions
//! per operation and IPC costs, with notes for cells that did not run.

use std::fmt::Write;

use harness::results::{AdapterRecord, Outcome};

use super::{esc, num, reason, summary, Page};
use crate::export::model::table::{self, duration, si, Entry, Group, Table};
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

impl Page<'_> {
    fn table_heading(&self, t: &Table) -> String {
        match &t.group {
            Group::Codec => "Codec: marshal and demarshal".into(),
            Group::Floor => "Floor: bytes ping-ponged over a Unix socket pair".into(),
            Group::Bus(bus) => {
                let daemon = self
                    .r
                    .buses
                    .iter()
                    .find(|b| &b.id == bus)
                    .map(|b| format!(" <span>({})</span>", esc(&b.description)));
                format!("Bus: <code>{}</code>{}", esc(bus), daemon.unwrap_or_default())
            }
            Group::Role(role, bus) => format!(
                "{} on <code>{}</code> <span>({})</span>",
                esc(&upper_first(role.view())),
                esc(bus),
                esc(&table::role_note(self.r, *role))
            ),
        }
    }

    /// Rows are scenarios and columns libraries (the transpose of the
    /// Markdown table: many scenarios, few libraries, fits a screen).
    pub(super) fn matrix_table(&mut self, t: &Table) {
        let _ = writeln!(self.out, "<h3>{}</h3>", self.table_heading(t));
        if let Some(line) = table::placement_line(t, self.r.run.placement.as_deref()) {
            let _ = writeln!(self.out, "<p class=\"explain\">{}</p>", esc(&line));
        }
        self.open_table(t, "");
        for (i, col) in t.columns.iter().enumerate() {
            let _ = write!(self.out, "<tr><th title=\"{}\">{}</th>", esc(&summary(col)), esc(col));
            for row in &t.rows {
                let td = match &row.cells[i] {
                    Some(e) => self.cell_td(e, row.adapter),
                    None => "<td class=\"none\">–</td>".to_string(),
                };
                self.out.push_str(&td);
            }
            self.out.push_str("</tr>\n");
        }
        self.out.push_str("</tbody></table></div>\n");
    }

    /// A scrolling `<table>` (with `attributes`) and its header row: a
    /// column of scenarios, then one per library of `t`.
    fn open_table(&mut self, t: &Table, attributes: &str) {
        let _ = write!(
            self.out,
            "<div class=\"scroll\"><table{attributes}>\n<thead><tr><th>scenario</th>"
        );
        for row in &t.rows {
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
        if table::label(self.r, a) != table::row_label(a) {
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

    fn cell_td(&mut self, e: &Entry, adapter: &AdapterRecord) -> String {
        let baseline = adapter.baseline;
        let adapter = adapter.id.as_str();
        match &e.cell.outcome {
            Outcome::Ok(m) => {
                let w = &m.wall.median_ns;
                let width = width::of(m, width::target(self.r));
                let mut tip = format!(
                    "median {} (95% CI {} – {}), {} samples",
                    duration(w.point),
                    duration(w.lower),
                    duration(w.upper),
                    m.wall.samples
                );
                if width.rounds > 1 {
                    let _ = write!(tip, ", {} rounds", width.rounds);
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
                let mut extra: Vec<String> = table::calls_per_second(&e.cell.scenario, w.point).into_iter().collect();
                let mut class = "num";
                if let Some(r) = e.ratio {
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
                if let Some(f) = m.floor_ratio {
                    let text = if f >= 1.0 {
                        format!("{f:.1}× floor")
                    } else {
                        let n = self
                            .notes
                            .number(table::below_floor_reason(&e.cell.scenario).to_string());
                        format!("{f:.2}× floor<sup><a href=\"#note-{n}\">[{n}]</a></sup>")
                    };
                    extra.push(text);
                }
                if let Some(r) = width::rounds_text(&width, width::planned_rounds(self.r)) {
                    extra.push(r);
                }
                if let Some(reason) = width.cut {
                    let n = self.notes.number(width::cut_note(adapter, &e.cell.scenario, reason));
                    extra.push(format!(
                        "<span class=\"cut\">cut</span><sup><a href=\"#note-{n}\">[{n}]</a></sup>"
                    ));
                }
                let small = if extra.is_empty() {
                    String::new()
                } else {
                    format!("<small>{}</small>", extra.join(" · "))
                };
                let (wide, flag) = if width.above_target {
                    (" wide", width::FLAG)
                } else {
                    ("", "")
                };
                let ci = width.relative.map_or_else(String::new, |rel| {
                    format!(" <span class=\"width\">{}{flag}</span>", width::percent(rel))
                });
                format!(
                    "<td class=\"{class}{wide}\" title=\"{}\">{}{ci}{small}</td>",
                    esc(&tip),
                    duration(w.point)
                )
            }
            Outcome::Unsupported { .. } | Outcome::Failed { .. } => {
                let word = table::status_word(e.cell.status());
                let n = self.notes.number(format!("{adapter} {word}: {}", reason(e.cell)));
                format!(
                    "<td class=\"{word}\" title=\"{}\">{word}<sup><a href=\"#note-{n}\">[{n}]</a></sup></td>",
                    esc(reason(e.cell))
                )
            }
        }
    }

    /// Instructions per operation (`run --instructions`) with the ratio to
    /// the fewest in the row; only for tables where some cell has them.
    pub(super) fn instructions_table(&mut self, t: &Table) {
        if !table::has_instructions(t) {
            return;
        }
        let _ = writeln!(
            self.out,
            "<h3>Instructions per operation (callgrind){}</h3>",
            group_suffix(&t.group)
        );
        self.open_table(t, "");
        for (i, col) in t.columns.iter().enumerate() {
            let fewest = table::fewest_instructions(t, i);
            let _ = write!(self.out, "<tr><th>{}</th>", esc(col));
            for row in &t.rows {
                let _ = match (table::instructions(&row.cells[i]), fewest) {
                    (Some(n), Some(f)) if f > 0.0 => write!(
                        self.out,
                        "<td class=\"num{}\">{}<small>{:.2}×</small></td>",
                        if n <= f * 1.005 && !row.adapter.baseline {
                            " best"
                        } else {
                            ""
                        },
                        si(n),
                        n / f
                    ),
                    (Some(n), _) => write!(self.out, "<td class=\"num\">{}</td>", si(n)),
                    (None, _) => write!(self.out, "<td class=\"none\">–</td>"),
                };
            }
            self.out.push_str("</tr>\n");
        }
        self.out.push_str("</tbody></table></div>\n");
    }

    /// The per-operation costs of IPC cells, one table per figure that some
    /// cell of `t` has: the total, then each process (client / server [/
    /// subscribers] / bus).
    pub(super) fn cost_tables(&mut self, t: &Table) {
        for f in &table::COST_FIGURES {
            if !t.rows.iter().any(|row| {
                row.cells
                    .iter()
                    .any(|e| table::costs(e).and_then(|c| f.total(c)).is_some())
            }) {
                continue;
            }
            let each = if f.per_process() {
                " <small>total (client / server [/ subscribers] / bus)</small>"
            } else {
                ""
            };
            let _ = writeln!(
                self.out,
                "<h3>{}{}{each}</h3>",
                esc(&f.title[..1].to_uppercase()) + &esc(&f.title[1..]),
                group_suffix(&t.group)
            );
            self.open_table(t, " class=\"costs\"");
            for (i, col) in t.columns.iter().enumerate() {
                let _ = write!(self.out, "<tr><th>{}</th>", esc(col));
                for row in &t.rows {
                    let _ = match table::costs(&row.cells[i]).and_then(|c| table::cost_text(f, c)) {
                        Some(text) => write!(self.out, "<td class=\"num\">{}</td>", esc(&text)),
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
