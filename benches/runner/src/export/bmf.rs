//! Bencher Metric Format (<https://bencher.dev/docs/reference/bencher-metric-format/>):
//! one benchmark per ok cell, named `<adapter>/<scenario>` (plus `@<bus>` for
//! IPC cells), with the measures
//! - `latency`: median ns per operation, `lower_value`/`upper_value` its 95%
//!   interval (`wall.median_ns`: for a cell measured in several rounds the
//!   interval of the variation between rounds, so the interval width of
//!   `export::model::width` is `(upper_value - lower_value) / value`; BMF has no
//!   field for the rounds, the target or a cut);
//! - `bytes-per-second`: from the median and the bytes per operation, when
//!   the cell processes bytes (a measure of its own: Bencher's built-in
//!   `throughput` counts operations per second);
//! - `calls-per-second`: `call/parallel-clients/<k>` cells, all clients together;
//! - `allocations`: heap allocations per operation, when recorded;
//! - `instructions`: callgrind instructions per operation (`run --instructions`);
//! - IPC cells: `bus-messages`, `syscalls`, `context-switches` and `cpu-time`
//!   (ns) per operation, summed over the cell's processes, and `peak-rss` and
//!   `rss` (KiB, VmHWM and VmRSS summed over them; see `table::COST_FIGURES`);
//! - `connect/idle-connections` cells: `bus-bytes-per-connection`,
//!   `client-rss-bytes`, `client-hwm-bytes` (`export::model::connection_memory`).

use harness::results::ResultsFile;
use serde_json::{json, Map, Value};

use super::model::table::COST_FIGURES;

pub fn render(r: &ResultsFile) -> String {
    let mut out = Map::new();
    for c in &r.cells {
        let Some(m) = c.measurement() else { continue };
        // Roles apart get `#client` / `#server`: never mixed with the same-library cell.
        let role = match c.role.is_same() {
            true => String::new(),
            false => format!("#{}", c.role),
        };
        let name = match &c.bus {
            Some(bus) => format!("{}/{}@{bus}{role}", c.adapter, c.scenario),
            None => format!("{}/{}{role}", c.adapter, c.scenario),
        };
        let e = &m.wall.median_ns;
        let mut measures = Map::new();
        measures.insert(
            "latency".into(),
            json!({"value": e.point, "lower_value": e.lower, "upper_value": e.upper}),
        );
        if m.throughput_bytes > 0 && e.point > 0.0 {
            let per_s = |ns: f64| m.throughput_bytes as f64 * 1e9 / ns;
            let mut t = Map::new();
            t.insert("value".into(), json!(per_s(e.point)));
            // The slower end of the interval is the lower throughput.
            if e.upper > 0.0 {
                t.insert("lower_value".into(), json!(per_s(e.upper)));
            }
            if e.lower > 0.0 {
                t.insert("upper_value".into(), json!(per_s(e.lower)));
            }
            measures.insert("bytes-per-second".into(), Value::Object(t));
        }
        if let Some(driver) = harness::scenario::find(&c.scenario).map(|s| s.driver) {
            if matches!(driver, harness::scenario::Driver::ParallelClients(_)) && e.point > 0.0 {
                measures.insert("calls-per-second".into(), json!({"value": 1e9 / e.point}));
            }
        }
        if let Some(a) = &m.alloc {
            measures.insert("allocations".into(), json!({"value": a.allocations_per_op}));
        }
        if let Some(n) = m.instructions_per_op {
            measures.insert("instructions".into(), json!({"value": n}));
        }
        if let Some(c) = &m.costs {
            for f in &COST_FIGURES {
                if let Some(v) = f.total(c) {
                    measures.insert(f.key.into(), json!({ "value": v }));
                }
            }
        }
        for (key, v) in super::model::connection_memory::bmf_measures(m) {
            measures.insert(key.into(), json!({ "value": v }));
        }
        out.insert(name, Value::Object(measures));
    }
    serde_json::to_string_pretty(&Value::Object(out)).expect("serializable") + "\n"
}
