//! What the HTML page charts, as data: a bar chart per codec scenario (a bar
//! per library), a bus-by-bus bar chart per IPC scenario with the raw-socket
//! floor, and latency/throughput against message size for
//! `call/echo-bytes/*` per bus. A section of `report::Report`; colours and
//! drawing are the page's (`export/html/charts.rs`, `export/html/svg/`).

use harness::ipc::IpcOp;
use harness::results::{Cell, CellStatus, ResultsFile};

use super::table::{self, Table};

/// A cell as a bar.
pub enum Value<'a> {
    /// The median per operation in ns (positive and finite).
    Time(f64),
    /// A cell that ran without a time: its status word and reason.
    NotMeasured { status: &'static str, reason: &'a str },
    /// No such cell.
    Absent,
}

/// One bar chart: a group per library, a bar per bus (one bar for codec charts).
pub struct Bars<'a> {
    pub scenario: String,
    pub summary: String,
    pub groups: Vec<BarGroup<'a>>,
    /// The raw-socket floor's median for this scenario, when the run has one.
    pub floor: Option<f64>,
}

pub struct BarGroup<'a> {
    pub label: String,
    pub adapter: &'a str,
    pub values: Vec<Value<'a>>,
}

/// The bus-by-bus charts: the buses (the bars of each group, in order) and a
/// chart per IPC scenario with some time.
pub struct IpcCharts<'a> {
    pub buses: Vec<String>,
    pub charts: Vec<Bars<'a>>,
}

/// Latency and throughput against message size on one bus.
pub struct SizeCharts {
    pub bus: String,
    /// The bus daemon's description ("" when the file has none).
    pub daemon: String,
    /// A line per library with points, then the floor's (`adapter` None) when measured.
    pub lines: Vec<SizeLine>,
}

pub struct SizeLine {
    pub label: String,
    /// `None` for the raw-socket floor.
    pub adapter: Option<String>,
    /// (size, median ns, throughput bytes), by size.
    pub points: Vec<(usize, f64, u64)>,
}

pub struct Charts<'a> {
    /// `None` without a codec table; else its charts with some time.
    pub codec: Option<Vec<Bars<'a>>>,
    /// `None` without IPC cells.
    pub ipc: Option<IpcCharts<'a>>,
    /// One per bus with an ok `call/echo-bytes` cell.
    pub size: Vec<SizeCharts>,
}

fn value(cell: Option<&Cell>) -> Value<'_> {
    match cell {
        None => Value::Absent,
        Some(c) => match c.median_ns().filter(|v| *v > 0.0 && v.is_finite()) {
            Some(v) => Value::Time(v),
            None => Value::NotMeasured {
                status: table::status_word(c.status()),
                reason: c.reason().unwrap_or("no reason recorded"),
            },
        },
    }
}

fn has_time(groups: &[BarGroup]) -> bool {
    groups
        .iter()
        .any(|g| g.values.iter().any(|v| matches!(v, Value::Time(_))))
}

fn ipc_op(scenario: &str) -> Option<IpcOp> {
    harness::scenario::find(scenario).and_then(|s| s.ipc_op())
}

fn summary(scenario: &str) -> String {
    harness::scenario::find(scenario)
        .map(|s| s.summary.clone())
        .unwrap_or_default()
}

/// The charts of `r`; `codec` is the codec table with its row labels, when the run has one.
pub fn of<'a>(r: &'a ResultsFile, codec: Option<(&Table<'a>, &[String])>) -> Charts<'a> {
    let codec = codec.map(|(t, labels)| {
        t.columns
            .iter()
            .enumerate()
            .map(|(i, col)| Bars {
                scenario: col.clone(),
                summary: summary(col),
                groups: t
                    .rows
                    .iter()
                    .zip(labels)
                    .map(|(row, label)| BarGroup {
                        label: label.clone(),
                        adapter: row.adapter.id.as_str(),
                        values: vec![value(row.cells[i].as_ref().map(|e| e.cell))],
                    })
                    .collect(),
                floor: None,
            })
            .filter(|b| has_time(&b.groups))
            .collect()
    });
    Charts {
        codec,
        ipc: ipc(r),
        size: size(r),
    }
}

fn ipc(r: &ResultsFile) -> Option<IpcCharts<'_>> {
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
        return None;
    }
    let charts = scenarios
        .into_iter()
        .map(|s| Bars {
            scenario: s.to_string(),
            summary: summary(s),
            groups: r
                .adapters
                .iter()
                .filter(|a| r.cells.iter().any(|c| c.adapter == a.id && c.bus.is_some()))
                .map(|a| BarGroup {
                    label: table::label(r, a),
                    adapter: &a.id,
                    values: buses
                        .iter()
                        .map(|b| {
                            value(r.cells.iter().find(|c| {
                                c.adapter == a.id && c.scenario == s && c.bus.as_deref() == Some(*b) && c.role.is_same()
                            }))
                        })
                        .collect(),
                })
                .collect(),
            floor: ipc_op(s)
                .and_then(harness::scenario::floor_of)
                .and_then(|f| floor_median(r, &f)),
        })
        .filter(|b| has_time(&b.groups))
        .collect();
    Some(IpcCharts {
        buses: buses.iter().map(|b| b.to_string()).collect(),
        charts,
    })
}

fn floor_median(r: &ResultsFile, scenario: &str) -> Option<f64> {
    r.cells
        .iter()
        .filter(|c| c.bus.is_none() && c.scenario == scenario)
        .filter(|c| r.adapters.iter().any(|a| a.id == c.adapter && a.baseline))
        .find_map(|c| c.median_ns())
}

fn size(r: &ResultsFile) -> Vec<SizeCharts> {
    let echo: Vec<(&Cell, usize)> = r
        .cells
        .iter()
        .filter_map(|c| match ipc_op(&c.scenario) {
            Some(IpcOp::EchoBytes(n)) if c.bus.is_some() => Some((c, n)),
            _ => None,
        })
        .collect();
    let mut floor: Vec<(usize, f64, u64)> = r
        .cells
        .iter()
        .filter(|c| r.adapters.iter().any(|a| a.id == c.adapter && a.baseline))
        .filter_map(|c| match (ipc_op(&c.scenario), c.measurement()) {
            (Some(IpcOp::RawSocket(n)), Some(m)) => Some((n, m.wall.median_ns.point, m.throughput_bytes)),
            _ => None,
        })
        .collect();
    floor.sort_by_key(|p| p.0);
    let mut buses: Vec<&str> = Vec::new();
    for (c, _) in &echo {
        let b = c.bus.as_deref().unwrap_or_default();
        if c.status() == CellStatus::Ok && !buses.contains(&b) {
            buses.push(b);
        }
    }
    buses
        .into_iter()
        .map(|bus| {
            let mut lines: Vec<SizeLine> = Vec::new();
            for a in r.adapters.iter().filter(|a| !a.baseline) {
                let mut points: Vec<(usize, f64, u64)> = echo
                    .iter()
                    .filter(|(c, _)| c.adapter == a.id && c.bus.as_deref() == Some(bus) && c.role.is_same())
                    .filter_map(|(c, n)| {
                        c.measurement()
                            .map(|m| (*n, m.wall.median_ns.point, m.throughput_bytes))
                    })
                    .collect();
                if points.is_empty() {
                    continue;
                }
                points.sort_by_key(|p| p.0);
                lines.push(SizeLine {
                    label: table::label(r, a),
                    adapter: Some(a.id.clone()),
                    points,
                });
            }
            if !floor.is_empty() {
                lines.push(SizeLine {
                    label: "raw socket floor".into(),
                    adapter: None,
                    points: floor.clone(),
                });
            }
            SizeCharts {
                bus: bus.to_string(),
                daemon: r
                    .buses
                    .iter()
                    .find(|b| b.id == bus)
                    .map(|b| b.description.clone())
                    .unwrap_or_default(),
                lines,
            }
        })
        .collect()
}
