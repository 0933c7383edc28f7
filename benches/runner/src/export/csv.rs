//! One row per cell, every number the results file holds, for spreadsheets.

use harness::results::ResultsFile;

use super::table::status_word;

const HEADER: &str = "adapter,library,version,baseline,bus,scenario,status,median_ns,median_lower_ns,median_upper_ns,mean_ns,samples,throughput_bytes,mb_per_s,allocations_per_op,bytes_allocated_per_op,instructions_per_op,reason";

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
    out.push('\n');
    for c in &r.cells {
        let a = r.adapters.iter().find(|a| a.id == c.adapter);
        let m = c.measurement.as_ref();
        let median = m.map(|m| m.wall.median_ns.point);
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
            status_word(c.status).to_string(),
            num(median),
            num(m.map(|m| m.wall.median_ns.lower)),
            num(m.map(|m| m.wall.median_ns.upper)),
            num(m.map(|m| m.wall.mean_ns.point)),
            m.map_or_else(String::new, |m| m.wall.samples.to_string()),
            m.map_or_else(String::new, |m| m.throughput_bytes.to_string()),
            num(mbps),
            num(m.and_then(|m| m.alloc.as_ref()).map(|a| a.allocations_per_op)),
            num(m.and_then(|m| m.alloc.as_ref()).map(|a| a.bytes_per_op)),
            num(m.and_then(|m| m.instructions_per_op)),
            field(c.reason.as_deref().unwrap_or("")),
        ];
        out.push_str(&cols.join(","));
        out.push('\n');
    }
    out
}
