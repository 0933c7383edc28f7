//! `dbus-matrix compare OLD NEW`: per cell, NEW/OLD with a significance verdict.
//!
//! Wall time (`stats::wall_significance`): when both cells were measured in
//! several rounds (`wall.round_medians_ns`, two or more each), the change is
//! significant when the two medians' 95% intervals, which are then the
//! intervals of the variation between rounds, do not overlap (test
//! `round-intervals`). Otherwise (one-round cells, files from before rounds)
//! the two-sided Mann-Whitney U test on the per-sample times (`sample_ns`,
//! normal approximation with tie and continuity correction) at `alpha`
//! (`mann-whitney`); files without per-sample times fall back to "the 95%
//! intervals of the medians do not overlap" (`ci-overlap`). Either way a
//! significant change is a regression or an improvement only when the ratio
//! of medians is beyond `threshold`.
//! Instructions per operation are deterministic: any difference is real, and
//! the threshold alone decides the verdict; so for the other portable counts
//! (allocations, every process's instructions of an IPC cell, bus messages).
//! Between different machines only those are judged
//! ([`crate::analyze::compare_portable`]).

use std::collections::BTreeMap;
use std::fmt::Write;

use harness::results::{Cell, CellKey, CellStatus, Outcome, ResultsFile, Role, WallTime};
use serde::Serialize;

use crate::analyze::compare_portable::{self as portable, machines_differ};
use crate::analyze::stats::{self, Direction, Significance};
use crate::export::md_escape::{md_code, md_text};
use crate::export::model::table;

#[derive(Clone, Debug)]
pub struct CompareOptions {
    /// Relative change of the median below which a cell is unchanged (0.05 = 5%).
    pub threshold: f64,
    /// Significance level of the rank test.
    pub alpha: f64,
    pub adapters: Vec<String>,
    pub scenarios: Vec<String>,
    pub buses: Vec<String>,
    /// A cell of OLD that NEW lacks does not fail the gate.
    pub allow_missing: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Was ok, now failed.
    Broken,
    /// In OLD, not in NEW (a vanished library or scenario).
    Missing,
    /// Was ok, now unsupported: no longer measured (fails the gate as
    /// `missing` does).
    Dropped,
    Regressed,
    Improved,
    Unchanged,
    /// Was failed, now ok.
    Fixed,
    /// Status changed otherwise (supported <-> unsupported), or in NEW only.
    Changed,
}

impl Verdict {
    pub fn is_regression(self) -> bool {
        matches!(self, Verdict::Broken | Verdict::Regressed)
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Metric {
    pub old: f64,
    pub new: f64,
    /// new / old.
    pub ratio: f64,
    /// The test that decided significance: `round-intervals`, `mann-whitney`,
    /// `ci-overlap` or `exact`.
    pub test: &'static str,
    /// Two-sided p-value of the Mann-Whitney test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    pub significant: bool,
    pub verdict: Verdict,
}

#[derive(Clone, Debug, Serialize)]
pub struct CellComparison {
    pub adapter: String,
    pub scenario: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bus: Option<String>,
    /// Client and server roles are compared with their own kind only (part of the key).
    #[serde(skip_serializing_if = "Role::is_same")]
    pub role: Role,
    pub old_status: Option<CellStatus>,
    pub new_status: Option<CellStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_median_ns: Option<Metric>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions_per_op: Option<Metric>,
    /// The other portable counts, by name ([`portable::PORTABLE`]).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub portable: BTreeMap<&'static str, Metric>,
    /// The worst of the metric verdicts judged (the wall time's only on one
    /// machine), or the status change.
    pub verdict: Verdict,
}

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub old_revision: String,
    pub new_revision: String,
    pub threshold: f64,
    pub alpha: f64,
    /// `--allow-missing`: missing cells do not fail the gate.
    pub allow_missing: bool,
    /// What differs between the two runs besides the code under test
    /// (library versions, machine, toolchain, profile, bus daemons).
    pub differences: Vec<String>,
    /// The runs are from different machines: verdicts judge portable figures only.
    pub portable_only: bool,
    pub cells: Vec<CellComparison>,
}

impl Comparison {
    pub fn regressions(&self) -> usize {
        self.cells.iter().filter(|c| c.verdict.is_regression()).count()
    }

    /// Whether the gate passes: no regression, no broken cell, and no
    /// missing or dropped cell unless allowed.
    pub fn passes(&self) -> bool {
        self.regressions() == 0
            && (self.allow_missing || self.count(Verdict::Missing) + self.count(Verdict::Dropped) == 0)
    }

    pub fn count(&self, v: Verdict) -> usize {
        self.cells.iter().filter(|c| c.verdict == v).count()
    }
}

pub fn compare(old: &ResultsFile, new: &ResultsFile, opts: &CompareOptions) -> anyhow::Result<Comparison> {
    let wanted = |c: &Cell| {
        (opts.adapters.is_empty() || opts.adapters.contains(&c.adapter))
            && (opts.scenarios.is_empty() || opts.scenarios.contains(&c.scenario))
            && (opts.buses.is_empty() || c.bus.as_ref().is_some_and(|b| opts.buses.contains(b)))
    };
    let index = |r| index_cells(r, &wanted);
    check_filters(old, new, opts)?;
    let (old_cells, new_cells) = (index(old), index(new));
    let mut keys: Vec<&CellKey> = old_cells.keys().chain(new_cells.keys()).collect();
    keys.sort();
    keys.dedup();
    let portable_only = machines_differ(old, new);
    let cells = keys
        .into_iter()
        .map(|k| {
            compare_cell(
                k,
                old_cells.get(k).copied(),
                new_cells.get(k).copied(),
                opts,
                portable_only,
            )
        })
        .collect();
    Ok(Comparison {
        old_revision: old.run.revision.clone(),
        new_revision: new.run.revision.clone(),
        threshold: opts.threshold,
        alpha: opts.alpha,
        allow_missing: opts.allow_missing,
        differences: differences(old, new),
        portable_only,
        cells,
    })
}

fn index_cells<'a>(r: &'a ResultsFile, wanted: &dyn Fn(&Cell) -> bool) -> BTreeMap<CellKey, &'a Cell> {
    r.cells.iter().filter(|c| wanted(c)).map(|c| (c.key(), c)).collect()
}

/// A filter naming something neither file has is a typo, not an empty result.
fn check_filters(old: &ResultsFile, new: &ResultsFile, opts: &CompareOptions) -> anyhow::Result<()> {
    let all = || old.cells.iter().chain(&new.cells);
    let check = |names: &[String], what: &str, has: &dyn Fn(&Cell, &str) -> bool| -> anyhow::Result<()> {
        for n in names {
            anyhow::ensure!(all().any(|c| has(c, n)), "no {what} {n:?} in either results file");
        }
        Ok(())
    };
    check(&opts.adapters, "adapter", &|c, n| c.adapter == n)?;
    check(&opts.scenarios, "scenario", &|c, n| c.scenario == n)?;
    check(&opts.buses, "bus", &|c, n| c.bus.as_deref() == Some(n))
}

fn compare_cell(
    key: &CellKey,
    old: Option<&Cell>,
    new: Option<&Cell>,
    opts: &CompareOptions,
    portable_only: bool,
) -> CellComparison {
    let CellKey {
        adapter,
        scenario,
        bus,
        role,
    } = key.clone();
    let mut out = CellComparison {
        adapter,
        scenario,
        bus,
        role,
        old_status: old.map(Cell::status),
        new_status: new.map(Cell::status),
        wall_median_ns: None,
        instructions_per_op: None,
        portable: BTreeMap::new(),
        verdict: Verdict::Changed,
    };
    let (Some(o), Some(n)) = (old, new) else {
        if new.is_none() {
            out.verdict = Verdict::Missing;
        }
        return out;
    };
    out.verdict = match (&o.outcome, &n.outcome) {
        (Outcome::Ok(_), Outcome::Failed { .. }) => Verdict::Broken,
        // Decided before (unsupported), failing now: something broke.
        (Outcome::Unsupported { .. }, Outcome::Failed { .. }) => Verdict::Broken,
        (Outcome::Ok(_), Outcome::Unsupported { .. }) => Verdict::Dropped,
        (Outcome::Failed { .. }, Outcome::Ok(_)) => Verdict::Fixed,
        (Outcome::Ok(om), Outcome::Ok(nm)) => {
            out.wall_median_ns = Some(wall_metric(&om.wall, &nm.wall, opts));
            if let (Some(a), Some(b)) = (om.instructions_per_op, nm.instructions_per_op) {
                out.instructions_per_op = Some(exact_metric(a, b, opts.threshold));
            }
            for f in portable::PORTABLE {
                if let (Some(a), Some(b)) = ((f.value)(om), (f.value)(nm)) {
                    out.portable.insert(f.name, exact_metric(a, b, opts.threshold));
                }
            }
            let wall = out
                .wall_median_ns
                .as_ref()
                .filter(|_| portable::judges_time(portable_only));
            [wall, out.instructions_per_op.as_ref()]
                .into_iter()
                .flatten()
                .chain(out.portable.values())
                .map(|m| m.verdict)
                .min()
                .unwrap_or(Verdict::Unchanged)
        }
        _ if o.status() == n.status() => Verdict::Unchanged,
        _ => Verdict::Changed,
    };
    out
}

fn by_threshold(ratio: f64, significant: bool, threshold: f64) -> Verdict {
    match stats::beyond_threshold(ratio, threshold) {
        _ if !significant => Verdict::Unchanged,
        Some(Direction::Up) => Verdict::Regressed,
        Some(Direction::Down) => Verdict::Improved,
        None => Verdict::Unchanged,
    }
}

fn wall_metric(old: &WallTime, new: &WallTime, opts: &CompareOptions) -> Metric {
    let ratio = new.median_ns.point / old.median_ns.point;
    let Significance {
        test,
        p_value,
        significant,
    } = stats::wall_significance(old, new, opts.alpha);
    Metric {
        old: old.median_ns.point,
        new: new.median_ns.point,
        ratio,
        test,
        p_value,
        significant,
        verdict: by_threshold(ratio, significant, opts.threshold),
    }
}

fn exact_metric(old: f64, new: f64, threshold: f64) -> Metric {
    let ratio = if old == 0.0 && new == 0.0 { 1.0 } else { new / old };
    let significant = old != new;
    Metric {
        old,
        new,
        ratio,
        test: "exact",
        p_value: None,
        significant,
        verdict: by_threshold(ratio, significant, threshold),
    }
}

/// Everything besides the code under test that differs between the runs.
pub(crate) fn differences(old: &ResultsFile, new: &ResultsFile) -> Vec<String> {
    let mut d = Vec::new();
    let mut field = |what: &str, a: &str, b: &str| {
        if a != b {
            d.push(format!("{what}: {a} → {b}"));
        }
    };
    field("profile", &old.run.profile, &new.run.profile);
    field("tool version", &old.run.tool_version, &new.run.tool_version);
    let (oe, ne) = (&old.environment, &new.environment);
    field("machine (hostname hash)", &oe.hostname_hash, &ne.hostname_hash);
    field("CPU", &oe.cpu_model, &ne.cpu_model);
    field("CPUs", &oe.cpus.to_string(), &ne.cpus.to_string());
    field(
        "memory bytes",
        &oe.memory_bytes.to_string(),
        &ne.memory_bytes.to_string(),
    );
    field("kernel", &oe.kernel, &ne.kernel);
    field("OS", &oe.os, &ne.os);
    field("rustc", &oe.rustc, &ne.rustc);
    field("mode", &oe.mode, &ne.mode);
    field(
        "valgrind",
        oe.valgrind.as_deref().unwrap_or("none"),
        ne.valgrind.as_deref().unwrap_or("none"),
    );
    field(
        "placement",
        old.run.placement.as_deref().unwrap_or("none"),
        new.run.placement.as_deref().unwrap_or("none"),
    );
    for a in &old.adapters {
        if let Some(b) = new.adapters.iter().find(|b| b.id == a.id) {
            field(&format!("{} version", a.id), &a.version, &b.version);
        }
    }
    for a in &old.buses {
        if let Some(b) = new.buses.iter().find(|b| b.id == a.id) {
            field(&format!("bus {}", a.id), &a.description, &b.description);
        }
    }
    d
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Broken => "**broken**",
        Verdict::Missing => "**missing**",
        Verdict::Dropped => "**dropped**",
        Verdict::Regressed => "**regressed**",
        Verdict::Improved => "improved",
        Verdict::Unchanged => "unchanged",
        Verdict::Fixed => "fixed",
        Verdict::Changed => "changed",
    }
}

/// A cell's status word, `absent` when the run has no such cell.
fn status_word(s: Option<CellStatus>) -> &'static str {
    s.map_or("absent", table::status_word)
}

pub fn markdown(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## dbus-matrix compare: `{}` → `{}`\n",
        md_code(&c.old_revision),
        md_code(&c.new_revision)
    );
    let _ = writeln!(
        s,
        "{} regressed or broken, {} missing{}{}, {} improved or fixed, {} unchanged, {} changed status; threshold {:.1}%, \
         Mann-Whitney U at α = {} on per-sample wall times, instruction counts compared exactly.\n",
        c.regressions(),
        c.count(Verdict::Missing),
        match c.count(Verdict::Dropped) {
            0 => String::new(),
            n => format!(", {n} dropped (ok, now unsupported)"),
        },
        if c.allow_missing { " (allowed)" } else { "" },
        c.count(Verdict::Improved) + c.count(Verdict::Fixed),
        c.count(Verdict::Unchanged),
        c.count(Verdict::Changed),
        c.threshold * 100.0,
        c.alpha
    );
    let by_rounds = c
        .cells
        .iter()
        .filter(|r| {
            r.wall_median_ns
                .as_ref()
                .is_some_and(|m| m.test == stats::ROUND_INTERVALS)
        })
        .count();
    if by_rounds > 0 {
        let _ = writeln!(
            s,
            "{by_rounds} cells measured in several rounds in both runs (p column `{}`): significant when the 95% \
             intervals of the two medians, from the variation between rounds, do not overlap; the other cells as \
             above.\n",
            stats::ROUND_INTERVALS
        );
    }
    if c.portable_only {
        let _ = writeln!(s, "{}\n", portable::PORTABLE_ONLY_NOTE);
    }
    if !c.differences.is_empty() {
        let _ = writeln!(s, "Not like for like — these differ between the runs:\n");
        for d in &c.differences {
            let _ = writeln!(s, "- {}", md_text(d));
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "| adapter | scenario | bus | old | new | new/old | p | instructions new/old | verdict |"
    );
    let _ = writeln!(s, "|---|---|---|---:|---:|---:|---:|---:|---|");
    let mut rows: Vec<&CellComparison> = c.cells.iter().collect();
    rows.sort_by_key(|r| r.verdict);
    for r in rows {
        let (old, new, ratio, p) = match &r.wall_median_ns {
            Some(m) => (
                table::duration(m.old),
                table::duration(m.new),
                format!("{:.3}×", m.ratio),
                m.p_value.map_or_else(|| m.test.to_string(), |p| format!("{p:.3}")),
            ),
            None => (
                status_word(r.old_status).to_string(),
                status_word(r.new_status).to_string(),
                String::new(),
                String::new(),
            ),
        };
        // A codec cell's count, else the IPC cell's processes together.
        let instr = r
            .instructions_per_op
            .as_ref()
            .or_else(|| r.portable.get("ipc_instructions_per_op"))
            .map(|m| format!("{:.0} → {:.0} ({:.3}×)", m.old, m.new, m.ratio))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "| {} | {}{} | {} | {old} | {new} | {ratio} | {p} | {instr} | {} |",
            md_text(&r.adapter),
            md_text(&r.scenario),
            r.role.label_suffix(),
            md_text(r.bus.as_deref().unwrap_or("")),
            verdict_word(r.verdict)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_and_exact_instruction_counts() {
        assert_eq!(by_threshold(1.2, true, 0.05), Verdict::Regressed);
        assert_eq!(by_threshold(1.2, false, 0.05), Verdict::Unchanged);
        assert_eq!(by_threshold(1.01, true, 0.05), Verdict::Unchanged);
        assert_eq!(by_threshold(0.8, true, 0.05), Verdict::Improved);
        let same = exact_metric(1000.0, 1000.0, 0.0);
        assert!(!same.significant);
        assert_eq!(same.verdict, Verdict::Unchanged);
        assert_eq!(exact_metric(1000.0, 1001.0, 0.0).verdict, Verdict::Regressed);
    }
}
