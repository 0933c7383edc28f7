//! The report, built once from a [`ResultsFile`]: every table with its
//! group, heading facts, placement line and role note, the row labels, each
//! cell's display values and the texts of its notes, the instruction and
//! cost tables, the bus-vs-bus tables, the idle-connections and interop
//! sections, and the data of the page's charts. The formats for people
//! (Markdown, HTML) print this value and ask [`table`] nothing; only the
//! numbering of notes is theirs, since each walks the cells in its own
//! order (Markdown row by row, HTML column by column).

use harness::results::{AdapterRecord, CellStatus, Outcome, ResultsFile};

use super::table::{self, duration, si, Group, Table};
use super::{bus_memory, charts, connection_memory, idle_cost, interop, section, width};

pub struct Report<'a> {
    /// One per adapter of the file, in its order.
    pub adapters: Vec<Adapter<'a>>,
    pub tables: Vec<ReportTable<'a>>,
    /// For each library with IPC results on two buses or more.
    pub bus_vs_bus: Vec<BusVsBus>,
    /// The width legend (`width::legend`).
    pub legend: Option<String>,
    /// The idle-connections section: a text per `connection_memory::HEAD` column, per ok cell.
    pub idle_connections: Vec<[String; 8]>,
    /// Plain sections (issue 31: idle costs, bus daemon memory), each present only with its cells.
    pub sections: Vec<section::Section>,
    /// The interop table (`dbus-matrix interop --into`), when the file has one.
    pub interop: Option<interop::View>,
    /// What the HTML page charts.
    pub charts: charts::Charts<'a>,
}

pub struct Adapter<'a> {
    pub record: &'a AdapterRecord,
    /// `table::label`: with the id when another adapter has the same library and version.
    pub label: String,
    /// The label says the id too (`label` differs from `table::row_label`).
    pub with_id: bool,
    /// `table::build_time`, when the file has build figures.
    pub build: Option<String>,
}

pub struct ReportTable<'a> {
    pub table: Table<'a>,
    /// The bus daemon's description, for bus and role tables.
    pub bus_description: Option<&'a str>,
    /// What a client- or server-role table measured (`table::role_note`).
    pub role_note: Option<String>,
    /// `table::placement_line`.
    pub placement: Option<String>,
    /// Row labels, by row index.
    pub labels: Vec<String>,
    /// Display values by row, then column.
    pub cells: Vec<Vec<Option<CellView>>>,
    /// Instructions per operation by row, then column; `None` when no cell has them.
    pub instructions: Option<Vec<Vec<Option<Instructions>>>>,
    /// One per cost figure some cell of the table has.
    pub costs: Vec<CostTable>,
}

pub enum CellView {
    Timed(Timed),
    /// Unsupported or failed.
    NotRun {
        /// `unsupported`, `failed`.
        word: &'static str,
        reason: String,
        /// The note's text: "adapter word: reason".
        note: String,
    },
}

/// What a timed cell shows.
pub struct Timed {
    /// The median as a duration.
    pub median: String,
    /// The 95% interval's bounds as durations.
    pub lower: String,
    pub upper: String,
    /// `width::percent` of the relative width, when there is one.
    pub width: Option<String>,
    pub above_target: bool,
    pub rounds: usize,
    /// "5 rounds" when worth printing (`width::rounds_text`).
    pub rounds_text: Option<String>,
    /// Ratio to the fastest library in the column.
    pub ratio: Option<f64>,
    pub calls_per_second: Option<String>,
    pub floor: Option<Floor>,
    /// The note of a cut cell.
    pub cut_note: Option<String>,
}

/// The ratio to the raw-socket floor.
pub struct Floor {
    /// "1.2× floor", or two digits below 1: "0.85× floor".
    pub text: String,
    /// Why a cell is below the floor: the note it carries.
    pub below_note: Option<String>,
}

pub struct Instructions {
    /// `si` of the count.
    pub text: String,
    /// Ratio to the fewest of a library in the column.
    pub ratio: Option<f64>,
    /// The fewest (within 0.5%) of a library.
    pub best: bool,
}

pub struct CostTable {
    pub title: &'static str,
    pub per_process: bool,
    /// By row, then column.
    pub texts: Vec<Vec<Option<String>>>,
}

/// Rows = scenarios, columns = buses, for one library.
pub struct BusVsBus {
    pub label: String,
    pub buses: Vec<String>,
    /// Scenario, then a text per bus.
    pub rows: Vec<(String, Vec<String>)>,
}

impl<'a> Report<'a> {
    pub fn of(r: &'a ResultsFile) -> Report<'a> {
        let adapters: Vec<Adapter> = r
            .adapters
            .iter()
            .map(|a| {
                let label = table::label(r, a);
                Adapter {
                    record: a,
                    with_id: label != table::row_label(a),
                    label,
                    build: a.build.as_ref().map(table::build_time),
                }
            })
            .collect();
        let cx = Context {
            target: width::target(r),
            planned_rounds: width::planned_rounds(r),
        };
        let tables: Vec<ReportTable> = table::tables(r).into_iter().map(|t| report_table(r, t, &cx)).collect();
        let codec = tables
            .iter()
            .find(|t| t.table.group == Group::Codec)
            .map(|t| (&t.table, t.labels.as_slice()));
        let charts = charts::of(r, codec);
        Report {
            charts,
            tables,
            bus_vs_bus: bus_vs_bus(r),
            legend: width::legend(r),
            idle_connections: connection_memory::rows(r)
                .iter()
                .map(connection_memory::texts)
                .collect(),
            sections: [idle_cost::section(r), bus_memory::section(r)]
                .into_iter()
                .flatten()
                .collect(),
            interop: r.interop.as_ref().map(interop::view),
            adapters,
        }
    }
}

struct Context {
    target: Option<f64>,
    planned_rounds: Option<u32>,
}

fn report_table<'a>(r: &'a ResultsFile, t: Table<'a>, cx: &Context) -> ReportTable<'a> {
    let bus_description = match &t.group {
        Group::Bus(bus) | Group::Role(_, bus) => r.buses.iter().find(|b| &b.id == bus).map(|b| b.description.as_str()),
        _ => None,
    };
    let role_note = match &t.group {
        Group::Role(role, _) => Some(table::role_note(r, *role)),
        _ => None,
    };
    let cells = t
        .rows
        .iter()
        .map(|row| {
            row.cells
                .iter()
                .map(|e| e.as_ref().map(|e| cell_view(e, &row.adapter.id, cx)))
                .collect()
        })
        .collect();
    let instructions = table::has_instructions(&t).then(|| {
        let fewest: Vec<Option<f64>> = (0..t.columns.len())
            .map(|i| table::fewest_instructions(&t, i))
            .collect();
        t.rows
            .iter()
            .map(|row| {
                row.cells
                    .iter()
                    .enumerate()
                    .map(|(i, e)| {
                        table::instructions(e).map(|n| {
                            let f = fewest[i].filter(|f| *f > 0.0);
                            Instructions {
                                text: si(n),
                                ratio: f.map(|f| n / f),
                                best: f.is_some_and(|f| n <= f * 1.005 && !row.adapter.baseline),
                            }
                        })
                    })
                    .collect()
            })
            .collect()
    });
    let costs = table::COST_FIGURES
        .iter()
        .filter_map(|f| {
            let texts: Vec<Vec<Option<String>>> = t
                .rows
                .iter()
                .map(|row| {
                    row.cells
                        .iter()
                        .map(|e| table::costs(e).and_then(|c| table::cost_text(f, c)))
                        .collect()
                })
                .collect();
            texts.iter().flatten().any(Option::is_some).then_some(CostTable {
                title: f.title,
                per_process: f.per_process(),
                texts,
            })
        })
        .collect();
    ReportTable {
        placement: table::placement_line(&t, r.run.placement.as_deref()),
        labels: t.rows.iter().map(|row| table::label(r, row.adapter)).collect(),
        bus_description,
        role_note,
        cells,
        instructions,
        costs,
        table: t,
    }
}

fn cell_view(e: &table::Entry, adapter: &str, cx: &Context) -> CellView {
    match &e.cell.outcome {
        Outcome::Ok(m) => {
            let w = width::of(m, cx.target);
            let floor = m.floor_ratio.map(|f| {
                // Cached reads never touch the socket: keep two significant digits below 1.
                if f >= 1.0 {
                    Floor {
                        text: format!("{f:.1}× floor"),
                        below_note: None,
                    }
                } else {
                    Floor {
                        text: format!("{f:.2}× floor"),
                        below_note: Some(table::below_floor_reason(&e.cell.scenario).to_string()),
                    }
                }
            });
            CellView::Timed(Timed {
                median: duration(m.wall.median_ns.point),
                lower: duration(m.wall.median_ns.lower),
                upper: duration(m.wall.median_ns.upper),
                width: w.relative.map(width::percent),
                above_target: w.above_target,
                rounds: w.rounds,
                rounds_text: width::rounds_text(&w, cx.planned_rounds),
                ratio: e.ratio,
                calls_per_second: table::calls_per_second(&e.cell.scenario, m.wall.median_ns.point),
                floor,
                cut_note: w.cut.map(|reason| width::cut_note(adapter, &e.cell.scenario, reason)),
            })
        }
        Outcome::Unsupported { reason } | Outcome::Failed { reason } => {
            let word = table::status_word(e.cell.status());
            CellView::NotRun {
                word,
                reason: reason.clone(),
                note: format!("{adapter} {word}: {reason}"),
            }
        }
    }
}

/// For each library with IPC results: rows = scenarios, columns = buses
/// (same-library cells only: the roles apart have tables of their own).
fn bus_vs_bus(r: &ResultsFile) -> Vec<BusVsBus> {
    let mut buses: Vec<&str> = Vec::new();
    for c in &r.cells {
        if let Some(b) = c.bus.as_deref() {
            if !buses.contains(&b) {
                buses.push(b);
            }
        }
    }
    if buses.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for a in r.adapters.iter().filter(|a| !a.baseline) {
        let cells: Vec<_> = r
            .cells
            .iter()
            .filter(|c| c.adapter == a.id && c.bus.is_some() && c.role.is_same())
            .collect();
        if !cells.iter().any(|c| c.status() == CellStatus::Ok) {
            continue;
        }
        let mut scenarios: Vec<&str> = Vec::new();
        for c in &cells {
            if !scenarios.contains(&c.scenario.as_str()) {
                scenarios.push(&c.scenario);
            }
        }
        let rows = scenarios
            .into_iter()
            .map(|s| {
                let texts = buses
                    .iter()
                    .map(|b| {
                        cells
                            .iter()
                            .find(|c| c.scenario == s && c.bus.as_deref() == Some(b))
                            .map_or("–".into(), |c| {
                                c.median_ns()
                                    .map_or_else(|| table::status_word(c.status()).into(), duration)
                            })
                    })
                    .collect();
                (s.to_string(), texts)
            })
            .collect();
        out.push(BusVsBus {
            label: table::label(r, a),
            buses: buses.iter().map(|b| b.to_string()).collect(),
            rows,
        });
    }
    out
}
