//! The interop table on the page: clients (rows) against servers
//! (columns), failed pairs with what failed (hover, and the list below).

use std::fmt::Write;

use super::{esc, Page};

impl Page<'_> {
    /// Nothing when the file has no interop table (`dbus-matrix interop --into`).
    pub(super) fn interop(&mut self) {
        let Some(v) = &self.report.interop else { return };
        let _ = writeln!(
            self.out,
            "<h2 id=\"interop\">Interop: client (row) × server (column)</h2>\n<p class=\"explain\">{}</p>",
            esc(&v.lead)
        );
        self.out
            .push_str("<div class=\"scroll\"><table><thead><tr><th>client \\ server</th>");
        for s in &v.servers {
            let _ = write!(self.out, "<th>{}</th>", esc(s));
        }
        self.out.push_str("</tr></thead><tbody>\n");
        let mut failures = Vec::new();
        for (client, pairs) in &v.rows {
            let _ = write!(self.out, "<tr><th>{}</th>", esc(client));
            for (server, p) in v.servers.iter().zip(pairs) {
                let Some(text) = p else {
                    self.out.push_str("<td class=\"none\"></td>");
                    continue;
                };
                if text.passed {
                    let _ = write!(self.out, "<td>{}</td>", esc(&text.summary));
                } else {
                    failures.push(format!("{client} → {server}: {}", text.failures.join("; ")));
                    let _ = write!(
                        self.out,
                        "<td class=\"failed\" title=\"{}\">{} <a href=\"#interop-{n}\">[i{n}]</a></td>",
                        esc(&text.failures.join("\n")),
                        esc(&text.summary),
                        n = failures.len()
                    );
                }
            }
            self.out.push_str("</tr>\n");
        }
        self.out.push_str("</tbody></table></div>\n");
        if !failures.is_empty() {
            self.out.push_str("<ol class=\"notes\">\n");
            for (i, f) in failures.iter().enumerate() {
                let _ = writeln!(self.out, "<li id=\"interop-{}\">{}</li>", i + 1, esc(f));
            }
            self.out.push_str("</ol>\n");
        }
    }
}
