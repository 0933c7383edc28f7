//! The page's charts: the data of `model::charts` (a bar chart per codec
//! scenario, a bus-by-bus bar chart per IPC scenario, latency and throughput
//! against message size) given colours and sections. The drawing is `svg`'s.

use harness::results::{AdapterRecord, ResultsFile};

use super::svg::{bar_chart, line_chart, Bar, BarGroup, BarValue, Line, Metric};
use super::Page;
use crate::export::model::charts::{self, Bars};

/// Per library (Tableau 10, the yellow darkened for lines on white).
const LIBRARY_COLOURS: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#b8a031", "#b07aa1", "#ff9da7", "#9c755f", "#6b6ecf",
];
const BASELINE_COLOUR: &str = "#8c8c8c";
const BUS_COLOURS: [&str; 6] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#8c564b"];

fn bar_value<'a>(v: &charts::Value<'a>) -> BarValue<'a> {
    match *v {
        charts::Value::Time(t) => BarValue::Time(t),
        charts::Value::NotMeasured { status, reason } => BarValue::NotMeasured { status, reason },
        charts::Value::Absent => BarValue::Absent,
    }
}

fn colour_of(r: &ResultsFile, adapter: &str) -> &'static str {
    let libraries: Vec<&AdapterRecord> = r.adapters.iter().filter(|a| !a.baseline).collect();
    match libraries.iter().position(|a| a.id == adapter) {
        Some(i) => LIBRARY_COLOURS[i % LIBRARY_COLOURS.len()],
        None => BASELINE_COLOUR,
    }
}

/// The bar groups of `b`: a colour per library for codec charts, per bus else.
fn groups<'a>(r: &ResultsFile, b: &Bars<'a>, buses: Option<&[String]>) -> Vec<BarGroup<'a>> {
    b.groups
        .iter()
        .map(|g| BarGroup {
            label: g.label.clone(),
            bars: match buses {
                None => g
                    .values
                    .iter()
                    .map(|v| Bar {
                        colour: colour_of(r, g.adapter),
                        value: bar_value(v),
                        name: String::new(),
                    })
                    .collect(),
                Some(buses) => g
                    .values
                    .iter()
                    .zip(buses)
                    .enumerate()
                    .map(|(i, (v, bus))| Bar {
                        colour: BUS_COLOURS[i % BUS_COLOURS.len()],
                        value: bar_value(v),
                        name: bus.clone(),
                    })
                    .collect(),
            },
        })
        .collect()
}

impl Page<'_> {
    /// One bar chart per marshal/demarshal scenario, a bar per library.
    pub(super) fn codec_charts(&mut self) {
        let report = self.report;
        let Some(codec) = &report.charts.codec else {
            return;
        };
        self.out
            .push_str("<h2 id=\"codec-charts\">Codec: time per operation</h2>\n");
        self.out.push_str(
            "<p class=\"explain\">Median per operation, log scale: shorter is faster.</p>\n<div class=\"charts\">\n",
        );
        for b in codec {
            let chart = bar_chart(&b.scenario, &b.summary, &groups(self.r, b, None), &[], None);
            self.push_chart(chart);
        }
        self.out.push_str("</div>\n");
    }

    /// One chart per IPC scenario: a group per library, a bar per bus.
    pub(super) fn ipc_charts(&mut self) {
        let report = self.report;
        let Some(ipc) = &report.charts.ipc else {
            return;
        };
        self.out
            .push_str("<h2 id=\"ipc-charts\">IPC: time per operation, bus by bus</h2>\n");
        self.out.push_str(
            "<p class=\"explain\">Median per operation, log scale; one colour per bus. The dashed line is the raw-socket \
             floor (no D-Bus) of the same run.</p>\n<div class=\"charts\">\n",
        );
        let legend: Vec<(String, &'static str)> = ipc
            .buses
            .iter()
            .enumerate()
            .map(|(i, b)| (b.clone(), BUS_COLOURS[i % BUS_COLOURS.len()]))
            .collect();
        for b in &ipc.charts {
            let chart = bar_chart(
                &b.scenario,
                &b.summary,
                &groups(self.r, b, Some(&ipc.buses)),
                &legend,
                b.floor,
            );
            self.push_chart(chart);
        }
        self.out.push_str("</div>\n");
    }

    /// Latency and throughput against message size for `call/echo-bytes/*`,
    /// one chart each per bus, with the raw-socket floor dashed.
    pub(super) fn size_charts(&mut self) {
        let report = self.report;
        if report.charts.size.is_empty() {
            return;
        }
        self.out
            .push_str("<h2 id=\"size-charts\">Message size: <code>call/echo-bytes</code></h2>\n");
        self.out.push_str(
            "<p class=\"explain\">A method call whose reply echoes an array of bytes of the given size, against the \
             raw-socket floor (the same bytes written and echoed back over a Unix socket pair, dashed). Log-log; \
             throughput is payload bytes per second of one round trip.</p>\n<div class=\"charts\">\n",
        );
        for s in &report.charts.size {
            let lines: Vec<Line> = s
                .lines
                .iter()
                .map(|l| Line {
                    label: l.label.clone(),
                    colour: l.adapter.as_deref().map_or("#444", |a| colour_of(self.r, a)),
                    dashed: l.adapter.is_none(),
                    points: l.points.clone(),
                })
                .collect();
            for (what, metric) in [("latency", Metric::Latency), ("throughput", Metric::Throughput)] {
                if let Some(chart) = line_chart(&format!("{what} on {}", s.bus), &s.daemon, &lines, metric) {
                    self.push_chart(chart);
                }
            }
        }
        self.out.push_str("</div>\n");
    }
}
