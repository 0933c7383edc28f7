//! The matrix as a table (rows = library + version, columns = scenarios, one
//! table per bus), shared by every output format.

use std::collections::BTreeMap;

use harness::results::{AdapterRecord, BuildRecord, Cell, CellStatus, IpcCosts, ProcessCost, ResultsFile, Role};

/// Which table a cell belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Group {
    /// Marshal and demarshal.
    Codec,
    /// The raw-socket floor (no bus).
    Floor,
    /// IPC cells on this bus.
    Bus(String),
    /// `call/*` cells on this bus in the client or server role (a view of
    /// its own: never mixed with the same-library table).
    Role(Role, String),
}

impl Group {
    fn of(c: &Cell) -> Group {
        match &c.bus {
            Some(b) if !c.role.is_same() => Group::Role(c.role, b.clone()),
            Some(b) => Group::Bus(b.clone()),
            None if harness::scenario::find(&c.scenario).and_then(|s| s.ipc_op()).is_some() => Group::Floor,
            None => Group::Codec,
        }
    }
}

pub struct Table<'a> {
    pub group: Group,
    /// `None` for marshal/demarshal cells and the floor, else the bus id.
    pub bus: Option<String>,
    pub columns: Vec<String>,
    pub rows: Vec<Row<'a>>,
}

pub struct Row<'a> {
    pub adapter: &'a AdapterRecord,
    /// By column index.
    pub cells: Vec<Option<Entry<'a>>>,
}

pub struct Entry<'a> {
    pub cell: &'a Cell,
    /// Median divided by the fastest library's median in the column (the
    /// baseline is not a library, so it never sets the 1.00).
    pub ratio: Option<f64>,
}

/// Calls per second of a `call/parallel-clients/<k>` cell (all clients
/// together: 10^9 / ns per call), as the reports print it: "12.3k calls/s".
pub fn calls_per_second(scenario: &str, median_ns: f64) -> Option<String> {
    let is_parallel = harness::scenario::find(scenario)
        .is_some_and(|s| matches!(s.driver, harness::scenario::Driver::ParallelClients(_)));
    (is_parallel && median_ns > 0.0).then(|| format!("{} calls/s", si(1e9 / median_ns)))
}

/// Which CPU placement the IPC cells of a table were measured with
/// (`Measurement::placement`, else the run's `--pin` for older files), as
/// one line every report prints under the table's heading.
pub fn placement_line(t: &Table, run_placement: Option<&str>) -> Option<String> {
    if !matches!(t.group, Group::Bus(_)) {
        return None;
    }
    let mut seen: Vec<&str> = Vec::new();
    for e in t.rows.iter().flat_map(|row| row.cells.iter().flatten()) {
        if let Some(p) = e.cell.measurement().and_then(|m| m.placement.as_deref()) {
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
    }
    let text = match (seen.as_slice(), run_placement) {
        ([], Some(run)) => format!("{} (the run's; not recorded per cell)", placement_words(run)),
        ([], None) => return None,
        (placements, _) => {
            // `one-cpu` records each cell's CPU: say "one CPU" once, with the CPUs.
            let (single, other): (Vec<&str>, Vec<&str>) = placements.iter().partition(|p| one_cpu(p).is_some());
            let mut cpus: Vec<usize> = single.iter().filter_map(|p| one_cpu(p)).map(|(cpu, _)| cpu).collect();
            cpus.sort_unstable();
            cpus.dedup();
            let mut parts: Vec<String> = Vec::new();
            if !single.is_empty() {
                let cpus = cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ");
                parts.push(format!(
                    "client, server and bus daemon of a cell on one CPU (`--pin one-cpu`; CPU {cpus})"
                ));
            }
            // call/parallel-clients: whatever the placement, its clients are not pinned.
            if single
                .iter()
                .any(|p| one_cpu(p).is_some_and(|(_, suffix)| !suffix.is_empty()))
            {
                parts.push("the clients of call/parallel-clients not pinned".into());
            }
            parts.extend(other.iter().map(|p| placement_words(p)));
            parts.join("; ")
        }
    };
    Some(format!("CPU placement of these cells: {text}"))
}

fn placement_words(p: &str) -> String {
    match p {
        "none" => "unpinned (`--pin none`: the scheduler places client, server and bus)".to_string(),
        "one-cpu" => "client, server and bus daemon of a cell on one CPU (`--pin one-cpu`)".to_string(),
        pinned => format!("pinned {pinned}"),
    }
}

/// `client=C,server=C,bus=C` (and what follows it, e.g. " (the clients
/// unpinned)"): the CPU of a cell placed by `one-cpu`, and that suffix.
fn one_cpu(p: &str) -> Option<(usize, &str)> {
    let (spec, suffix) = p.split_at(p.find(' ').unwrap_or(p.len()));
    let mut cpu = None;
    for (i, part) in spec.split(',').enumerate() {
        let (role, c) = part.split_once('=')?;
        if role != *["client", "server", "bus"].get(i)? {
            return None;
        }
        let c: usize = c.parse().ok()?;
        if cpu.is_some_and(|prev| prev != c) {
            return None;
        }
        cpu = Some(c);
    }
    (spec.split(',').count() == 3).then_some((cpu?, suffix))
}

/// Instructions per operation of a cell (`run --instructions`), when counted.
pub fn instructions(e: &Option<Entry>) -> Option<f64> {
    e.as_ref()
        .and_then(|e| e.cell.measurement())
        .and_then(|m| m.instructions_per_op)
}

pub fn has_instructions(t: &Table) -> bool {
    t.rows
        .iter()
        .any(|row| row.cells.iter().any(|e| instructions(e).is_some()))
}

/// The fewest instructions per operation of a library (not the baseline) in column `col`.
pub fn fewest_instructions(t: &Table, col: usize) -> Option<f64> {
    t.rows
        .iter()
        .filter(|row| !row.adapter.baseline)
        .filter_map(|row| instructions(&row.cells[col]))
        .reduce(f64::min)
}

/// Roles of the processes of an IPC cell, in the order reports show them.
pub const ROLES: [&str; 4] = ["client", "server", "subscribers", "bus"];

/// One per-operation cost of IPC cells, as the reports show it: a total
/// over the cell's processes (or the bus), then each process.
pub struct CostFigure {
    pub title: &'static str,
    /// A short name for machine formats (`bus-messages`, `syscalls`, ...).
    pub key: &'static str,
    pub source: CostSource,
    pub format: fn(f64) -> String,
    /// The figure of `harness::results::portability::FIGURES` that labels
    /// the cell's figure (a total over processes is labelled as its
    /// least portable part).
    pub figure: &'static str,
}

/// Where a figure comes from: the bus as a whole, or each process (the
/// cell's figure is then the sum over its processes).
pub enum CostSource {
    Bus(fn(&IpcCosts) -> Option<f64>),
    Process(fn(&ProcessCost) -> Option<f64>),
}

impl CostFigure {
    /// The figure for the whole cell.
    pub fn total(&self, c: &IpcCosts) -> Option<f64> {
        match self.source {
            CostSource::Bus(f) => f(c),
            CostSource::Process(f) => c.total(f),
        }
    }

    pub fn per_process(&self) -> bool {
        matches!(self.source, CostSource::Process(_))
    }
}

fn count(n: f64) -> String {
    if n >= 100.0 {
        si(n)
    } else {
        format!("{n:.1}")
    }
}

/// KiB as the reports show memory: 812 KiB, 3.4 MiB, 1.2 GiB.
pub fn kib(k: f64) -> String {
    if k >= 1024.0 * 1024.0 {
        format!("{:.1} GiB", k / (1024.0 * 1024.0))
    } else if k >= 1024.0 {
        format!("{:.1} MiB", k / 1024.0)
    } else {
        format!("{k:.0} KiB")
    }
}

/// What reports show of `Measurement::costs`, in order.
pub const COST_FIGURES: [CostFigure; 6] = [
    CostFigure {
        title: "bus messages per operation (monitor)",
        key: "bus-messages",
        source: CostSource::Bus(|c| c.bus_messages_per_op),
        format: count,
        figure: "costs.bus_messages_per_op",
    },
    CostFigure {
        title: "system calls per operation",
        key: "syscalls",
        source: CostSource::Process(|p| p.syscalls_per_op),
        format: count,
        figure: "costs.processes.syscalls_per_op (client, server, subscribers)",
    },
    CostFigure {
        title: "context switches per operation (voluntary + involuntary)",
        key: "context-switches",
        source: CostSource::Process(|p| Some(p.voluntary_switches_per_op + p.involuntary_switches_per_op)),
        format: count,
        figure: "costs.processes.voluntary_switches_per_op",
    },
    CostFigure {
        title: "CPU time per operation",
        key: "cpu-time",
        source: CostSource::Process(|p| Some(p.cpu_ns_per_op)),
        format: duration,
        figure: "costs.processes.cpu_ns_per_op",
    },
    CostFigure {
        title: "peak resident memory (VmHWM, KiB in machine formats)",
        key: "peak-rss",
        source: CostSource::Process(|p| p.vm_hwm_kib.map(|k| k as f64)),
        format: kib,
        figure: "costs.processes.vm_hwm_kib",
    },
    CostFigure {
        title: "resident memory after the counted window (VmRSS, KiB in machine formats)",
        key: "rss",
        source: CostSource::Process(|p| p.vm_rss_kib.map(|k| k as f64)),
        format: kib,
        figure: "costs.processes.vm_rss_kib",
    },
];

/// The costs of a table entry, when counted.
pub fn costs<'a>(e: &Option<Entry<'a>>) -> Option<&'a IpcCosts> {
    e.as_ref()
        .and_then(|e| e.cell.measurement())
        .and_then(|m| m.costs.as_ref())
}

/// "total (client / server / bus)" for one figure of one cell.
pub fn cost_text(f: &CostFigure, c: &IpcCosts) -> Option<String> {
    let total = f.total(c)?;
    let mut s = (f.format)(total);
    if let CostSource::Process(each) = f.source {
        let parts: Vec<String> = ROLES
            .iter()
            .filter_map(|role| c.process(role))
            .map(|p| each(p).map_or("–".into(), f.format))
            .collect();
        if parts.len() > 1 {
            s += &format!(" ({})", parts.join(" / "));
        }
    }
    Some(s)
}

/// Scales nanoseconds to the largest unit they reach: 1234.5 -> (1.2345, "µs").
pub fn scaled_ns(ns: f64) -> (f64, &'static str) {
    if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    }
}

pub fn tables(r: &ResultsFile) -> Vec<Table<'_>> {
    let mut groups: Vec<Group> = Vec::new();
    for c in &r.cells {
        let g = Group::of(c);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    groups
        .into_iter()
        .map(|group| {
            let cells: Vec<&Cell> = r.cells.iter().filter(|c| Group::of(c) == group).collect();
            let bus = match &group {
                Group::Bus(b) | Group::Role(_, b) => Some(b.clone()),
                _ => None,
            };
            let mut columns: Vec<String> = Vec::new();
            for c in &cells {
                if !columns.contains(&c.scenario) {
                    columns.push(c.scenario.clone());
                }
            }
            let is_baseline: BTreeMap<&str, bool> = r.adapters.iter().map(|a| (a.id.as_str(), a.baseline)).collect();
            let fastest: Vec<Option<f64>> = columns
                .iter()
                .map(|col| {
                    cells
                        .iter()
                        .filter(|c| {
                            &c.scenario == col && !is_baseline.get(c.adapter.as_str()).copied().unwrap_or(false)
                        })
                        .filter_map(|c| c.median_ns())
                        .min_by(f64::total_cmp)
                })
                .collect();
            let rows = r
                .adapters
                .iter()
                .filter(|a| cells.iter().any(|c| c.adapter == a.id))
                .map(|a| Row {
                    adapter: a,
                    cells: columns
                        .iter()
                        .enumerate()
                        .map(|(i, col)| {
                            cells
                                .iter()
                                .find(|c| c.adapter == a.id && &c.scenario == col)
                                .map(|cell| Entry {
                                    cell,
                                    ratio: match (cell.median_ns(), fastest[i]) {
                                        (Some(m), Some(f)) if f > 0.0 => Some(m / f),
                                        _ => None,
                                    },
                                })
                        })
                        .collect(),
                })
                .collect();
            Table {
                group,
                bus,
                columns,
                rows,
            }
        })
        .collect()
}

/// Library and version, or with the adapter id too when another adapter of
/// the run has the same library and version (one library on two runtimes).
pub fn label(r: &ResultsFile, a: &AdapterRecord) -> String {
    let label = row_label(a);
    if r.adapters.iter().any(|b| b.id != a.id && row_label(b) == label) {
        format!("{label} ({})", a.id)
    } else {
        label
    }
}

pub fn row_label(a: &AdapterRecord) -> String {
    if a.baseline {
        format!("{} (baseline)", a.library)
    } else {
        format!("{} {}", a.library, a.version)
    }
}

/// `dbus-matrix build-times` figures of an adapter: "42.1 s, 12 crates, -j 2".
pub fn build_time(b: &BuildRecord) -> String {
    let plural = if b.crates_compiled == 1 { "" } else { "s" };
    format!("{:.1} s, {} crate{plural}, -j {}", b.seconds, b.crates_compiled, b.jobs)
}

/// 1234 -> "1.23 k", three significant digits.
pub fn si(n: f64) -> String {
    let (v, unit) = match n {
        n if n >= 1e9 => (n / 1e9, " G"),
        n if n >= 1e6 => (n / 1e6, " M"),
        n if n >= 1e3 => (n / 1e3, " k"),
        n => (n, ""),
    };
    let digits = if v >= 100.0 || unit.is_empty() {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{unit}")
}

/// Why an IPC cell can take less than the raw-socket floor (floor ratio
/// below 1): the footnote the reports put on such a cell. docs/scenarios.md
/// explains both cases.
pub fn below_floor_reason(scenario: &str) -> &'static str {
    if scenario.starts_with("property/get") {
        "below the raw-socket floor: the library answers from its property cache, so no message crosses a socket"
    } else {
        "below the raw-socket floor, yet not less work: the floor is one unpinned round trip between two threads, \
         whose cost on a VM is mostly waking the other vCPU; part of this cell's samples ran with its processes \
         placed so that they paid fewer such wake-ups (its samples are bimodal). Compare placements with --pin"
    }
}

/// Footnotes for unsupported and failed cells; the same reason for the same
/// adapter is one note, however many cells share it.
#[derive(Default)]
pub struct Notes(pub Vec<String>);

impl Notes {
    pub fn number(&mut self, text: String) -> usize {
        match self.0.iter().position(|n| *n == text) {
            Some(i) => i + 1,
            None => {
                self.0.push(text);
                self.0.len()
            }
        }
    }
}

/// 1234.5 -> "1.23 µs".
pub fn duration(ns: f64) -> String {
    let (v, unit) = scaled_ns(ns);
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

pub fn status_word(s: CellStatus) -> &'static str {
    match s {
        CellStatus::Ok => "ok",
        CellStatus::Unsupported => "unsupported",
        CellStatus::Failed => "failed",
    }
}

/// What a client- or server-role table measured, against which reference.
pub fn role_note(r: &ResultsFile, role: Role) -> String {
    let reference = r
        .plan
        .as_ref()
        .and_then(|p| p.roles.as_ref())
        .map_or("the reference", |p| p.reference.as_str());
    match role {
        Role::Same => "each library calling its own server".into(),
        Role::Client => format!("each library's client calling the {reference} server: the client's cost"),
        Role::Server => format!("the {reference} client calling each library's server: the server's cost"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations() {
        assert_eq!(super::duration(999.0), "999 ns");
        assert_eq!(super::duration(1234.5), "1.23 µs");
        assert_eq!(super::duration(12_345_678.0), "12.3 ms");
    }
}
