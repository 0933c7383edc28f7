//! `dbus-matrix spread FILE FILE [FILE...]`: how far the same cell moves
//! between runs of the same profile on the same machine.
//!
//! A cell's run-to-run spread is `(max - min) / median` of its wall-time
//! medians (`measurement.wall.median_ns.point`) over the files where it is
//! ok. Only cells ok in at least two files count; a cell whose timing was
//! `cut` to one operation, ok in one file only, or with a median that is not
//! a positive number is set apart with the reason. Cells ok in no file are
//! left out.
//!
//! Summaries: overall, per group (codec: marshal/demarshal, floor:
//! baseline/*, IPC per bus) and `call/void` per bus. A cell is over the
//! target when its spread is above it, and beyond its own interval when its
//! spread is above the widest of its files' relative interval widths
//! (`WallTime::relative_width`): a rerun moved it further than the interval
//! published for it says it could.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::PathBuf;

use harness::results::{Cell, CellKey, ResultsFile};
use serde::Serialize;

use crate::analyze::history::RunLabel;
use crate::analyze::selection::CellSelection;
use crate::analyze::stats::median;
use crate::export::model::table::{self, duration};

/// The target when neither `--target` nor the files' profile sets one.
pub const DEFAULT_TARGET: f64 = 0.03;

#[derive(Clone, Debug)]
pub struct SpreadOptions {
    /// `--target`: the relative spread a cell should stay within.
    pub target: Option<f64>,
    /// Files of different profiles are compared anyway.
    pub allow_mixed: bool,
    /// Only the N worst cells in the cell list.
    pub top: Option<usize>,
    pub cells: CellSelection,
}

/// Where the target came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetSource {
    /// `--target`.
    Option,
    /// The files' `plan.fingerprint.profile.target_width` (all agree).
    Profile,
    /// [`DEFAULT_TARGET`].
    Default,
}

/// Which summary a cell belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    /// marshal/*, demarshal/*: no bus, not a baseline.
    Codec,
    /// baseline/*: the raw-socket floor.
    Floor,
    /// On a bus (the summary names it).
    Ipc,
}

#[derive(Clone, Debug, Serialize)]
pub struct CellSpread {
    pub adapter: String,
    pub scenario: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus: Option<String>,
    pub group: Group,
    /// The median of each file, in the order given; `null` where not ok.
    pub medians_ns: Vec<Option<f64>>,
    /// `(max - min) / median` of the medians.
    pub spread: f64,
    /// The widest relative interval width (`(upper - lower) / median`) of the files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub widest_interval: Option<f64>,
    pub over_target: bool,
    /// The spread is above `widest_interval`.
    pub beyond_own_interval: bool,
}

impl CellSpread {
    fn name(&self) -> CellName {
        CellName {
            adapter: self.adapter.clone(),
            scenario: self.scenario.clone(),
            bus: self.bus.clone(),
            spread: self.spread,
        }
    }
}

/// The worst cell of a summary.
#[derive(Clone, Debug, Serialize)]
pub struct CellName {
    pub adapter: String,
    pub scenario: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus: Option<String>,
    pub spread: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// `all`, `codec`, `floor`, `ipc` or `call/void`.
    pub group: &'static str,
    /// The bus of an `ipc` or `call/void` summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus: Option<String>,
    pub cells: usize,
    pub median_spread: f64,
    pub worst: CellName,
    pub over_target: usize,
    /// `over_target / cells`.
    pub over_target_share: f64,
    pub beyond_own_interval: usize,
}

/// A cell left out of the statistics, and why.
#[derive(Clone, Debug, Serialize)]
pub struct SetApart {
    pub adapter: String,
    pub scenario: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus: Option<String>,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Spread {
    /// The files, in the order given (the columns of `medians_ns`).
    pub runs: Vec<RunLabel>,
    pub profile: String,
    pub target: f64,
    pub target_source: TargetSource,
    /// What differs between the runs besides chance (machine, versions, ...), as `compare` names it.
    pub differences: Vec<String>,
    pub overall: Summary,
    /// Codec, floor, then IPC per bus (by bus id); groups without cells are left out.
    pub groups: Vec<Summary>,
    /// `call/void` per bus.
    pub call_void: Vec<Summary>,
    /// Cells in the statistics (`cells` may show fewer: `--top`).
    pub cells_total: usize,
    /// Worst spread first.
    pub cells: Vec<CellSpread>,
    pub set_apart: Vec<SetApart>,
}

impl Spread {
    pub fn worst_spread(&self) -> f64 {
        self.overall.worst.spread
    }
}

pub fn spread(runs: &[(PathBuf, ResultsFile)], opts: &SpreadOptions) -> anyhow::Result<Spread> {
    anyhow::ensure!(
        runs.len() >= 2,
        "spread needs at least two different results files (got {})",
        runs.len()
    );
    let profile = check_profiles(runs, opts.allow_mixed)?;
    opts.cells
        .check_names(runs.iter().flat_map(|(_, r)| &r.cells), "any results file")?;
    let (target, target_source) = target(runs, opts.target);
    let names: Vec<String> = runs.iter().map(|(p, _)| p.display().to_string()).collect();
    let indexed: Vec<BTreeMap<CellKey, &Cell>> = runs.iter().map(|(_, r)| opts.cells.index(r)).collect();
    let keys: BTreeSet<&CellKey> = indexed.iter().flat_map(|m| m.keys()).collect();
    let mut cells = Vec::new();
    let mut set_apart = Vec::new();
    for key in keys {
        let per_file: Vec<Option<&Cell>> = indexed.iter().map(|m| m.get(key).copied()).collect();
        match cell_spread(key, &per_file, &names, target) {
            Ok(Some(c)) => cells.push(c),
            Ok(None) => {}
            Err(reason) => set_apart.push(SetApart {
                adapter: key.adapter.clone(),
                scenario: key.scenario.clone(),
                bus: key.bus.clone(),
                reason,
            }),
        }
    }
    cells.sort_by(|a, b| b.spread.total_cmp(&a.spread));
    let Some(overall) = summary("all", None, &cells.iter().collect::<Vec<_>>()) else {
        anyhow::bail!(
            "no cell is ok in at least two of the files{} ({} set apart: cut, ok in one file only, or no positive median)",
            if opts.cells.adapters.is_empty() && opts.cells.scenarios.is_empty() && opts.cells.buses.is_empty() {
                ""
            } else {
                " among the selected cells"
            },
            set_apart.len()
        );
    };
    let (groups, call_void) = group_summaries(&cells);
    let mut differences = Vec::new();
    for ((_, r), name) in runs[1..].iter().zip(&names[1..]) {
        for d in crate::analyze::compare::differences(&runs[0].1, r) {
            differences.push(format!("{name} against {}: {d}", names[0]));
        }
    }
    let cells_total = cells.len();
    cells.truncate(opts.top.unwrap_or(usize::MAX));
    Ok(Spread {
        runs: runs
            .iter()
            .zip(names)
            .map(|((_, r), file)| RunLabel {
                file,
                run_start: r.run.started_at.clone(),
                revision: r.run.revision.clone(),
            })
            .collect(),
        profile,
        target,
        target_source,
        differences,
        overall,
        groups,
        call_void,
        cells_total,
        cells,
        set_apart,
    })
}

/// The profile all files share; with `allow_mixed`, the names joined.
fn check_profiles(runs: &[(PathBuf, ResultsFile)], allow_mixed: bool) -> anyhow::Result<String> {
    let profiles: BTreeSet<&str> = runs.iter().map(|(_, r)| r.run.profile.as_str()).collect();
    if profiles.len() > 1 && !allow_mixed {
        let each: Vec<String> = runs
            .iter()
            .map(|(p, r)| format!("{}: {}", p.display(), r.run.profile))
            .collect();
        anyhow::bail!(
            "the files are runs of different profiles ({}): their spread would measure the profiles, not the \
             machine; --allow-mixed compares them anyway",
            each.join(", ")
        );
    }
    Ok(profiles.into_iter().collect::<Vec<_>>().join("+"))
}

/// `--target`, else the profile's `target_width` when every file has the
/// same one, else [`DEFAULT_TARGET`].
fn target(runs: &[(PathBuf, ResultsFile)], given: Option<f64>) -> (f64, TargetSource) {
    if let Some(t) = given {
        return (t, TargetSource::Option);
    }
    let widths: Vec<Option<f64>> = runs
        .iter()
        .map(|(_, r)| r.plan.as_ref().and_then(|p| p.fingerprint.profile.target_width))
        .collect();
    match widths[0] {
        Some(w) if w.is_finite() && w > 0.0 && widths.iter().all(|x| *x == Some(w)) => (w, TargetSource::Profile),
        _ => (DEFAULT_TARGET, TargetSource::Default),
    }
}

/// The cell's spread; `Ok(None)` when it is ok in no file; `Err(reason)` when it is set apart.
fn cell_spread(
    key: &CellKey,
    per_file: &[Option<&Cell>],
    names: &[String],
    target: f64,
) -> Result<Option<CellSpread>, String> {
    let ok: Vec<(usize, &harness::results::Measurement)> = per_file
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.and_then(|c| c.measurement()).map(|m| (i, m)))
        .collect();
    if ok.is_empty() {
        return Ok(None);
    }
    if let Some((i, m)) = ok.iter().find(|(_, m)| m.cut.is_some()) {
        return Err(format!(
            "timing cut in {}: {}",
            names[*i],
            m.cut.as_deref().unwrap_or_default()
        ));
    }
    if ok.len() == 1 {
        let others: Vec<String> = per_file
            .iter()
            .zip(names)
            .filter(|(c, _)| !c.is_some_and(|c| c.measurement().is_some()))
            .map(|(c, name)| format!("{} in {name}", c.map_or("absent", |c| table::status_word(c.status()))))
            .collect();
        return Err(format!("ok in {} only ({})", names[ok[0].0], others.join(", ")));
    }
    if let Some((i, _)) = ok
        .iter()
        .find(|(_, m)| !(m.wall.median_ns.point.is_finite() && m.wall.median_ns.point > 0.0))
    {
        return Err(format!("the median in {} is not a positive number", names[*i]));
    }
    let medians: Vec<f64> = ok.iter().map(|(_, m)| m.wall.median_ns.point).collect();
    let spread = spread_of(&medians);
    let widest_interval = ok
        .iter()
        .filter_map(|(_, m)| m.wall.relative_width())
        .max_by(f64::total_cmp);
    let mut medians_ns = vec![None; per_file.len()];
    for (i, m) in &ok {
        medians_ns[*i] = Some(m.wall.median_ns.point);
    }
    Ok(Some(CellSpread {
        adapter: key.adapter.clone(),
        scenario: key.scenario.clone(),
        bus: key.bus.clone(),
        group: group_of(key),
        medians_ns,
        spread,
        widest_interval,
        over_target: spread > target,
        beyond_own_interval: widest_interval.is_some_and(|w| spread > w),
    }))
}

/// `(max - min) / median` of positive medians.
pub fn spread_of(medians: &[f64]) -> f64 {
    let max = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = medians.iter().copied().fold(f64::INFINITY, f64::min);
    (max - min) / median(medians)
}

fn group_of(key: &CellKey) -> Group {
    match &key.bus {
        Some(_) => Group::Ipc,
        None if key.scenario.starts_with("baseline/") => Group::Floor,
        None => Group::Codec,
    }
}

/// Codec, floor and IPC per bus; `call/void` per bus.
fn group_summaries(cells: &[CellSpread]) -> (Vec<Summary>, Vec<Summary>) {
    let of = |keep: &dyn Fn(&CellSpread) -> bool| -> Vec<&CellSpread> { cells.iter().filter(|c| keep(c)).collect() };
    let buses: BTreeSet<&str> = cells.iter().filter_map(|c| c.bus.as_deref()).collect();
    let mut groups = Vec::new();
    groups.extend(summary("codec", None, &of(&|c| c.group == Group::Codec)));
    groups.extend(summary("floor", None, &of(&|c| c.group == Group::Floor)));
    for bus in &buses {
        groups.extend(summary("ipc", Some(bus), &of(&|c| c.bus.as_deref() == Some(bus))));
    }
    let call_void = buses
        .iter()
        .filter_map(|bus| {
            summary(
                "call/void",
                Some(bus),
                &of(&|c| c.bus.as_deref() == Some(bus) && c.scenario == "call/void"),
            )
        })
        .collect();
    (groups, call_void)
}

/// `None` for no cells. `cells` are worst first.
fn summary(group: &'static str, bus: Option<&str>, cells: &[&CellSpread]) -> Option<Summary> {
    let worst = cells.first()?;
    let spreads: Vec<f64> = cells.iter().map(|c| c.spread).collect();
    let over_target = cells.iter().filter(|c| c.over_target).count();
    Some(Summary {
        group,
        bus: bus.map(str::to_string),
        cells: cells.len(),
        median_spread: median(&spreads),
        worst: worst.name(),
        over_target,
        over_target_share: over_target as f64 / cells.len() as f64,
        beyond_own_interval: cells.iter().filter(|c| c.beyond_own_interval).count(),
    })
}

fn percent(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

fn cell_label(adapter: &str, scenario: &str, bus: Option<&str>) -> String {
    match bus {
        Some(b) => format!("{adapter} {scenario} on {b}"),
        None => format!("{adapter} {scenario}"),
    }
}

fn summary_label(s: &Summary) -> String {
    match (s.group, &s.bus) {
        ("ipc", Some(b)) => format!("IPC on {b}"),
        (g, Some(b)) => format!("{g} on {b}"),
        (g, None) => g.to_string(),
    }
}

pub fn markdown(s: &Spread) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## dbus-matrix spread: {} runs of `{}`\n", s.runs.len(), s.profile);
    let source = match s.target_source {
        TargetSource::Option => "--target",
        TargetSource::Profile => "the profile's target_width",
        TargetSource::Default => "the default: the files' profile sets no target_width",
    };
    let _ = writeln!(
        out,
        "Run-to-run spread of a cell: (max − min) / median of its wall-time medians over the runs where it is ok. \
         Target {} ({source}).\n",
        percent(s.target)
    );
    if !s.differences.is_empty() {
        let _ = writeln!(out, "Not like for like — these differ between the runs:\n");
        for d in &s.differences {
            let _ = writeln!(out, "- {d}");
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "| cells | n | median spread | worst spread | worst cell | over {} | beyond own interval |",
        percent(s.target)
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---|---:|---:|");
    for g in std::iter::once(&s.overall).chain(&s.groups).chain(&s.call_void) {
        let w = &g.worst;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} ({}) | {} |",
            summary_label(g),
            g.cells,
            percent(g.median_spread),
            percent(w.spread),
            cell_label(&w.adapter, &w.scenario, w.bus.as_deref()),
            g.over_target,
            percent(g.over_target_share),
            g.beyond_own_interval
        );
    }
    let _ = writeln!(
        out,
        "\n{} of {} cells moved between runs more than their own published interval is wide (the widest of the \
         files' 95% intervals of the median, relative to it).\n",
        s.overall.beyond_own_interval, s.overall.cells
    );
    cell_table(&mut out, s);
    if !s.set_apart.is_empty() {
        let _ = writeln!(out, "\nSet apart (not in the statistics):\n");
        let _ = writeln!(out, "| adapter | scenario | bus | reason |\n|---|---|---|---|");
        for c in &s.set_apart {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                c.adapter,
                c.scenario,
                c.bus.as_deref().unwrap_or(""),
                c.reason
            );
        }
    }
    let _ = writeln!(out, "\nRuns:\n");
    for (i, r) in s.runs.iter().enumerate() {
        let _ = writeln!(out, "{}. {} `{}` — {}", i + 1, r.run_start, r.revision, r.file);
    }
    out
}

fn cell_table(out: &mut String, s: &Spread) {
    let shown = if s.cells.len() < s.cells_total {
        format!("the {} worst of {}", s.cells.len(), s.cells_total)
    } else {
        format!("all {}", s.cells_total)
    };
    let _ = writeln!(out, "Cells, worst spread first ({shown}; **over** the target):\n");
    let _ = write!(out, "| adapter | scenario | bus |");
    for i in 1..=s.runs.len() {
        let _ = write!(out, " run {i} |");
    }
    let _ = writeln!(out, " spread | widest own interval |");
    let _ = writeln!(out, "|---|---|---|{}---:|---:|", "---:|".repeat(s.runs.len()));
    for c in &s.cells {
        let _ = write!(
            out,
            "| {} | {} | {} |",
            c.adapter,
            c.scenario,
            c.bus.as_deref().unwrap_or("")
        );
        for m in &c.medians_ns {
            let _ = write!(out, " {} |", m.map_or_else(|| "–".to_string(), duration));
        }
        let spread = if c.over_target {
            format!("**{}** over", percent(c.spread))
        } else {
            percent(c.spread)
        };
        let interval = c.widest_interval.map_or_else(String::new, |w| {
            if c.beyond_own_interval {
                format!("{} (exceeded)", percent(w))
            } else {
                percent(w)
            }
        });
        let _ = writeln!(out, " {spread} | {interval} |");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_range_over_median() {
        assert_eq!(spread_of(&[100.0, 100.0]), 0.0);
        // Two runs: 2(f - 1)/(f + 1) for a factor f.
        assert!((spread_of(&[100.0, 110.0]) - 0.2 / 2.1).abs() < 1e-15);
        assert_eq!(spread_of(&[90.0, 100.0, 110.0]), 0.2);
        assert_eq!(spread_of(&[100.0, 300.0, 100.0]), 2.0);
    }

    #[test]
    fn groups_by_bus_and_baseline() {
        let key = |s: &str, b: Option<&str>| CellKey {
            adapter: "a".into(),
            scenario: s.into(),
            bus: b.map(str::to_string),
            role: harness::results::Role::Same,
        };
        assert_eq!(group_of(&key("marshal/mixed", None)), Group::Codec);
        assert_eq!(group_of(&key("baseline/raw-socket/64", None)), Group::Floor);
        assert_eq!(group_of(&key("call/void", Some("p2p"))), Group::Ipc);
    }
}
