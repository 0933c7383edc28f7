//! Which charts the page shows and the data behind them: a bar chart per
//! codec scenario, a bus-by-bus bar chart per IPC scenario, latency and
//! throughput against message size. The drawing is `svg`'s.

use harness::ipc::IpcOp;
use harness::results::{AdapterRecord, Cell, CellStatus, ResultsFile};

use super::svg::{bar_chart, line_chart, Bar, BarGroup, BarValue, Line, Metric};
use super::{ipc_op, reason, summary, Page};
use crate::export::model::table::{self, Group};

/// Per library (Tableau 10, the yellow darkened for lines on white).
const LIBRARY_COLOURS: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#b8a031", "#b07aa1", "#ff9da7", "#9c755f", "#6b6ecf",
];
const BASELINE_COLOUR: &str = "#8c8c8c";
const BUS_COLOURS: [&str; 6] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#8c564b"];

/// A cell as a bar: its median when ok, else its status and reason.
fn bar_value(cell: Option<&Cell>) -> BarValue<'_> {
    match cell {
        None => BarValue::Absent,
        Some(c) => match c.median_ns().filter(|v| *v > 0.0 && v.is_finite()) {
            Some(v) => BarValue::Time(v),
            None => BarValue::NotMeasured {
                status: table::status_word(c.status()),
                reason: reason(c),
            },
        },
    }
}

fn colour_of(r: &ResultsFile, adapter: &str) -> &'static str {
    let libraries: Vec<&AdapterRecord> = r.adapters.iter().filter(|a| !a.baseline).collect();
    match libraries.iter().position(|a| a.id == adapter) {
        Some(i) => LIBRARY_COLOURS[i % LIBRARY_COLOURS.len()],
        None => BASELINE_COLOUR,
    }
}

impl Page<'_> {
    /// One bar chart per marshal/demarshal scenario, a bar per library.
    pub(super) fn codec_charts(&mut self) {
        let report = self.report;
        let Some(t) = report.tables.iter().find(|t| t.table.group == Group::Codec) else {
            return;
        };
        self.out
            .push_str("<h2 id=\"codec-charts\">Codec: time per operation</h2>\n");
        self.out.push_str(
            "<p class=\"explain\">Median per operation, log scale: shorter is faster.</p>\n<div class=\"charts\">\n",
        );
        for (i, col) in t.table.columns.iter().enumerate() {
            let groups: Vec<BarGroup> = t
                .table
                .rows
                .iter()
                .zip(&t.labels)
                .map(|(row, label)| BarGroup {
                    label: label.clone(),
                    bars: vec![Bar {
                        colour: colour_of(self.r, &row.adapter.id),
                        value: bar_value(row.cells[i].as_ref().map(|e| e.cell)),
                        name: String::new(),
                    }],
                })
                .collect();
            if groups.iter().all(|g| g.bars.iter().all(|b| b.time().is_none())) {
                continue;
            }
            let chart = bar_chart(col, &summary(col), &groups, &[], None);
            self.push_chart(chart);
        }
        self.out.push_str("</div>\n");
    }

    /// One chart per IPC scenario: a group per library, a bar per bus.
    pub(super) fn ipc_charts(&mut self) {
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
                    label: self.report.label(&a.id).to_string(),
                    bars: buses
                        .iter()
                        .enumerate()
                        .map(|(i, b)| Bar {
                            colour: BUS_COLOURS[i % BUS_COLOURS.len()],
                            value: bar_value(r.cells.iter().find(|c| {
                                c.adapter == a.id && c.scenario == s && c.bus.as_deref() == Some(*b) && c.role.is_same()
                            })),
                            name: b.to_string(),
                        })
                        .collect(),
                })
                .collect();
            if groups.iter().all(|g| g.bars.iter().all(|b| b.time().is_none())) {
                continue;
            }
            let floor = ipc_op(s)
                .and_then(harness::scenario::floor_of)
                .and_then(|f| self.floor_median(&f));
            let chart = bar_chart(s, &summary(s), &groups, &legend, floor);
            self.push_chart(chart);
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

    /// Latency and throughput against message size for `call/echo-bytes/*`,
    /// one chart each per bus, with the raw-socket floor dashed.
    pub(super) fn size_charts(&mut self) {
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
                .filter_map(|c| match (ipc_op(&c.scenario), c.measurement()) {
                    (Some(IpcOp::RawSocket(n)), Some(m)) => Some((n, m.wall.median_ns.point, m.throughput_bytes)),
                    _ => None,
                })
                .collect();
            f.sort_by_key(|p| p.0);
            f
        };
        let mut buses: Vec<&str> = Vec::new();
        for (c, _) in &echo {
            let b = c.bus.as_deref().unwrap_or_default();
            if c.status() == CellStatus::Ok && !buses.contains(&b) {
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
                    .filter(|(c, _)| c.adapter == a.id && c.bus.as_deref() == Some(bus) && c.role.is_same())
                    .filter_map(|(c, n)| {
                        c.measurement()
                            .map(|m| (*n, m.wall.median_ns.point, m.throughput_bytes))
                    })
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                pts.sort_by_key(|p| p.0);
                lines.push(Line {
                    label: self.report.label(&a.id).to_string(),
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
            for (what, metric) in [("latency", Metric::Latency), ("throughput", Metric::Throughput)] {
                if let Some(chart) = line_chart(&format!("{what} on {bus}"), &daemon, &lines, metric) {
                    self.push_chart(chart);
                }
            }
        }
        self.out.push_str("</div>\n");
    }
}
