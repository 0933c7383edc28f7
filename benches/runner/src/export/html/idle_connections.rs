//! The page's idle-connections section: the rows and texts of
//! [`crate::export::model::connection_memory`], as an HTML table.

use std::fmt::Write;

use harness::results::ResultsFile;

use super::esc;
use crate::export::model::connection_memory::{rows, texts, EXPLAIN, HEAD};

/// The HTML section (nothing without such cells).
pub fn html(r: &ResultsFile, out: &mut String) {
    let rows = rows(r);
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
    for row in &rows {
        out.push_str("<tr>");
        for t in texts(row) {
            let _ = write!(out, "<td>{}</td>", esc(&t));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}
