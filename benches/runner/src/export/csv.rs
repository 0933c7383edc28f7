//! One row per cell, every number the results file holds, for spreadsheets.
//! `ci_width`, `rounds`, `above_target` and `cut` are the cell's interval
//! width facts as `export::model::width` defines them (`ci_width` the fraction
//! `(upper - lower) / median`; `above_target` empty without a target).
//! `placement`: where an IPC cell's processes ran (`Measurement::placement`).
//! Runs with `connect/idle-connections` cells get `export::model::connection_memory`'s
//! columns after `cut`.

use harness::results::ResultsFile;

use super::model::table::{status_word, ROLES};
use super::model::{connection_memory, width};

const HEADER: &str = "adapter,library,version,baseline,bus,scenario,status,median_ns,median_lower_ns,median_upper_ns,ci_width,rounds,above_target,mean_ns,samples,throughput_bytes,mb_per_s,allocations_per_op,bytes_allocated_per_op,instructions_per_op,bus_messages_per_op,bus_bytes_per_op";
/// Per role of `table::ROLES`, after the columns above.
const PROCESS_COLUMNS: [&str; 8] = [
    "cpu_ns_per_op",
    "syscalls_per_op",
    "voluntary_switches_per_op",
    "involuntary_switches_per_op",
    "read_calls_per_op",
    "write_calls_per_op",
    "vm_hwm_kib",
    "vm_rss_kib",
];

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| format!("{v}"))
}

pub fn render(r: &ResultsFile) -> String {
    let mut out = String::from(HEADER);
    for role in ROLES {
        for col in PROCESS_COLUMNS {
            out += &format!(",{role}_{col}");
        }
    }
    // `cell_role`: which side of the cell the adapter is (same, client, server).
    out.push_str(",reason,cut,cell_role,placement");
    // Only in runs with idle-connection cells: other reports keep their columns.
    let memory = connection_memory::present(r);
    if memory {
        for col in connection_memory::CSV_COLUMNS {
            out += &format!(",{col}");
        }
    }
    out.push('\n');
    let target = width::target(r);
    for c in &r.cells {
        let a = r.adapters.iter().find(|a| a.id == c.adapter);
        let m = c.measurement();
        let costs = m.and_then(|m| m.costs.as_ref());
        let median = m.map(|m| m.wall.median_ns.point);
        let w = m.map(|m| width::of(m, target));
        let mbps = m.and_then(|m| {
            median
                .filter(|v| *v > 0.0)
                .map(|ns| m.throughput_bytes as f64 / ns * 1e3)
        });
        let cols = [
            field(&c.adapter),
            field(a.map_or("", |a| &a.library)),
            field(a.map_or("", |a| &a.version)),
            a.is_some_and(|a| a.baseline).to_string(),
            field(c.bus.as_deref().unwrap_or("")),
            field(&c.scenario),
            status_word(c.status()).to_string(),
            num(median),
            num(m.map(|m| m.wall.median_ns.lower)),
            num(m.map(|m| m.wall.median_ns.upper)),
            num(w.as_ref().and_then(|w| w.relative)),
            w.as_ref().map_or_else(String::new, |w| w.rounds.to_string()),
            w.as_ref()
                .filter(|_| target.is_some())
                .map_or_else(String::new, |w| w.above_target.to_string()),
            num(m.map(|m| m.wall.mean_ns.point)),
            m.map_or_else(String::new, |m| m.wall.samples.to_string()),
            m.map_or_else(String::new, |m| m.throughput_bytes.to_string()),
            num(mbps),
            num(m.and_then(|m| m.alloc.as_ref()).map(|a| a.allocations_per_op)),
            num(m.and_then(|m| m.alloc.as_ref()).map(|a| a.bytes_per_op)),
            num(m.and_then(|m| m.instructions_per_op)),
            num(costs.and_then(|c| c.bus_messages_per_op)),
            num(costs.and_then(|c| c.bus_bytes_per_op)),
        ];
        out.push_str(&cols.join(","));
        for role in ROLES {
            let p = costs.and_then(|c| c.process(role));
            let values = [
                p.map(|p| p.cpu_ns_per_op),
                p.and_then(|p| p.syscalls_per_op),
                p.map(|p| p.voluntary_switches_per_op),
                p.map(|p| p.involuntary_switches_per_op),
                p.map(|p| p.read_calls_per_op),
                p.map(|p| p.write_calls_per_op),
                p.and_then(|p| p.vm_hwm_kib).map(|k| k as f64),
                p.and_then(|p| p.vm_rss_kib).map(|k| k as f64),
            ];
            for v in values {
                out.push(',');
                out += &num(v);
            }
        }
        out.push(',');
        out += &field(c.reason().unwrap_or(""));
        out.push(',');
        out += &field(w.as_ref().and_then(|w| w.cut).unwrap_or(""));
        out.push(',');
        out += c.role.as_str();
        out.push(',');
        out += &field(m.and_then(|m| m.placement.as_deref()).unwrap_or(""));
        if memory {
            for v in connection_memory::csv_values(c) {
                out.push(',');
                out += &num(v);
            }
        }
        out.push('\n');
    }
    out
}
