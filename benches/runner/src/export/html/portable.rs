//! The page's first section (issue 30): what the labels portable and
//! machine-bound mean and which figures carry which, then the portable table
//! per scenario family ([`crate::export::model::portable`]) when the run
//! counted IPC instructions (`run --instructions`).

use std::fmt::Write;

use harness::results::portability::Portability;
use harness::results::ResultsFile;

use super::{esc, num};
use crate::export::model::portable::{self, INSTRUCTION_COLUMNS, LEGEND};
use crate::export::model::table;

/// The figure paths of one label as a list of `<code>`.
fn listed(p: Portability) -> String {
    portable::figures(p)
        .iter()
        .map(|f| format!("<code>{}</code>", esc(f)))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn html(r: &ResultsFile, out: &mut String) {
    out.push_str("<h2 id=\"portable\">Portable figures: what another machine reproduces</h2>\n");
    let _ = writeln!(out, "<p class=\"explain portability-legend\">{}</p>", esc(LEGEND));
    let _ = writeln!(
        out,
        "<dl class=\"portability\"><dt>{}</dt><dd>{}</dd><dt>{}</dt><dd>{}</dd></dl>",
        Portability::Portable.word(),
        listed(Portability::Portable),
        Portability::MachineBound.word(),
        listed(Portability::MachineBound)
    );
    let families = portable::families(r);
    if families.is_empty() {
        out.push_str(
            "<p class=\"explain\">No IPC cell of this run has instruction counts (<code>run --instructions</code>): \
             the portable figures are in the tables below (allocations, bus messages, codec instructions), beside \
             machine-bound times.</p>\n",
        );
        return;
    }
    for f in families {
        let _ = writeln!(out, "<h3>{}: portable</h3>", esc(f.name));
        out.push_str(
            "<div class=\"scroll\"><table class=\"portable\">\n<tr><th>library</th><th>bus</th><th>scenario</th>",
        );
        for c in &portable::COLUMNS {
            let _ = write!(out, "<th title=\"{}\">{}</th>", esc(c.figure), esc(c.head));
        }
        out.push_str("</tr>\n");
        for row in &f.rows {
            let _ = write!(
                out,
                "<tr><th>{}</th><td>{}</td><td>{}</td>",
                esc(&row.label),
                esc(row.cell.bus.as_deref().unwrap_or("—")),
                esc(&row.cell.scenario)
            );
            for (i, v) in row.values.iter().enumerate() {
                match v {
                    None => out.push_str("<td class=\"none\">–</td>"),
                    Some(n) if i < INSTRUCTION_COLUMNS => {
                        let _ = write!(out, "<td class=\"num\">{}</td>", table::si(*n));
                    }
                    Some(n) => {
                        let _ = write!(out, "<td class=\"num\">{}</td>", num(*n));
                    }
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table></div>\n");
    }
}
