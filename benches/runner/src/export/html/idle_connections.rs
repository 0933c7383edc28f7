//! The page's idle-connections section: the texts of
//! `Report::idle_connections` under [`crate::export::model::connection_memory`]'s
//! head, as an HTML table; and the plain sections after it (idle costs, bus
//! daemon memory).

use std::fmt::Write;

use super::esc;
use crate::export::model::connection_memory::{EXPLAIN, HEAD};
use crate::export::model::report::Report;

/// The HTML section (nothing without such cells).
pub fn html(report: &Report, out: &mut String) {
    let rows = &report.idle_connections;
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<h3 id=\"idle-connections\">Idle connections: what one costs</h3>\n<p class=\"explain\">{}</p>",
        esc(EXPLAIN)
    );
    out.push_str("<table class=\"connection-memory\">\n<tr>");
    for h in HEAD {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for t in row {
            let _ = write!(out, "<td>{}</td>", esc(t));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

/// The plain sections ([`crate::export::model::section`]: idle costs, bus
/// daemon memory), each as its own table.
pub fn sections(report: &Report, out: &mut String) {
    for s in &report.sections {
        let _ = writeln!(
            out,
            "<h3 id=\"{}\">{}</h3>\n<p class=\"explain\">{}</p>",
            s.id,
            esc(s.title),
            esc(&s.explain)
        );
        let _ = write!(out, "<table class=\"{}\">\n<tr>", s.id);
        for h in &s.head {
            let _ = write!(out, "<th>{}</th>", esc(h));
        }
        out.push_str("</tr>\n");
        for row in &s.rows {
            out.push_str("<tr>");
            for t in row {
                let _ = write!(out, "<td>{}</td>", esc(t));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
    }
}
