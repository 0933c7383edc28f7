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
//!   `client-rss-bytes`, `client-hwm-bytes` (`export::model::connection_memory`);
//! - IPC cells counted with `run --instructions` (issue 30): the portable
//!   table's figures (`model::portable`) `instructions-client`,
//!   `instructions-server`, `instructions-subscribers`, `instructions-bus`
//!   (instructions per operation of each process) and `bus-syscalls` (the bus
//!   daemon's system calls per operation).
//!
//! Every measure carries `"portability": "portable"` or `"machine-bound"`
//! beside its values (`harness::results::portability`): a field BMF does not
//! define and Bencher ignores (its JSON adapter reads a measure into
//! `value`, `lower_value` and `upper_value` and denies no other field; the
//! BMF schema, <https://bencher.dev/bmf.json>, allows more properties).
//! BMF is a map, so its order says nothing: the labels do.

use harness::results::portability::{self, Portability};
use harness::results::{Measurement, ResultsFile};
use serde_json::{json, Map, Value};

use super::model::portable;
use super::model::table::{COST_FIGURES, ROLES};

/// A measure's values, labelled.
fn labelled(mut values: Map<String, Value>, p: Portability) -> Value {
    values.insert("portability".into(), json!(p.word()));
    Value::Object(values)
}

fn value(v: f64, p: Portability) -> Value {
    let mut m = Map::new();
    m.insert("value".into(), json!(v));
    labelled(m, p)
}

/// The portable table's IPC figures of a cell: instructions of each process
/// and the bus daemon's system calls, each with its label.
fn ipc_counts(m: &Measurement, measures: &mut Map<String, Value>) {
    if let Some(i) = &m.ipc_instructions {
        let p = portability::of_instructions(i.method);
        for role in ROLES {
            if let Some(n) = i.process(role) {
                measures.insert(format!("instructions-{role}"), value(n, p));
            }
        }
    }
    let bus = m
        .costs
        .as_ref()
        .and_then(|c| c.process("bus"))
        .and_then(|p| p.syscalls_per_op);
    if let Some(n) = bus {
        measures.insert("bus-syscalls".into(), value(n, portability::of_syscalls("bus")));
    }
}

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
        let time = portable::label("wall");
        let mut measures = Map::new();
        ipc_counts(m, &mut measures);
        let mut latency = Map::new();
        latency.insert("value".into(), json!(e.point));
        latency.insert("lower_value".into(), json!(e.lower));
        latency.insert("upper_value".into(), json!(e.upper));
        measures.insert("latency".into(), labelled(latency, time));
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
            measures.insert("bytes-per-second".into(), labelled(t, time));
        }
        if let Some(driver) = harness::scenario::find(&c.scenario).map(|s| s.driver) {
            if matches!(driver, harness::scenario::Driver::ParallelClients(_)) && e.point > 0.0 {
                measures.insert("calls-per-second".into(), value(1e9 / e.point, time));
            }
        }
        if let Some(a) = &m.alloc {
            let p = portable::label("alloc.allocations_per_op");
            measures.insert("allocations".into(), value(a.allocations_per_op, p));
        }
        if let Some(n) = m.instructions_per_op {
            measures.insert("instructions".into(), value(n, portable::label("instructions_per_op")));
        }
        if let Some(c) = &m.costs {
            for f in &COST_FIGURES {
                if let Some(v) = f.total(c) {
                    measures.insert(f.key.into(), value(v, portable::label(f.figure)));
                }
            }
        }
        for (key, v) in super::model::connection_memory::bmf_measures(m) {
            measures.insert(key.into(), value(v, portable::label("connection_memory")));
        }
        out.insert(name, Value::Object(measures));
    }
    serde_json::to_string_pretty(&Value::Object(out)).expect("serializable") + "\n"
}
