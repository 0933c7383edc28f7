//! The matrix as JSON tables (the results file itself is the full record;
//! this is the report view: rows, columns, medians and ratios).

use harness::results::ResultsFile;
use serde_json::{json, Value};

use super::table::{self, row_label, status_word};

pub fn render(r: &ResultsFile) -> String {
    let tables: Vec<Value> = table::tables(r)
        .iter()
        .map(|t| {
            json!({
                "bus": t.bus,
                "columns": t.columns,
                "rows": t.rows.iter().map(|row| json!({
                    "adapter": row.adapter.id,
                    "label": row_label(row.adapter),
                    "library": row.adapter.library,
                    "version": row.adapter.version,
                    "baseline": row.adapter.baseline,
                    "cells": row.cells.iter().map(|e| e.as_ref().map(|e| json!({
                        "status": status_word(e.cell.status()),
                        "median_ns": e.cell.median_ns(),
                        "ratio_to_fastest": e.ratio,
                        "reason": e.cell.reason(),
                    }))).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let v = json!({
        "run": r.run,
        "environment": r.environment,
        "tables": tables,
    });
    serde_json::to_string_pretty(&v).expect("serializable") + "\n"
}
