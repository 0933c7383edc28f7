//! `bisect`'s answer: for each asked cell, the figure of every release row
//! (`<adapter>@<version>`, in release order) and where it moved, judged by
//! [`compare`]'s rules between each release and the next (each pair as two
//! one-row results files: the run's cells of one row against the other's).

use std::fmt::Write as _;

use anyhow::Result;
use harness::results::{Cell, ResultsFile};
use serde::Serialize;

use crate::analyze::compare::{self, CompareOptions, Verdict};
use crate::analyze::compare_portable::PORTABLE;

/// One asked cell: a scenario, and its bus for an IPC scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellAsk {
    pub scenario: String,
    pub bus: Option<String>,
}

impl std::fmt::Display for CellAsk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.bus {
            Some(b) => write!(f, "{}@{b}", self.scenario),
            None => f.write_str(&self.scenario),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Step {
    pub from: String,
    pub to: String,
    pub verdict: Verdict,
    /// new / old median, where both measured.
    pub ratio: Option<f64>,
    /// The counts whose verdict is not unchanged (compare's threshold), `name old → new`.
    pub counts: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct CellReport {
    pub cell: String,
    /// The rows beside (for reference), then each release's.
    pub rows: Vec<RowFigures>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Serialize)]
pub struct RowFigures {
    pub version: String,
    pub status: String,
    pub median_ns: Option<f64>,
    pub instructions_per_op: Option<f64>,
    pub portable: Vec<(&'static str, f64)>,
}

/// The cell `ask` of the row `row` in `r`.
fn cell<'r>(r: &'r ResultsFile, row: &str, ask: &CellAsk) -> Option<&'r Cell> {
    r.cells
        .iter()
        .find(|c| c.adapter == row && c.scenario == ask.scenario && c.bus == ask.bus && c.role.is_same())
}

/// `r` with only the row `row`'s cells of `ask`, named `as_id`.
fn one_row(r: &ResultsFile, row: &str, ask: &CellAsk, as_id: &str) -> ResultsFile {
    let mut out = r.clone();
    out.cells = cell(r, row, ask)
        .into_iter()
        .cloned()
        .map(|mut c| {
            c.adapter = as_id.to_string();
            c
        })
        .collect();
    out.adapters.retain(|a| a.id == row);
    for a in &mut out.adapters {
        a.id = as_id.to_string();
    }
    out
}

/// The report of every asked cell over `rows` (row id, version), in release
/// order; `beside` (row id, label): other rows of the run shown above them,
/// for reference, not judged.
pub fn report(
    r: &ResultsFile,
    rows: &[(String, String)],
    beside: &[(String, String)],
    asks: &[CellAsk],
    opts: &CompareOptions,
) -> Result<Vec<CellReport>> {
    let mut out = Vec::new();
    for ask in asks {
        let figures = beside
            .iter()
            .chain(rows)
            .map(|(id, version)| {
                let c = cell(r, id, ask);
                let m = c.and_then(Cell::measurement);
                RowFigures {
                    version: version.clone(),
                    status: c.map_or("missing".into(), |c| format!("{:?}", c.status()).to_lowercase()),
                    median_ns: c.and_then(Cell::median_ns),
                    instructions_per_op: m.and_then(|m| m.instructions_per_op),
                    portable: m
                        .map(|m| {
                            PORTABLE
                                .iter()
                                .filter_map(|f| (f.value)(m).map(|v| (f.name, v)))
                                .collect()
                        })
                        .unwrap_or_default(),
                }
            })
            .collect();
        let mut steps = Vec::new();
        for pair in rows.windows(2) {
            let (old, new) = (&pair[0], &pair[1]);
            let c = compare::compare(&one_row(r, &old.0, ask, "row"), &one_row(r, &new.0, ask, "row"), opts)?;
            let Some(cc) = c.cells.first() else { continue };
            steps.push(Step {
                from: old.1.clone(),
                to: new.1.clone(),
                verdict: cc.verdict,
                ratio: cc.wall_median_ns.as_ref().map(|m| m.ratio),
                counts: cc
                    .instructions_per_op
                    .iter()
                    .map(|m| ("instructions_per_op", m))
                    .chain(cc.portable.iter().map(|(n, m)| (*n, m)))
                    .filter(|(_, m)| m.verdict != Verdict::Unchanged)
                    .map(|(n, m)| format!("{n} {} → {}", fmt_count(m.old), fmt_count(m.new)))
                    .collect(),
            });
        }
        out.push(CellReport {
            cell: ask.to_string(),
            rows: figures,
            steps,
        });
    }
    Ok(out)
}

fn fmt_count(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn fmt_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// Where each cell moved, then its figures per release.
pub fn markdown(adapter: &str, krate: &str, reports: &[CellReport]) -> String {
    let mut out = String::new();
    for c in reports {
        let _ = writeln!(out, "## {adapter} with each {krate} release: {}\n", c.cell);
        let moved: Vec<&Step> = c
            .steps
            .iter()
            .filter(|s| !matches!(s.verdict, Verdict::Unchanged))
            .collect();
        if moved.is_empty() {
            let _ = writeln!(out, "Did not move between consecutive releases (by compare's rules).\n");
        }
        for s in moved {
            let ratio = s
                .ratio
                .map_or(String::new(), |r| format!(" ({:+.1}%)", (r - 1.0) * 100.0));
            let counts = if s.counts.is_empty() {
                String::new()
            } else {
                format!("; {}", s.counts.join(", "))
            };
            let verdict = format!("{:?}", s.verdict).to_lowercase();
            let _ = writeln!(out, "- **{} → {}: {verdict}**{ratio}{counts}", s.from, s.to);
        }
        out.push('\n');
        let names: Vec<&str> = {
            let mut n: Vec<&str> = c.rows.iter().flat_map(|r| r.portable.iter().map(|p| p.0)).collect();
            n.sort();
            n.dedup();
            n
        };
        let _ = writeln!(
            out,
            "| {krate} | status | median | instructions/op |{}",
            names.iter().map(|n| format!(" {n} |")).collect::<String>()
        );
        let _ = writeln!(out, "|---|---|---:|---:|{}", "---:|".repeat(names.len()));
        for r in &c.rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |{}",
                r.version,
                r.status,
                r.median_ns.map_or("–".into(), fmt_ns),
                r.instructions_per_op.map_or("–".into(), fmt_count),
                names
                    .iter()
                    .map(|n| format!(
                        " {} |",
                        r.portable
                            .iter()
                            .find(|p| p.0 == *n)
                            .map_or("–".into(), |p| fmt_count(p.1))
                    ))
                    .collect::<String>()
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_fixtures::tiny;

    #[test]
    fn a_step_between_releases_is_found_and_a_flat_one_is_not() {
        // Three release rows made of the fixture's a-1 cells: 1.0 and 1.1 the
        // same, 1.2 three times slower on call/void over dbus-daemon.
        let mut r = tiny();
        let base: Vec<Cell> = r.cells.iter().filter(|c| c.adapter == "a-1").cloned().collect();
        r.cells.clear();
        let mut adapters = Vec::new();
        for (i, v) in ["1.0.0", "1.1.0", "1.2.0"].iter().enumerate() {
            let id = format!("a-1@{v}");
            for c in &base {
                let mut c = c.clone();
                c.adapter = id.clone();
                if let Some(m) = c.measurement_mut().filter(|_| i == 2) {
                    for e in [&mut m.wall.median_ns, &mut m.wall.mean_ns] {
                        (e.point, e.lower, e.upper) = (e.point * 3.0, e.lower * 3.0, e.upper * 3.0);
                    }
                    m.wall.sample_ns.iter_mut().for_each(|s| *s *= 3.0);
                }
                r.cells.push(c);
            }
            let mut a = r.adapters[0].clone();
            a.id = id.clone();
            adapters.push(a);
        }
        r.adapters = adapters;
        let rows: Vec<(String, String)> = ["1.0.0", "1.1.0", "1.2.0"]
            .iter()
            .map(|v| (format!("a-1@{v}"), v.to_string()))
            .collect();
        let ask = CellAsk {
            scenario: "call/void".into(),
            bus: Some("dbus-daemon".into()),
        };
        let opts = CompareOptions {
            threshold: 0.05,
            alpha: 0.05,
            adapters: vec![],
            scenarios: vec![],
            buses: vec![],
            allow_missing: false,
        };
        let beside = [("a-1@1.0.0".to_string(), "a-1 (reference)".to_string())];
        let rep = report(&r, &rows, &beside, &[ask], &opts).unwrap();
        assert_eq!(rep[0].rows.len(), 4);
        assert_eq!(rep[0].rows[0].version, "a-1 (reference)");
        assert_eq!(rep[0].steps.len(), 2, "the rows beside are not judged");
        assert_eq!(rep[0].steps[0].verdict, Verdict::Unchanged, "{:?}", rep[0].steps);
        assert_eq!(rep[0].steps[1].verdict, Verdict::Regressed, "{:?}", rep[0].steps);
        let md = markdown("a-1", "a", &rep);
        assert!(md.contains("**1.1.0 → 1.2.0: regressed** (+200.0%)"), "{md}");
        assert!(!md.contains("1.0.0 → 1.1.0"), "{md}");
    }
}
