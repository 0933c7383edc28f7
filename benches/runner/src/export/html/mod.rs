//! One self-contained HTML page: the run and its environment, the matrix
//! tables, log-scale bar charts per scenario (IPC ones grouped by bus: the
//! bus-vs-bus chart) and latency/throughput against message size for
//! `call/echo-bytes/*`. Everything is inline (CSS, SVG drawn here, one line
//! of script): the page loads nothing from the network.
//!
//! The page is here and in `tables` and `charts` (what to chart); `svg` draws
//! the charts.

mod charts;
mod interop;
mod style;
mod svg;
mod tables;

use std::fmt::Write;

use harness::ipc::IpcOp;
use harness::results::{Cell, ResultsFile};

use super::table::{self, Notes};
use super::width;
use style::CSS;

/// Text for HTML content and attribute values (also valid inside SVG).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

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
    out: String,
    notes: Notes,
    charts: usize,
}

fn reason(c: &Cell) -> &str {
    c.reason().unwrap_or("no reason recorded")
}

fn ipc_op(scenario: &str) -> Option<IpcOp> {
    harness::scenario::find(scenario).and_then(|s| s.ipc_op())
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
    let mut p = Page {
        r,
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
    let tables = table::tables(r);
    p.out.push_str(
        "<nav><a href=\"#tables\">tables</a><a href=\"#codec-charts\">codec charts</a>\
         <a href=\"#ipc-charts\">IPC charts</a><a href=\"#size-charts\">message size</a><a href=\"#notes\">notes</a></nav>\n",
    );
    p.out.push_str("<h2 id=\"tables\">Matrix</h2>\n");
    p.out.push_str(
        "<p class=\"explain\">Cells: median wall time per operation (criterion); below it the ratio to the fastest \
         library in the row (1.00× = fastest, shaded green; the baseline is not a library and may go below 1) and, over \
         IPC, the ratio to the raw-socket floor of the same run. Hover a cell for the 95% interval and allocations; \
         unsupported and failed cells carry their reason (hover, or the numbered note).</p>\n",
    );
    if let Some(legend) = width::legend(r) {
        let _ = writeln!(p.out, "<p class=\"explain width-legend\">{}</p>", esc(&legend));
    }
    for t in &tables {
        p.matrix_table(t);
        p.instructions_table(t);
        p.cost_tables(t);
    }
    super::connection_memory::html(r, &mut p.out);
    p.codec_charts(&tables);
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
        for a in &r.adapters {
            let size = a
                .loaded_bytes
                .map(|b| format!(" <small>· binary {:.1} MB code and data</small>", b as f64 / 1e6))
                .unwrap_or_default();
            let build = a
                .build
                .as_ref()
                .map(|b| format!(" <small>· build {}</small>", esc(&table::build_time(b))))
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
pub(crate) mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            esc(r#"<script>alert("x & 'y'")</script>"#),
            "&lt;script&gt;alert(&quot;x &amp; &#39;y&#39;&quot;)&lt;/script&gt;"
        );
        assert_eq!(esc("µs ×"), "µs ×");
    }

    fn ok(adapter: &str, scenario: &str, bus: Option<&str>, ns: f64) -> serde_json::Value {
        let size = scenario
            .rsplit('/')
            .next()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(100);
        serde_json::json!({
            "adapter": adapter, "scenario": scenario, "bus": bus, "status": "ok", "elapsed_s": 0.1,
            "measurement": {
                "wall": {
                    "median_ns": {"point": ns, "lower": ns * 0.9, "upper": ns * 1.1},
                    "mean_ns": {"point": ns, "lower": ns * 0.9, "upper": ns * 1.1},
                    "std_dev_ns": 1.0, "samples": 10, "iterations": 100, "sample_ns": [ns]
                },
                "throughput_bytes": size, "alloc": null, "verification_notes": []
            }
        })
    }

    /// Built from JSON so that it does not depend on every optional field.
    pub(crate) fn tiny() -> ResultsFile {
        let mut cells = vec![
            ok("a-1", "marshal/mixed", None, 5_000.0),
            ok("b-2", "marshal/mixed", None, 12_000.0),
            ok("raw", "marshal/mixed", None, 900.0),
            serde_json::json!({"adapter": "b-2", "scenario": "demarshal/mixed", "status": "failed",
                "reason": "boom <&> \"quoted\"", "elapsed_s": 0.1}),
            ok("a-1", "demarshal/mixed", None, 7_000.0),
            ok("raw", "baseline/raw-socket/1", None, 60_000.0),
            ok("raw", "baseline/raw-socket/1024", None, 62_000.0),
        ];
        for bus in ["dbus-daemon", "p2p"] {
            for (s, ns) in [
                ("call/void", 140_000.0),
                ("call/echo-bytes/1", 145_000.0),
                ("call/echo-bytes/1024", 150_000.0),
            ] {
                cells.push(ok("a-1", s, Some(bus), ns));
                cells.push(if bus == "p2p" {
                    serde_json::json!({"adapter": "b-2", "scenario": s, "bus": bus, "status": "unsupported",
                        "reason": "no <server> side", "elapsed_s": 0.0})
                } else {
                    ok("b-2", s, Some(bus), ns * 2.0)
                });
            }
        }
        serde_json::from_value(serde_json::json!({
            "format": "dbus-matrix-results", "schema_version": 1,
            "run": {"started_at": "2026-11-23T11:00:00Z", "profile": "smoke", "revision": "abc<d>",
                "tool_version": "0.1.0", "command": ["dbus-matrix", "run"], "complete": false},
            "environment": {"rustc": "rustc 1.95", "cpu_model": "Some CPU", "cpus": 2, "memory_bytes": 8u64 << 30,
                "kernel": "6.1", "os": "Debian", "hostname_hash": "00", "mode": "host",
                "valgrind": "valgrind-3.19.0"},
            "adapters": [
                {"id": "a-1", "library": "a", "version": "1.0.0", "loaded_bytes": 2_500_000,
                    "build": {"seconds": 42.14, "crates_compiled": 12, "jobs": 2}},
                {"id": "b-2", "library": "b", "version": "2.0.0"},
                {"id": "raw", "library": "raw", "version": "0.1.0", "baseline": true}
            ],
            "buses": [{"id": "dbus-daemon", "description": "D-Bus Message Bus Daemon 1.14"},
                {"id": "p2p", "description": "peer to peer: no bus"}],
            "cells": cells
        }))
        .unwrap()
    }

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
