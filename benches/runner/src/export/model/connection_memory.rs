//! `connect/idle-connections/<n>`: what a held connection costs, in every
//! report format: the rows and texts of its own section (printed by
//! Markdown and `export/html/idle_connections.rs` from
//! `report::Report::idle_connections`), columns (CSV) and measures (BMF),
//! present only when the run has such cells, so reports of other runs are
//! unchanged.
//!
//! Per row: connect time per connection (the cell's median / n: one operation
//! closes the previous batch and opens n), the bus daemon's resident memory
//! per connection (VmRSS with the n held minus before, / n), the client's
//! VmRSS and VmHWM with them held, and heap bytes per connection where the
//! adapter counts allocations.

use harness::ipc::IpcOp;
use harness::results::{Cell, ConnectionMemory, Measurement, ResultsFile};

use super::table::duration;

/// One ok `connect/idle-connections/<n>` cell.
pub struct Row<'a> {
    pub cell: &'a Cell,
    pub connections: usize,
    pub m: &'a Measurement,
}

impl Row<'_> {
    pub fn connect_ns_per_connection(&self) -> f64 {
        self.m.wall.median_ns.point / self.connections.max(1) as f64
    }

    pub fn memory(&self) -> Option<&ConnectionMemory> {
        self.m.connection_memory.as_ref()
    }

    pub fn heap_bytes_per_connection(&self) -> Option<f64> {
        self.m
            .alloc
            .as_ref()
            .map(|a| a.bytes_per_op / self.connections.max(1) as f64)
    }
}

fn connections_of(scenario: &str) -> Option<usize> {
    match harness::scenario::find(scenario)?.ipc_op()? {
        IpcOp::IdleConnections(n) => Some(n),
        _ => None,
    }
}

/// The ok idle-connection cells, in the file's order.
pub fn rows(r: &ResultsFile) -> Vec<Row<'_>> {
    r.cells
        .iter()
        .filter_map(|c| {
            Some(Row {
                connections: connections_of(&c.scenario)?,
                m: c.measurement()?,
                cell: c,
            })
        })
        .collect()
}

/// Whether the run has idle-connection cells (ok or not): CSV adds its columns then.
pub fn present(r: &ResultsFile) -> bool {
    r.cells.iter().any(|c| connections_of(&c.scenario).is_some())
}

pub fn bytes(v: f64) -> String {
    let a = v.abs();
    if a >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", v / (1024.0 * 1024.0))
    } else if a >= 1024.0 {
        format!("{:.1} KiB", v / 1024.0)
    } else {
        format!("{v:.0} B")
    }
}

const DASH: &str = "—";
pub const HEAD: [&str; 8] = [
    "adapter",
    "bus",
    "connections",
    "connect / connection",
    "bus daemon RSS / connection",
    "client VmRSS (held)",
    "client VmHWM",
    "heap / connection",
];
pub const EXPLAIN: &str = "One operation closes the previous batch and opens n connections (SASL + Hello); connect time \
     per connection is its median / n. Bus daemon RSS per connection: the daemon's VmRSS (all its processes) with the \
     n held minus before the client started, / n, on a fresh daemon of that kind (read by the runner while they are \
     held). Client VmRSS and VmHWM: the client process with them held. Heap: bytes allocated per connection where the \
     adapter counts allocations (Rust's allocator only: a C library's own malloc, libdbus under dbus-rs, is not counted).";

pub fn texts(row: &Row) -> [String; 8] {
    let mem = row.memory();
    [
        row.cell.adapter.clone(),
        row.cell.bus.clone().unwrap_or_default(),
        row.connections.to_string(),
        duration(row.connect_ns_per_connection()),
        mem.map_or(DASH.into(), |m| bytes(m.bus_bytes_per_connection)),
        mem.map_or(DASH.into(), |m| bytes(m.client_rss_bytes as f64)),
        mem.map_or(DASH.into(), |m| bytes(m.client_hwm_bytes as f64)),
        row.heap_bytes_per_connection().map_or(DASH.into(), bytes),
    ]
}

/// CSV: the column names, appended after the others when [`present`].
pub const CSV_COLUMNS: [&str; 6] = [
    "connections",
    "connect_ns_per_connection",
    "bus_rss_bytes_per_connection",
    "client_rss_bytes",
    "client_hwm_bytes",
    "heap_bytes_per_connection",
];

/// CSV: this cell's values for [`CSV_COLUMNS`] (empty where it has none).
pub fn csv_values(c: &Cell) -> [Option<f64>; 6] {
    let row = connections_of(&c.scenario).and_then(|n| {
        Some(Row {
            cell: c,
            connections: n,
            m: c.measurement()?,
        })
    });
    let Some(row) = row else {
        return [
            connections_of(&c.scenario).map(|n| n as f64),
            None,
            None,
            None,
            None,
            None,
        ];
    };
    let mem = row.memory();
    [
        Some(row.connections as f64),
        Some(row.connect_ns_per_connection()),
        mem.map(|m| m.bus_bytes_per_connection),
        mem.map(|m| m.client_rss_bytes as f64),
        mem.map(|m| m.client_hwm_bytes as f64),
        row.heap_bytes_per_connection(),
    ]
}

/// BMF: measures of an idle-connection cell (`bus-bytes-per-connection`,
/// `client-rss-bytes`, `client-hwm-bytes`), none for other cells.
pub fn bmf_measures(m: &Measurement) -> Vec<(&'static str, f64)> {
    let Some(mem) = &m.connection_memory else {
        return Vec::new();
    };
    vec![
        ("bus-bytes-per-connection", mem.bus_bytes_per_connection),
        ("client-rss-bytes", mem.client_rss_bytes as f64),
        ("client-hwm-bytes", mem.client_hwm_bytes as f64),
    ]
}
