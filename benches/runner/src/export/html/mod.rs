//! One self-contained HTML page: the run and its environment, the portable
//! figures first (`portable`: what the labels mean, the portable table), the matrix
//! tables, log-scale bar charts per scenario (IPC ones grouped by bus: the
//! bus-vs-bus chart) and latency/throughput against message size for
//! `call/echo-bytes/*`. Everything is inline (CSS, SVG drawn here, one line
//! of script): the page loads nothing from the network.
//!
//! It prints `model::report::Report` only: the page is here and in `tables`
//! and `charts`; `svg` draws the charts.

mod charts;
mod escape;
mod idle_connections;
mod interop;
mod portable;
mod style;
pub(crate) mod svg;
mod tables;

use std::fmt::Write;

use harness::results::ResultsFile;

use super::model::report::Report;
use super::model::table::Notes;
pub use style::CSS;

pub use escape::esc;

/// A number with at most three significant digits and no trailing zeros.
fn num(x: f64) -> String {
    let digits = if x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else if x >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The page being written, with the notes its cells refer to.
struct Page<'a> {
    r: &'a ResultsFile,
    report: &'a Report<'a>,
    out: String,
    notes: Notes,
    charts: usize,
}

fn summary(scenario: &str) -> String {
    harness::scenario::find(scenario)
        .map(|s| s.summary.clone())
        .unwrap_or_default()
}

pub fn render(r: &ResultsFile) -> String {
    render_counted(r).0
}

/// The page and how many charts (`svg.chart`) it has.
pub fn render_counted(r: &ResultsFile) -> (String, usize) {
    let report = Report::of(r);
    let mut p = Page {
        r,
        report: &report,
        out: String::new(),
        notes: Notes::default(),
        charts: 0,
    };
    let title = format!("dbus-matrix {} run {}", r.run.profile, r.run.started_at);
    let _ = write!(
        p.out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(&title)
    );
    p.header();
    p.out.push_str(
        "<nav><a href=\"#portable\">portable figures</a><a href=\"#tables\">tables</a><a href=\"#codec-charts\">codec charts</a>\
         <a href=\"#ipc-charts\">IPC charts</a><a href=\"#size-charts\">message size</a><a href=\"#notes\">notes</a></nav>\n",
    );
    portable::html(r, &mut p.out);
    p.out.push_str("<h2 id=\"tables\">Matrix</h2>\n");
    p.out.push_str(
        "<p class=\"explain\">Cells: median wall time per operation (criterion); below it the ratio to the fastest \
         library in the row (1.00× = fastest, shaded green; the baseline is not a library and may go below 1) and, over \
         IPC, the ratio to the raw-socket floor of the same run. Hover a cell for the 95% interval and allocations; \
         unsupported and failed cells carry their reason (hover, or the numbered note).</p>\n",
    );
    if let Some(legend) = &report.legend {
        let _ = writeln!(p.out, "<p class=\"explain width-legend\">{}</p>", esc(legend));
    }
    for t in &report.tables {
        p.matrix_table(t);
        p.instructions_table(t);
        p.cost_tables(t);
    }
    idle_connections::html(&report, &mut p.out);
    idle_connections::sections(&report, &mut p.out);
    p.codec_charts();
    p.ipc_charts();
    p.size_charts();
    p.interop();
    p.notes();
    let _ = writeln!(
        p.out,
        "<p class=\"explain\">dbus-matrix {} · {} charts.</p>",
        esc(&r.run.tool_version),
        p.charts
    );
    p.out.push_str(
        "<script>document.body.dataset.rendered = String(document.querySelectorAll('svg.chart').length);</script>\n\
         </body>\n</html>\n",
    );
    (p.out, p.charts)
}

impl Page<'_> {
    fn header(&mut self) {
        let r = self.r;
        let run = &r.run;
        let e = &r.environment;
        let _ = writeln!(
            self.out,
            "<h1>dbus-matrix results: <code>{}</code> profile</h1>",
            esc(&run.profile)
        );
        let status = if run.complete {
            "complete".to_string()
        } else {
            "<span class=\"warn\">incomplete run</span>".to_string()
        };
        let mut runs = vec![
            ("revision", format!("<code>{}</code>", esc(&run.revision))),
            ("started", esc(&run.started_at)),
        ];
        if let Some(f) = &run.finished_at {
            runs.push(("finished", esc(f)));
        }
        runs.push(("status", status));
        if let Some(pl) = &run.placement {
            runs.push(("placement", esc(pl)));
        }
        runs.push(("command", format!("<code>{}</code>", esc(&run.command.join(" ")))));
        runs.push(("cells", r.cells.len().to_string()));
        let mut env = vec![
            ("CPU", esc(&e.cpu_model)),
            ("cores", e.cpus.to_string()),
            (
                "memory",
                format!("{:.1} GiB", e.memory_bytes as f64 / (1u64 << 30) as f64),
            ),
            ("OS", esc(&e.os)),
            ("kernel", esc(&e.kernel)),
            ("rustc", esc(&e.rustc)),
            ("mode", esc(&e.mode)),
        ];
        if let Some(v) = &e.valgrind {
            env.push(("valgrind", esc(v)));
        }
        env.push(("host", format!("<code>{}</code>", esc(&e.hostname_hash))));
        self.out.push_str("<div class=\"meta\">\n<section><h3>Run</h3><dl>\n");
        for (k, v) in runs {
            let _ = writeln!(self.out, "<dt>{k}</dt><dd>{v}</dd>");
        }
        self.out
            .push_str("</dl></section>\n<section><h3>Environment</h3><dl>\n");
        for (k, v) in env {
            let _ = writeln!(self.out, "<dt>{k}</dt><dd>{v}</dd>");
        }
        self.out.push_str("</dl></section>\n<section><h3>Adapters</h3><dl>\n");
        for report_adapter in &self.report.adapters {
            let a = report_adapter.record;
            let size = a
                .loaded_bytes
                .map(|b| format!(" <small>· binary {:.1} MB code and data</small>", b as f64 / 1e6))
                .unwrap_or_default();
            let build = report_adapter
                .build
                .as_ref()
                .map(|b| format!(" <small>· build {}</small>", esc(b)))
                .unwrap_or_default();
            let runtime = a
                .runtime
                .as_deref()
                .map(|rt| format!(" <small>· runtime: {}</small>", esc(rt)))
                .unwrap_or_default();
            let _ = writeln!(
                self.out,
                "<dt><code>{}</code></dt><dd>{} {}{}{size}{build}{runtime}</dd>",
                esc(&a.id),
                esc(&a.library),
                esc(&a.version),
                if a.baseline {
                    " <i>(baseline, not a library)</i>"
                } else {
                    ""
                }
            );
        }
        self.out.push_str("</dl></section>\n");
        if !r.buses.is_empty() {
            self.out.push_str("<section><h3>Buses</h3><dl>\n");
            for b in &r.buses {
                let _ = writeln!(
                    self.out,
                    "<dt><code>{}</code></dt><dd>{}</dd>",
                    esc(&b.id),
                    esc(&b.description)
                );
            }
            self.out.push_str("</dl></section>\n");
        }
        self.out.push_str("</div>\n");
    }

    /// Appends one chart (an `svg` figure) and counts it.
    fn push_chart(&mut self, figure: String) {
        self.charts += 1;
        self.out.push_str(&figure);
    }

    fn notes(&mut self) {
        self.out.push_str("<h2 id=\"notes\">Notes</h2>\n");
        if self.notes.0.is_empty() {
            self.out.push_str("<p>Every cell ran and passed.</p>\n");
            return;
        }
        self.out.push_str("<ol class=\"notes\">\n");
        for (i, n) in self.notes.0.iter().enumerate() {
            let _ = writeln!(self.out, "<li id=\"note-{}\">{}</li>", i + 1, esc(n));
        }
        self.out.push_str("</ol>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_fixtures::tiny;

    #[test]
    fn tiny_results_render() {
        let (html, charts) = render_counted(&tiny());
        // 2 codec + 3 IPC bar charts + latency and throughput on dbus-daemon
        // (p2p has one library with echo cells: a chart too).
        assert_eq!(charts, 2 + 3 + 2 * 2, "{html}");
        assert_eq!(html.matches("<svg class=\"chart\"").count(), charts);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("incomplete run"));
        assert!(html.contains("valgrind-3.19.0") && html.contains("binary 2.5 MB"));
        assert!(html.contains("build 42.1 s, 12 crates, -j 2"), "{html}");
        assert!(html.contains("abc&lt;d&gt;"));
        assert!(!html.contains("<server>") && html.contains("no &lt;server&gt; side"));
        assert!(html.contains("boom &lt;&amp;&gt; &quot;quoted&quot;"));
        assert!(html.contains("href=\"#note-1\"") && html.contains("id=\"note-2\""));
        assert!(html.contains("stroke-dasharray=\"6 4\""), "the floor line");
        assert!(!html.contains("Instructions per operation"));
        // The labels lead: the legend and the figures of each label, before the matrix.
        let (legend, matrix) = (
            html.find("id=\"portable\"").unwrap(),
            html.find("id=\"tables\"").unwrap(),
        );
        assert!(legend < matrix, "{html}");
        assert!(
            html.contains("<dt>portable</dt><dd><code>alloc.allocations_per_op</code>"),
            "{html}"
        );
        assert!(
            html.contains("No IPC cell of this run has instruction counts"),
            "{html}"
        );
        assert!(html.contains("data-rendered") || html.contains("dataset.rendered"));
        for bad in ["http://", "https://", "src=", "<link", "@import", "url("] {
            assert!(!html.contains(bad), "{bad}");
        }
    }

    #[test]
    fn instructions_table_when_counted() {
        let mut r = tiny();
        r.cells[0].measurement_mut().unwrap().instructions_per_op = Some(12_345.0);
        let html = render(&r);
        assert!(html.contains("Instructions per operation"));
        assert!(html.contains("12.3 k"));
    }
}
