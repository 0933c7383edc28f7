//! The matrix as JSON tables (the results file itself is the full record;
//! this is the report view: rows, columns, medians and ratios). Each timed
//! cell has its interval width facts (`export::model::width`): `ci_width` (the
//! fraction `(upper - lower) / median`, null for a cut cell), `rounds`,
//! `above_target` (null without a target) and `cut` (null unless cut); the
//! document has the profile's `target_width` (null without one). The tables
//! and labels are the report's (`model::report`); the values are the raw
//! numbers, not its display texts.
//!
//! Issue 30: `portable` is the portable table every format leads with
//! (`model::portable`: per scenario family, a row per counted IPC cell with
//! the instructions of each process, bus messages, allocations and the bus
//! daemon's system calls; empty when no IPC instructions were counted), and
//! `portability` labels every figure the document has, by its field name
//! (`portable` or `machine-bound`, from `harness::results::portability`).

use harness::results::ResultsFile;
use serde_json::{json, Value};

use super::model::portable;
use super::model::report::Report;
use super::model::table::status_word;
use super::model::width;

pub fn render(r: &ResultsFile) -> String {
    let target = width::target(r);
    let tables: Vec<Value> = Report::of(r)
        .tables
        .iter()
        .map(|rt| {
            let t = &rt.table;
            json!({
                "bus": t.bus,
                "columns": t.columns,
                "rows": t.rows.iter().zip(&rt.labels).map(|(row, label)| json!({
                    "adapter": row.adapter.id,
                    "label": label,
                    "library": row.adapter.library,
                    "version": row.adapter.version,
                    "baseline": row.adapter.baseline,
                    "runtime": row.adapter.runtime,
                    "cells": row.cells.iter().map(|e| e.as_ref().map(|e| {
                        let w = e.cell.measurement().map(|m| width::of(m, target));
                        json!({
                            "status": status_word(e.cell.status()),
                            "median_ns": e.cell.median_ns(),
                            "ratio_to_fastest": e.ratio,
                            "ci_width": w.as_ref().and_then(|w| w.relative),
                            "rounds": w.as_ref().map(|w| w.rounds),
                            "above_target": w.as_ref().filter(|_| target.is_some()).map(|w| w.above_target),
                            "cut": w.as_ref().and_then(|w| w.cut),
                            "reason": e.cell.reason(),
                        })
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let v = json!({
        "run": r.run,
        "environment": r.environment,
        "target_width": target,
        "portability": labels(),
        "portable": portable_table(r),
        "tables": tables,
    });
    serde_json::to_string_pretty(&v).expect("serializable") + "\n"
}

/// The label of each figure field of the document: the tables' cells, and
/// the portable table's columns.
fn labels() -> Value {
    let mut m = serde_json::Map::new();
    for (key, figure) in [
        ("median_ns", "wall"),
        ("ratio_to_fastest", "wall"),
        ("ci_width", "wall"),
    ] {
        m.insert(key.into(), json!(portable::label(figure).word()));
    }
    for c in &portable::COLUMNS {
        m.insert(c.key.into(), json!(portable::label(c.figure).word()));
    }
    Value::Object(m)
}

/// `model::portable`'s families, values by column key.
fn portable_table(r: &ResultsFile) -> Value {
    portable::families(r)
        .iter()
        .map(|f| {
            let rows: Vec<Value> = f
                .rows
                .iter()
                .map(|row| {
                    let mut o = serde_json::Map::new();
                    o.insert("adapter".into(), json!(row.cell.adapter));
                    o.insert("label".into(), json!(row.label));
                    o.insert("bus".into(), json!(row.cell.bus));
                    o.insert("scenario".into(), json!(row.cell.scenario));
                    o.insert("instructions_method".into(), json!(row.method));
                    for (c, v) in portable::COLUMNS.iter().zip(row.values) {
                        o.insert(c.key.into(), json!(v));
                    }
                    Value::Object(o)
                })
                .collect();
            json!({"family": f.name, "rows": rows})
        })
        .collect()
}
