//! `dbus-matrix history FILE_OR_DIR...`: per cell, the median over many runs
//! in the order they started, with steps marked.
//!
//! A point is a step when both hold:
//! - its median is beyond `threshold` from the level of the series: the
//!   median of the medians of the ok points since the last step (with one
//!   such point, that point), in the ratio sense `compare` uses
//!   (above `1 + threshold` or below `1 / (1 + threshold)`);
//! - the change from the previous ok point of the series is significant, as
//!   in compare (`stats::wall_significance`): when both runs measured the cell
//!   in several rounds, the two medians' between-round 95% intervals do not
//!   overlap; otherwise the two-sided Mann-Whitney U test on the per-sample
//!   times at `alpha`, or, when either run has no per-sample times, the 95%
//!   intervals of the two medians do not overlap.
//!
//! Cells that are not ok (or absent from a run) show their status and are
//! skipped by the step detection.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::PathBuf;

use harness::results::{Cell, CellKey, ResultsFile, Role, WallTime};
use serde::Serialize;

use crate::analyze::selection::CellSelection;
use crate::analyze::stats::{self, median, Direction};
use crate::export::model::table::{self, duration};

#[derive(Clone, Debug)]
pub struct HistoryOptions {
    /// Relative change of the median from the series' level that counts (0.05 = 5%).
    pub threshold: f64,
    /// Significance level of the rank test against the previous run.
    pub alpha: f64,
    pub cells: CellSelection,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    /// Slower.
    Up,
    /// Faster.
    Down,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunLabel {
    pub file: String,
    pub run_start: String,
    pub revision: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub run_start: String,
    pub revision: String,
    /// `ok`, `unsupported`, `failed`, or `absent` (no such cell in this run).
    pub status: &'static str,
    pub median_ns: Option<f64>,
    pub step: Option<Step>,
    /// Mann-Whitney p-value against the previous ok point, when tested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    /// The between-round intervals decided against the previous ok point
    /// (both measured in several rounds); absent when the samples did.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub round_intervals: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Series {
    pub adapter: String,
    pub scenario: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus: Option<String>,
    /// A role apart is a series of its own (part of the key).
    #[serde(skip_serializing_if = "Role::is_same")]
    pub role: Role,
    pub points: Vec<Point>,
}

#[derive(Clone, Debug, Serialize)]
pub struct History {
    pub threshold: f64,
    pub alpha: f64,
    /// The runs in time order (the columns of the markdown table).
    pub runs: Vec<RunLabel>,
    pub series: Vec<Series>,
}

impl History {
    pub fn steps(&self) -> usize {
        self.series
            .iter()
            .flat_map(|s| &s.points)
            .filter(|p| p.step.is_some())
            .count()
    }
}

/// The results files named by `inputs` (directories: every `*.json` directly
/// inside, by name). Files that do not load are returned with their error.
pub fn load_inputs(inputs: &[PathBuf]) -> (Vec<(PathBuf, ResultsFile)>, Vec<anyhow::Error>) {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut errors = Vec::new();
    for input in inputs {
        if input.is_dir() {
            match std::fs::read_dir(input) {
                Ok(entries) => {
                    let mut found: Vec<PathBuf> = entries
                        .flatten()
                        .map(|e| e.path())
                        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
                        .collect();
                    found.sort();
                    files.extend(found);
                }
                Err(e) => {
                    errors.push(anyhow::Error::new(e).context(format!("cannot read directory {}", input.display())))
                }
            }
        } else {
            files.push(input.clone());
        }
    }
    let mut seen = BTreeSet::new();
    let mut loaded = Vec::new();
    for f in files {
        if !seen.insert(f.canonicalize().unwrap_or_else(|_| f.clone())) {
            continue; // the same file named twice (directly and through its directory)
        }
        match crate::store::load(&f) {
            Ok(r) => loaded.push((f, r)),
            Err(e) => errors.push(e),
        }
    }
    (loaded, errors)
}

/// `runs` in any order; they are ordered by `run.started_at` (RFC 3339 UTC,
/// compared as text), then `run.finished_at`, then the order given.
pub fn history(runs: &[(PathBuf, ResultsFile)], opts: &HistoryOptions) -> anyhow::Result<History> {
    opts.cells
        .check_names(runs.iter().flat_map(|(_, r)| &r.cells), "any results file")?;
    let mut ordered: Vec<&(PathBuf, ResultsFile)> = runs.iter().collect();
    ordered.sort_by(|(_, a), (_, b)| {
        (&a.run.started_at, &a.run.finished_at).cmp(&(&b.run.started_at, &b.run.finished_at))
    });
    let indexed: Vec<BTreeMap<CellKey, &Cell>> = ordered.iter().map(|(_, r)| opts.cells.index(r)).collect();
    let keys: BTreeSet<&CellKey> = indexed.iter().flat_map(|m| m.keys()).collect();
    let series = keys
        .into_iter()
        .map(|key| {
            let cells: Vec<Option<&Cell>> = indexed.iter().map(|m| m.get(key).copied()).collect();
            series(key, &ordered, &cells, opts)
        })
        .collect();
    Ok(History {
        threshold: opts.threshold,
        alpha: opts.alpha,
        runs: ordered
            .iter()
            .map(|(path, r)| RunLabel {
                file: path.display().to_string(),
                run_start: r.run.started_at.clone(),
                revision: r.run.revision.clone(),
            })
            .collect(),
        series,
    })
}

fn series(key: &CellKey, runs: &[&(PathBuf, ResultsFile)], cells: &[Option<&Cell>], opts: &HistoryOptions) -> Series {
    let CellKey {
        adapter,
        scenario,
        bus,
        role,
    } = key.clone();
    // Medians of the ok points since the last step, and the previous ok point.
    let mut level: Vec<f64> = Vec::new();
    let mut previous: Option<&WallTime> = None;
    let mut points = Vec::new();
    for ((_, r), cell) in runs.iter().zip(cells) {
        let mut point = Point {
            run_start: r.run.started_at.clone(),
            revision: r.run.revision.clone(),
            status: cell.map_or("absent", |c| table::status_word(c.status())),
            median_ns: None,
            step: None,
            p_value: None,
            round_intervals: false,
        };
        let wall = cell.and_then(|c| c.measurement()).map(|m| &m.wall);
        if let Some(wall) = wall {
            let m = wall.median_ns.point;
            point.median_ns = Some(m);
            if let Some(prev) = previous {
                let change = stats::wall_significance(prev, wall, opts.alpha);
                point.p_value = change.p_value;
                point.round_intervals = change.test == stats::ROUND_INTERVALS;
                point.step = beyond(m, median(&level), opts.threshold).filter(|_| change.significant);
                if point.step.is_some() {
                    level.clear();
                }
            }
            level.push(m);
            previous = Some(wall);
        }
        points.push(point);
    }
    Series {
        adapter,
        scenario,
        bus,
        role,
        points,
    }
}

/// Up or down when `value / reference` is beyond `threshold` (as in compare).
fn beyond(value: f64, reference: f64, threshold: f64) -> Option<Step> {
    if reference.is_nan() || reference <= 0.0 {
        return None;
    }
    stats::beyond_threshold(value / reference, threshold).map(|d| match d {
        Direction::Up => Step::Up,
        Direction::Down => Step::Down,
    })
}

/// The first 7 characters of a git revision, keeping a `-dirty` mark.
fn short_revision(rev: &str) -> String {
    let (base, dirty) = match rev.strip_suffix("-dirty") {
        Some(b) => (b, "-dirty"),
        None => (rev, ""),
    };
    if base.len() > 7 && base.chars().all(|c| c.is_ascii_hexdigit()) {
        format!("{}{dirty}", &base[..7])
    } else {
        rev.to_string()
    }
}

pub fn markdown(h: &History) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## dbus-matrix history: {} runs\n", h.runs.len());
    let _ = writeln!(
        s,
        "{} steps. ▲ step up (slower), ▼ step down (faster): the median is more than {:.1}% away from the \
         median of the medians since the last step, and the Mann-Whitney U test on per-sample wall times \
         against the previous run is significant at α = {} (disjoint 95% intervals when samples are missing). \
         Cells that are not ok show their status; `absent` means the run has no such cell.\n",
        h.steps(),
        h.threshold * 100.0,
        h.alpha
    );
    if h.series.iter().flat_map(|s| &s.points).any(|p| p.round_intervals) {
        let _ = writeln!(
            s,
            "Where both runs measured a cell in several rounds, the 95% intervals of the two medians, from the \
             variation between rounds, decide instead of the samples: a change is significant when they do not \
             overlap.\n"
        );
    }
    let _ = write!(s, "| adapter | scenario | bus |");
    for r in &h.runs {
        let _ = write!(s, " {} `{}` |", r.run_start, short_revision(&r.revision));
    }
    let _ = write!(s, "\n|---|---|---|");
    for _ in &h.runs {
        s.push_str("---:|");
    }
    s.push('\n');
    for series in &h.series {
        let _ = write!(
            s,
            "| {} | {}{} | {} |",
            series.adapter,
            series.scenario,
            series.role.label_suffix(),
            series.bus.as_deref().unwrap_or("")
        );
        for p in &series.points {
            let text = match (p.median_ns, p.step) {
                (Some(m), Some(Step::Up)) => format!("{} ▲", duration(m)),
                (Some(m), Some(Step::Down)) => format!("{} ▼", duration(m)),
                (Some(m), None) => duration(m),
                (None, _) => p.status.to_string(),
            };
            let _ = write!(s, " {text} |");
        }
        s.push('\n');
    }
    let _ = writeln!(s, "\nRuns, oldest first:\n");
    for (i, r) in h.runs.iter().enumerate() {
        let _ = writeln!(s, "{}. {} `{}` — {}", i + 1, r.run_start, r.revision, r.file);
    }
    s
}

/// Prints the files that did not load and fails when none did.
pub fn report_skipped(loaded: usize, errors: &[anyhow::Error]) -> anyhow::Result<()> {
    for e in errors {
        crate::output::errln!("skipped: {e:#}");
    }
    if loaded == 0 && errors.is_empty() {
        anyhow::bail!("no results files (*.json) in the given paths");
    }
    anyhow::ensure!(
        loaded > 0,
        "none of the {} results files could be loaded (see the lines above)",
        errors.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_medians_and_revisions() {
        assert_eq!(beyond(110.0, 100.0, 0.05), Some(Step::Up));
        assert_eq!(beyond(90.0, 100.0, 0.05), Some(Step::Down));
        assert_eq!(beyond(103.0, 100.0, 0.05), None);
        assert_eq!(beyond(1.0, f64::NAN, 0.05), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(short_revision("0123456789abcdef"), "0123456");
        assert_eq!(short_revision("0123456789abcdef-dirty"), "0123456-dirty");
        assert_eq!(short_revision("unknown"), "unknown");
    }
}
