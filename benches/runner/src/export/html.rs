//! One self-contained HTML page: the run and its environment, the matrix
//! tables, log-scale bar charts per scenario (IPC ones grouped by bus: the
//! bus-vs-bus chart) and latency/throughput against message size for
//! `call/echo-bytes/*`. Everything is inline (CSS, SVG drawn here, one line
//! of script): the page loads nothing from the network.

use std::fmt::Write;

use harness::ipc::IpcOp;
use harness::results::{AdapterRecord, Cell, CellStatus, ResultsFile};

use super::table::{self, duration, si, Entry, Group, Notes, Table};

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

/// Powers of ten from the one at or below `min` to the one at or above
/// `max`, at least two (one decade) so that every value has an axis.
pub fn log_ticks(min: f64, max: f64) -> Vec<f64> {
    assert!(min > 0.0 && max >= min, "log ticks of {min}..{max}");
    let lo = (min.log10() + 1e-9).floor() as i32;
    let hi = ((max.log10() - 1e-9).ceil() as i32).max(lo + 1);
    (lo..=hi).map(|k| 10f64.powi(k)).collect()
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

/// Axis label of a time: 1000 -> "1 µs", 1e5 -> "100 µs".
pub fn tick_ns(ns: f64) -> String {
    let (v, unit) = table::scaled_ns(ns);
    format!("{} {unit}", num(v))
}

/// Axis label of a rate given in MB/s (10^6 bytes per second).
fn tick_mb_s(v: f64) -> String {
    if v >= 1e3 {
        format!("{} GB/s", num(v / 1e3))
    } else if v >= 1.0 {
        format!("{} MB/s", num(v))
    } else {
        format!("{} kB/s", num(v * 1e3))
    }
}

/// 1024 -> "1 KiB".
fn size_label(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

/// Per library (Tableau 10, the yellow darkened for lines on white).
const LIBRARY_COLOURS: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#b8a031", "#b07aa1", "#ff9da7", "#9c755f", "#6b6ecf",
];
const BASELINE_COLOUR: &str = "#8c8c8c";
const BUS_COLOURS: [&str; 6] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#8c564b"];

struct Page<'a> {
    r: &'a ResultsFile,
    out: String,
    notes: Notes,
    charts: usize,
}

fn colour_of(r: &ResultsFile, adapter: &str) -> &'static str {
    let libraries: Vec<&AdapterRecord> = r.adapters.iter().filter(|a| !a.baseline).collect();
    match libraries.iter().position(|a| a.id == adapter) {
        Some(i) => LIBRARY_COLOURS[i % LIBRARY_COLOURS.len()],
        None => BASELINE_COLOUR,
    }
}

/// Library and version, or with the adapter id too when another adapter
/// of the run has the same library and version.
fn label_of(r: &ResultsFile, a: &AdapterRecord) -> String {
    let label = table::row_label(a);
    if r.adapters.iter().any(|b| b.id != a.id && table::row_label(b) == label) {
        format!("{label} ({})", a.id)
    } else {
        label
    }
}

fn reason(c: &Cell) -> &str {
    c.reason.as_deref().unwrap_or("no reason recorded")
}

fn ipc_op(scenario: &str) -> Option<IpcOp> {
    harness::scenario::find(scenario).and_then(|s| s.ipc_op())
}

fn summary(scenario: &str) -> String {
    harness::scenario::find(scenario)
        .map(|s| s.summary.clone())
        .unwrap_or_default()
}

const CSS: &str = r#"
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; background: #fff;
  max-width: 1500px; margin: 0 auto; padding: 0 16px 40px; }
h1 { font-size: 1.6em; margin: .8em 0 .2em; }
h1 code, h2 code, h3 code { font-size: .85em; }
h2 { font-size: 1.25em; margin: 1.6em 0 .5em; border-bottom: 1px solid #ddd; padding-bottom: .2em; }
h3 { font-size: 1.05em; margin: 1.2em 0 .4em; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; background: #f4f4f4; padding: 0 3px; border-radius: 3px; }
.meta { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 420px), 1fr)); gap: 0 32px; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: .4em 0; }
dt { color: #666; } dd { margin: 0; overflow-wrap: anywhere; }
.warn { color: #b00; font-weight: 600; }
nav a { margin-right: 12px; }
.scroll { overflow-x: auto; margin-bottom: .6em; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #e2e2e2; padding: 3px 7px; vertical-align: top; }
th { background: #f6f6f6; font-weight: 600; text-align: left; }
td.num, th.lib { text-align: right; white-space: nowrap; }
th.lib small { display: block; font-weight: 400; color: #666; }
td.num small { display: block; color: #666; font-size: 11px; }
td.best { background: #e3f4e1; font-weight: 600; }
td.r2 { background: #f7f7e4; } td.r3 { background: #fbeedd; } td.r4 { background: #f9e0de; }
td.unsupported { color: #777; font-style: italic; text-align: center; background: #fafafa; }
td.failed { color: #b00; font-weight: 600; text-align: center; background: #fdeeee; }
td.none { color: #bbb; text-align: center; }
td.failed a, td.unsupported a { color: inherit; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 560px), 1fr)); gap: 12px 24px; }
figure { margin: 0; min-width: 0; }
figcaption { font-weight: 600; margin: .3em 0; }
figcaption span { font-weight: 400; color: #666; font-size: 12px; }
svg.chart { width: 100%; height: auto; display: block; }
svg.chart text { font-size: 11px; fill: #333; }
svg.chart .tick text { fill: #555; }
svg.chart .grid { stroke: #e6e6e6; } svg.chart .minor { stroke: #f3f3f3; }
svg.chart .axis { stroke: #999; }
svg.chart text.v { paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
svg.chart .na { font-style: italic; fill: #999; }
svg.chart .na.failed { fill: #c00; }
ol.notes li { margin: .2em 0; overflow-wrap: anywhere; }
p.explain { color: #555; max-width: 70em; }
"#;

pub fn render(r: &ResultsFile) -> String {
    render_counted(r).0
}

/// ": <code>bus</code>" after a heading about one table's cells.
fn group_suffix(g: &Group) -> String {
    match g {
        Group::Bus(b) => format!(": <code>{}</code>", esc(b)),
        Group::Floor => ": floor".into(),
        Group::Codec => String::new(),
    }
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
    for t in &tables {
        p.matrix_table(t);
        p.instructions_table(t);
        p.cost_tables(t);
    }
    p.codec_charts(&tables);
    p.ipc_charts();
    p.size_charts();
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
            let _ = writeln!(
                self.out,
                "<dt><code>{}</code></dt><dd>{} {}{}{size}{build}</dd>",
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
        }
    }

    /// Rows are scenarios and columns libraries (the transpose of the
    /// Markdown table: many scenarios, few libraries, fits a screen).
    fn matrix_table(&mut self, t: &Table) {
        let _ = writeln!(self.out, "<h3>{}</h3>", self.table_heading(t));
        self.out
            .push_str("<div class=\"scroll\"><table>\n<thead><tr><th>scenario</th>");
        for row in &t.rows {
            self.lib_header(row.adapter);
        }
        self.out.push_str("</tr></thead>\n<tbody>\n");
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

    fn lib_header(&mut self, a: &AdapterRecord) {
        let mut sub = if a.baseline {
            "baseline".to_string()
        } else {
            a.version.clone()
        };
        if label_of(self.r, a) != table::row_label(a) {
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
        match e.cell.status {
            CellStatus::Ok => {
                let Some(m) = e.cell.measurement.as_ref() else {
                    return "<td class=\"none\">ok?</td>".into();
                };
                let w = &m.wall.median_ns;
                let mut tip = format!(
                    "median {} (95% CI {} – {}), {} samples",
                    duration(w.point),
                    duration(w.lower),
                    duration(w.upper),
                    m.wall.samples
                );
                if let Some(a) = &m.alloc {
                    let _ = write!(
                        tip,
                        "; {} allocations, {} bytes per op",
                        num(a.allocations_per_op),
                        num(a.bytes_per_op)
                    );
                }
                let mut extra = Vec::new();
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
                    let text = if f >= 1.0 { format!("{f:.1}") } else { format!("{f:.2}") };
                    extra.push(format!("{text}× floor"));
                }
                let small = if extra.is_empty() {
                    String::new()
                } else {
                    format!("<small>{}</small>", extra.join(" · "))
                };
                format!(
                    "<td class=\"{class}\" title=\"{}\">{}{small}</td>",
                    esc(&tip),
                    duration(w.point)
                )
            }
            status => {
                let word = table::status_word(status);
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
    fn instructions_table(&mut self, t: &Table) {
        if !table::has_instructions(t) {
            return;
        }
        let _ = writeln!(
            self.out,
            "<h3>Instructions per operation (callgrind){}</h3>",
            group_suffix(&t.group)
        );
        self.out
            .push_str("<div class=\"scroll\"><table>\n<thead><tr><th>scenario</th>");
        for row in &t.rows {
            self.lib_header(row.adapter);
        }
        self.out.push_str("</tr></thead>\n<tbody>\n");
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
    fn cost_tables(&mut self, t: &Table) {
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
            self.out
                .push_str("<div class=\"scroll\"><table class=\"costs\">\n<thead><tr><th>scenario</th>");
            for row in &t.rows {
                self.lib_header(row.adapter);
            }
            self.out.push_str("</tr></thead>\n<tbody>\n");
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

    fn open_chart(&mut self, caption: &str, sub: &str, w: f64, h: f64) {
        self.charts += 1;
        let _ = writeln!(
            self.out,
            "<figure><figcaption>{}{}</figcaption>\n\
             <svg class=\"chart\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{}\">",
            esc(caption),
            if sub.is_empty() {
                String::new()
            } else {
                format!(" <span>{}</span>", esc(sub))
            },
            esc(caption)
        );
    }

    fn close_chart(&mut self) {
        self.out.push_str("</svg></figure>\n");
    }

    /// One bar chart per marshal/demarshal scenario, a bar per library.
    fn codec_charts(&mut self, tables: &[Table]) {
        let Some(t) = tables.iter().find(|t| t.group == Group::Codec) else {
            return;
        };
        self.out
            .push_str("<h2 id=\"codec-charts\">Codec: time per operation</h2>\n");
        self.out.push_str(
            "<p class=\"explain\">Median per operation, log scale: shorter is faster.</p>\n<div class=\"charts\">\n",
        );
        for (i, col) in t.columns.iter().enumerate() {
            let groups: Vec<BarGroup> = t
                .rows
                .iter()
                .map(|row| BarGroup {
                    label: label_of(self.r, row.adapter),
                    bars: vec![Bar {
                        colour: colour_of(self.r, &row.adapter.id),
                        cell: row.cells[i].as_ref().map(|e| e.cell),
                        name: String::new(),
                    }],
                })
                .collect();
            if groups.iter().all(|g| g.bars.iter().all(|b| b.value().is_none())) {
                continue;
            }
            self.bar_chart(col, &summary(col), &groups, &[], None);
        }
        self.out.push_str("</div>\n");
    }

    /// One chart per IPC scenario: a group per library, a bar per bus.
    fn ipc_charts(&mut self) {
        let r = self.r;
        let mut buses: Vec<&str> = Vec::new();
        let mut scenarios: Vec<&str> = Vec::new();
        for c in r.cells.iter().filter(|c| c.bus.is_some()) {
            let b = c.bus.as_deref().unwrap_or_default();
            if !buses.contains(&b) {
                buses.push(b);
            }
            if !scenarios.contains(&c.scenario.as_str()) {
                scenarios.push(&c.scenario);
            }
        }
        if scenarios.is_empty() {
            return;
        }
        self.out
            .push_str("<h2 id=\"ipc-charts\">IPC: time per operation, bus by bus</h2>\n");
        self.out.push_str(
            "<p class=\"explain\">Median per operation, log scale; one colour per bus. The dashed line is the raw-socket \
             floor (no D-Bus) of the same run.</p>\n<div class=\"charts\">\n",
        );
        let legend: Vec<(String, &'static str)> = buses
            .iter()
            .enumerate()
            .map(|(i, b)| (b.to_string(), BUS_COLOURS[i % BUS_COLOURS.len()]))
            .collect();
        for s in scenarios {
            let groups: Vec<BarGroup> = r
                .adapters
                .iter()
                .filter(|a| r.cells.iter().any(|c| c.adapter == a.id && c.bus.is_some()))
                .map(|a| BarGroup {
                    label: label_of(r, a),
                    bars: buses
                        .iter()
                        .enumerate()
                        .map(|(i, b)| Bar {
                            colour: BUS_COLOURS[i % BUS_COLOURS.len()],
                            cell: r
                                .cells
                                .iter()
                                .find(|c| c.adapter == a.id && c.scenario == s && c.bus.as_deref() == Some(*b)),
                            name: b.to_string(),
                        })
                        .collect(),
                })
                .collect();
            if groups.iter().all(|g| g.bars.iter().all(|b| b.value().is_none())) {
                continue;
            }
            let floor = ipc_op(s)
                .and_then(harness::scenario::floor_of)
                .and_then(|f| self.floor_median(&f));
            self.bar_chart(s, &summary(s), &groups, &legend, floor);
        }
        self.out.push_str("</div>\n");
    }

    fn floor_median(&self, scenario: &str) -> Option<f64> {
        let r = self.r;
        r.cells
            .iter()
            .filter(|c| c.bus.is_none() && c.scenario == scenario)
            .filter(|c| r.adapters.iter().any(|a| a.id == c.adapter && a.baseline))
            .find_map(|c| c.median_ns())
    }

    fn bar_chart(
        &mut self,
        caption: &str,
        sub: &str,
        groups: &[BarGroup],
        legend: &[(String, &'static str)],
        floor: Option<f64>,
    ) {
        let per_group = groups.iter().map(|g| g.bars.len()).max().unwrap_or(1);
        let (bar_h, bar_gap, group_gap, font) = if per_group == 1 {
            (14.0, 0.0, 6.0, 11.0)
        } else {
            (10.0, 1.0, 10.0, 9.0)
        };
        let values: Vec<f64> = groups
            .iter()
            .flat_map(|g| g.bars.iter().filter_map(Bar::value))
            .chain(floor)
            .collect();
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(0.0, f64::max);
        let ticks = log_ticks(min, max);
        let longest = groups.iter().map(|g| g.label.chars().count()).max().unwrap_or(0);
        let w = 640.0;
        let x0 = (12.0 + 6.3 * longest as f64).clamp(80.0, 240.0);
        let x1 = w - 64.0;
        let top = if legend.is_empty() { 6.0 } else { 36.0 };
        let group_h = per_group as f64 * (bar_h + bar_gap) - bar_gap;
        let plot_h = groups.len() as f64 * (group_h + group_gap);
        let h = top + plot_h + 26.0;
        let scale = LogScale::new(ticks[0], ticks[ticks.len() - 1], x0, x1);
        self.open_chart(caption, sub, w, h);
        let mut s = String::new();
        // Legend.
        let mut lx = x0;
        for (name, colour) in legend {
            let _ = write!(
                s,
                "<rect x=\"{lx:.1}\" y=\"6\" width=\"11\" height=\"11\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"15.5\">{}</text>",
                lx + 15.0,
                esc(name)
            );
            lx += 15.0 + 7.0 * name.chars().count() as f64 + 16.0;
        }
        x_axis(&mut s, &scale, &ticks, top, top + plot_h, tick_ns);
        // Under the bars, so that their value labels stay readable.
        if let Some(f) = floor {
            let x = scale.at(f);
            let _ = write!(
                s,
                "<g><title>raw-socket floor: {}</title><line x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#444\" stroke-width=\"1.2\" stroke-dasharray=\"4 3\"/>\
                 <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" style=\"font-size:9px\">floor {}</text></g>",
                duration(f),
                top + plot_h,
                top - 3.0,
                duration(f)
            );
        }
        for (gi, g) in groups.iter().enumerate() {
            let gy = top + gi as f64 * (group_h + group_gap) + group_gap / 2.0;
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" dominant-baseline=\"central\">{}</text>",
                x0 - 6.0,
                gy + group_h / 2.0,
                esc(&g.label)
            );
            for (bi, b) in g.bars.iter().enumerate() {
                let y = gy + bi as f64 * (bar_h + bar_gap);
                let who = if b.name.is_empty() {
                    g.label.clone()
                } else {
                    format!("{} on {}", g.label, b.name)
                };
                match (b.value(), b.cell) {
                    (Some(v), _) => {
                        let xe = scale.at(v).max(x0 + 1.0);
                        let _ = write!(
                            s,
                            "<g><title>{}: {}</title><rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{bar_h}\" fill=\"{}\"/>\
                             <text class=\"v\" x=\"{:.1}\" y=\"{:.1}\" dominant-baseline=\"central\" style=\"font-size:{font}px\">{}</text></g>",
                            esc(&who),
                            duration(v),
                            xe - x0,
                            b.colour,
                            xe + 4.0,
                            y + bar_h / 2.0,
                            duration(v)
                        );
                    }
                    (None, Some(c)) => {
                        let word = table::status_word(c.status);
                        let _ = write!(
                            s,
                            "<g><title>{}: {word}: {}</title><rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"3\" height=\"{bar_h}\" fill=\"{}\"/>\
                             <text class=\"na {word}\" x=\"{:.1}\" y=\"{:.1}\" dominant-baseline=\"central\" style=\"font-size:{font}px\">{word}</text></g>",
                            esc(&who),
                            esc(reason(c)),
                            b.colour,
                            x0 + 7.0,
                            y + bar_h / 2.0
                        );
                    }
                    (None, None) => {}
                }
            }
        }
        self.out.push_str(&s);
        self.close_chart();
    }

    /// Latency and throughput against message size for `call/echo-bytes/*`,
    /// one chart each per bus, with the raw-socket floor dashed.
    fn size_charts(&mut self) {
        let r = self.r;
        let echo: Vec<(&Cell, usize)> = r
            .cells
            .iter()
            .filter_map(|c| match ipc_op(&c.scenario) {
                Some(IpcOp::EchoBytes(n)) if c.bus.is_some() => Some((c, n)),
                _ => None,
            })
            .collect();
        let floor: Vec<(usize, f64, u64)> = {
            let mut f: Vec<(usize, f64, u64)> = r
                .cells
                .iter()
                .filter(|c| r.adapters.iter().any(|a| a.id == c.adapter && a.baseline))
                .filter_map(|c| match (ipc_op(&c.scenario), c.measurement.as_ref()) {
                    (Some(IpcOp::RawSocket(n)), Some(m)) if c.status == CellStatus::Ok => {
                        Some((n, m.wall.median_ns.point, m.throughput_bytes))
                    }
                    _ => None,
                })
                .collect();
            f.sort_by_key(|p| p.0);
            f
        };
        let mut buses: Vec<&str> = Vec::new();
        for (c, _) in &echo {
            let b = c.bus.as_deref().unwrap_or_default();
            if c.status == CellStatus::Ok && !buses.contains(&b) {
                buses.push(b);
            }
        }
        if buses.is_empty() {
            return;
        }
        self.out
            .push_str("<h2 id=\"size-charts\">Message size: <code>call/echo-bytes</code></h2>\n");
        self.out.push_str(
            "<p class=\"explain\">A method call whose reply echoes an array of bytes of the given size, against the \
             raw-socket floor (the same bytes written and echoed back over a Unix socket pair, dashed). Log-log; \
             throughput is payload bytes per second of one round trip.</p>\n<div class=\"charts\">\n",
        );
        for bus in buses {
            let mut lines: Vec<Line> = Vec::new();
            for a in r.adapters.iter().filter(|a| !a.baseline) {
                let mut pts: Vec<(usize, f64, u64)> = echo
                    .iter()
                    .filter(|(c, _)| c.adapter == a.id && c.bus.as_deref() == Some(bus) && c.status == CellStatus::Ok)
                    .filter_map(|(c, n)| {
                        c.measurement
                            .as_ref()
                            .map(|m| (*n, m.wall.median_ns.point, m.throughput_bytes))
                    })
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                pts.sort_by_key(|p| p.0);
                lines.push(Line {
                    label: label_of(r, a),
                    colour: colour_of(r, &a.id),
                    dashed: false,
                    points: pts,
                });
            }
            if !floor.is_empty() {
                lines.push(Line {
                    label: "raw socket floor".into(),
                    colour: "#444",
                    dashed: true,
                    points: floor.clone(),
                });
            }
            let daemon = r
                .buses
                .iter()
                .find(|b| b.id == bus)
                .map(|b| b.description.clone())
                .unwrap_or_default();
            self.line_chart(&format!("latency on {bus}"), &daemon, &lines, Metric::Latency);
            self.line_chart(&format!("throughput on {bus}"), &daemon, &lines, Metric::Throughput);
        }
        self.out.push_str("</div>\n");
    }

    fn line_chart(&mut self, caption: &str, sub: &str, lines: &[Line], metric: Metric) {
        let y_of = |&(n, ns, bytes): &(usize, f64, u64)| match metric {
            Metric::Latency => ns,
            // MB/s: bytes per ns is GB/s.
            Metric::Throughput => (if bytes > 0 { bytes as f64 } else { n as f64 }) / ns * 1e3,
        };
        let ys: Vec<f64> = lines
            .iter()
            .flat_map(|l| l.points.iter().map(y_of))
            .filter(|y| *y > 0.0 && y.is_finite())
            .collect();
        let mut sizes: Vec<usize> = lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).collect();
        sizes.sort();
        sizes.dedup();
        if ys.is_empty() || sizes.is_empty() {
            return;
        }
        let yticks = log_ticks(
            ys.iter().copied().fold(f64::INFINITY, f64::min),
            ys.iter().copied().fold(0.0, f64::max),
        );
        // The legend goes below the plot, three entries a row.
        let legend_rows = lines.len().div_ceil(3);
        let w = 640.0;
        let plot_bottom = 290.0;
        let h = plot_bottom + 40.0 + 17.0 * legend_rows as f64;
        let (px0, px1, py0, py1) = (66.0, w - 16.0, plot_bottom, 10.0);
        let smin = (sizes[0].max(1) as f64).log10() - 0.15;
        let smax = (sizes[sizes.len() - 1].max(1) as f64).log10() + 0.15;
        let x_at = |n: usize| px0 + ((n.max(1) as f64).log10() - smin) / (smax - smin) * (px1 - px0);
        let ys_scale = LogScale::new(yticks[0], yticks[yticks.len() - 1], py0, py1);
        let ylabel: fn(f64) -> String = match metric {
            Metric::Latency => tick_ns,
            Metric::Throughput => tick_mb_s,
        };
        self.open_chart(caption, sub, w, h);
        let mut s = String::new();
        for &t in &yticks[..yticks.len() - 1] {
            for m in 2..10 {
                let y = ys_scale.at(t * m as f64);
                let _ = write!(
                    s,
                    "<line class=\"minor\" x1=\"{px0}\" y1=\"{y:.1}\" x2=\"{px1}\" y2=\"{y:.1}\"/>"
                );
            }
        }
        for &t in &yticks {
            let y = ys_scale.at(t);
            let _ = write!(
                s,
                "<g class=\"tick\"><line class=\"grid\" x1=\"{px0}\" y1=\"{y:.1}\" x2=\"{px1}\" y2=\"{y:.1}\"/>\
                 <text x=\"{:.1}\" y=\"{y:.1}\" text-anchor=\"end\" dominant-baseline=\"central\">{}</text></g>",
                px0 - 6.0,
                esc(&ylabel(t))
            );
        }
        // A size's label is left out when it would run into the previous one.
        let mut last_label_end = f64::NEG_INFINITY;
        for &n in &sizes {
            let x = x_at(n);
            let label = size_label(n);
            let half = 3.4 * label.chars().count() as f64;
            let text = if x - half > last_label_end + 4.0 {
                last_label_end = x + half;
                format!(
                    "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>",
                    py0 + 15.0
                )
            } else {
                String::new()
            };
            let _ = write!(
                s,
                "<g class=\"tick\"><line class=\"grid\" x1=\"{x:.1}\" y1=\"{py1}\" x2=\"{x:.1}\" y2=\"{py0}\"/>{text}</g>"
            );
        }
        let _ = write!(
            s,
            "<line class=\"axis\" x1=\"{px0}\" y1=\"{py0}\" x2=\"{px1}\" y2=\"{py0}\"/>\
             <line class=\"axis\" x1=\"{px0}\" y1=\"{py0}\" x2=\"{px0}\" y2=\"{py1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" style=\"font-size:10px\">message size</text>",
            (px0 + px1) / 2.0,
            py0 + 30.0
        );
        for (li, l) in lines.iter().enumerate() {
            let pts: Vec<String> = l
                .points
                .iter()
                .map(|p| format!("{:.1},{:.1}", x_at(p.0), ys_scale.at(y_of(p))))
                .collect();
            let dash = if l.dashed { " stroke-dasharray=\"6 4\"" } else { "" };
            let _ = write!(
                s,
                "<g><title>{}</title><polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{dash}/>",
                esc(&l.label),
                pts.join(" "),
                l.colour,
                if l.dashed { 1.5 } else { 2.0 }
            );
            for p in &l.points {
                let v = y_of(p);
                let _ = write!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{}\" fill=\"{}\"><title>{}, {}: {}</title></circle>",
                    x_at(p.0),
                    ys_scale.at(v),
                    if l.dashed { 2.0 } else { 2.8 },
                    l.colour,
                    esc(&l.label),
                    size_label(p.0),
                    ylabel(v)
                );
            }
            s.push_str("</g>");
            // Legend, below the plot.
            let ly = py0 + 48.0 + (li / 3) as f64 * 17.0;
            let lx = px0 + (li % 3) as f64 * 190.0;
            let mut label = l.label.clone();
            if label.chars().count() > 26 {
                label = label.chars().take(25).collect::<String>() + "…";
            }
            let _ = write!(
                s,
                "<line x1=\"{lx:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{}\" stroke-width=\"2\"{dash}/>\
                 <text x=\"{:.1}\" y=\"{ly:.1}\" dominant-baseline=\"central\"><title>{}</title>{}</text>",
                lx + 18.0,
                l.colour,
                lx + 23.0,
                esc(&l.label),
                esc(&label)
            );
        }
        self.out.push_str(&s);
        self.close_chart();
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

/// Grid lines, the axis line and labelled ticks of a horizontal log axis.
fn x_axis(s: &mut String, scale: &LogScale, ticks: &[f64], y0: f64, y1: f64, label: fn(f64) -> String) {
    for &t in &ticks[..ticks.len() - 1] {
        for m in 2..10 {
            let x = scale.at(t * m as f64);
            let _ = write!(
                s,
                "<line class=\"minor\" x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{y1:.1}\"/>"
            );
        }
    }
    for &t in ticks {
        let x = scale.at(t);
        let _ = write!(
            s,
            "<g class=\"tick\"><line class=\"grid\" x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{y1:.1}\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text></g>",
            y1 + 15.0,
            esc(&label(t))
        );
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{:.1}\" y1=\"{y1:.1}\" x2=\"{:.1}\" y2=\"{y1:.1}\"/>",
        scale.a, scale.b
    );
}

#[derive(Clone, Copy)]
enum Metric {
    Latency,
    Throughput,
}

struct Bar<'a> {
    colour: &'static str,
    cell: Option<&'a Cell>,
    /// The bus, in grouped charts.
    name: String,
}

impl Bar<'_> {
    fn value(&self) -> Option<f64> {
        self.cell
            .filter(|c| c.status == CellStatus::Ok)
            .and_then(|c| c.median_ns())
            .filter(|v| *v > 0.0 && v.is_finite())
    }
}

struct BarGroup<'a> {
    label: String,
    bars: Vec<Bar<'a>>,
}

struct Line {
    label: String,
    colour: &'static str,
    dashed: bool,
    /// (size, median ns, throughput bytes).
    points: Vec<(usize, f64, u64)>,
}

/// Maps `lo..=hi` (values, log scale) onto pixels `a..=b`.
struct LogScale {
    lo: f64,
    hi: f64,
    a: f64,
    b: f64,
}

impl LogScale {
    fn new(lo: f64, hi: f64, a: f64, b: f64) -> LogScale {
        LogScale {
            lo: lo.log10(),
            hi: hi.log10(),
            a,
            b,
        }
    }

    fn at(&self, v: f64) -> f64 {
        self.a + (v.log10() - self.lo) / (self.hi - self.lo) * (self.b - self.a)
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

    #[test]
    fn ticks() {
        assert_eq!(log_ticks(1500.0, 2.3e6), vec![1e3, 1e4, 1e5, 1e6, 1e7]);
        assert_eq!(log_ticks(1000.0, 1000.0), vec![1e3, 1e4]);
        assert_eq!(log_ticks(1000.0, 1e5), vec![1e3, 1e4, 1e5]);
        assert_eq!(log_ticks(0.02, 0.5), vec![0.01, 0.1, 1.0]);
        let labels: Vec<String> = log_ticks(150.0, 2e9).into_iter().map(tick_ns).collect();
        assert_eq!(
            labels,
            ["100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s"]
        );
        assert_eq!(tick_mb_s(0.01), "10 kB/s");
        assert_eq!(tick_mb_s(1000.0), "1 GB/s");
        assert_eq!(size_label(1_048_576), "1 MiB");
        assert_eq!(size_label(64), "64 B");
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
        r.cells[0].measurement.as_mut().unwrap().instructions_per_op = Some(12_345.0);
        let html = render(&r);
        assert!(html.contains("Instructions per operation"));
        assert!(html.contains("12.3 k"));
    }
}
