//! What every page of the site reads: the runs in time order (as `history`
//! orders them), `history`'s series with its steps, each run's cells by key,
//! the scenario pages' names, and what makes two runs "not like for like"
//! (`compare`'s differences, less the versions of the code under test).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use harness::results::{Cell, CellKey, ResultsFile};

use crate::analyze::compare;
use crate::analyze::history::{self, History, HistoryOptions};
use crate::analyze::selection::CellSelection;

/// One results file of the site.
pub struct Run<'a> {
    /// Where it came from, relative to the directory given (or the file's name).
    pub label: String,
    pub r: &'a ResultsFile,
    /// Its cells by key.
    pub cells: BTreeMap<CellKey, &'a Cell>,
}

impl Run<'_> {
    /// The page of the run's full report (`export::html`).
    pub fn page(index: usize) -> String {
        format!("run-{}.html", index + 1)
    }

    /// "2026-11-24T11:36:28Z · 2b8c887".
    pub fn title(&self) -> String {
        format!("{} · {}", self.r.run.started_at, short(&self.r.run.revision))
    }
}

/// The first 7 characters of a hexadecimal revision, keeping `-dirty`.
pub fn short(rev: &str) -> String {
    let (base, dirty) = rev.strip_suffix("-dirty").map_or((rev, ""), |b| (b, "-dirty"));
    if base.len() > 7 && base.chars().all(|c| c.is_ascii_hexdigit()) {
        format!("{}{dirty}", &base[..7])
    } else {
        rev.to_string()
    }
}

/// The significance settings the site's steps and verdicts use (the
/// defaults of `history` and `compare`).
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub threshold: f64,
    pub alpha: f64,
}

pub struct Site<'a> {
    pub settings: Settings,
    /// Oldest first.
    pub runs: Vec<Run<'a>>,
    /// Over `runs`, in the same order: `history.series[i].points[j]` is run j.
    pub history: History,
    /// Every scenario of every run, with its page's file name.
    pub scenarios: Vec<(String, String)>,
    /// Every adapter id of every run, for colours and the filter's suggestions.
    pub adapters: Vec<String>,
    pub buses: Vec<String>,
}

impl<'a> Site<'a> {
    /// `files` in any order: ordered by start (then finish) time, as `history` orders them.
    pub fn new(files: &'a [(PathBuf, String, ResultsFile)], settings: Settings) -> anyhow::Result<Site<'a>> {
        let mut ordered: Vec<&(PathBuf, String, ResultsFile)> = files.iter().collect();
        ordered.sort_by(|(_, _, a), (_, _, b)| {
            (&a.run.started_at, &a.run.finished_at).cmp(&(&b.run.started_at, &b.run.finished_at))
        });
        let all = CellSelection::default();
        let runs: Vec<Run<'a>> = ordered
            .iter()
            .map(|(_, label, r)| Run {
                label: label.clone(),
                r,
                cells: all.index(r),
            })
            .collect();
        // history sorts stably by the same key: its order is this one.
        let owned: Vec<(PathBuf, ResultsFile)> = ordered.iter().map(|(p, _, r)| (p.clone(), r.clone())).collect();
        let history = history::history(
            &owned,
            &HistoryOptions {
                threshold: settings.threshold,
                alpha: settings.alpha,
                cells: all,
            },
        )?;
        for (run, label) in runs.iter().zip(&history.runs) {
            anyhow::ensure!(
                run.r.run.started_at == label.run_start,
                "internal: the site's run order differs from history's"
            );
        }
        let scenario_ids: BTreeSet<&str> = runs
            .iter()
            .flat_map(|r| r.r.cells.iter().map(|c| c.scenario.as_str()))
            .collect();
        let scenarios = page_names(scenario_ids.into_iter());
        let adapters: BTreeSet<String> = runs
            .iter()
            .flat_map(|r| r.r.adapters.iter().map(|a| a.id.clone()))
            .collect();
        let buses: BTreeSet<String> = runs
            .iter()
            .flat_map(|r| r.r.cells.iter().filter_map(|c| c.bus.clone()))
            .collect();
        Ok(Site {
            settings,
            runs,
            history,
            scenarios,
            adapters: adapters.into_iter().collect(),
            buses: buses.into_iter().collect(),
        })
    }

    /// The page of `scenario`.
    pub fn scenario_page(&self, scenario: &str) -> Option<&str> {
        self.scenarios
            .iter()
            .find(|(s, _)| s == scenario)
            .map(|(_, p)| p.as_str())
    }

    /// Position of an adapter among all of the site's (its colour).
    pub fn adapter_index(&self, id: &str) -> usize {
        self.adapters.iter().position(|a| a == id).unwrap_or(0)
    }

    /// The library and version of `adapter` in run `run`, when it has it.
    pub fn version(&self, run: usize, adapter: &str) -> Option<String> {
        self.runs[run]
            .r
            .adapters
            .iter()
            .find(|a| a.id == adapter)
            .map(|a| format!("{} {}", a.library, a.version))
    }

    /// What differs between runs `a` and `b` besides the code under test,
    /// for cells on `bus` (other buses' daemons do not matter to them):
    /// `compare`'s differences less library and tool versions.
    pub fn not_like_for_like(&self, a: usize, b: usize, bus: Option<&str>) -> Vec<String> {
        let (ra, rb) = (self.runs[a].r, self.runs[b].r);
        let versions: BTreeSet<String> = ra.adapters.iter().map(|x| format!("{} version", x.id)).collect();
        compare::differences(ra, rb)
            .into_iter()
            .filter(|d| {
                let what = d.split(": ").next().unwrap_or("");
                if versions.contains(what) || what == "tool version" {
                    return false;
                }
                match what.strip_prefix("bus ") {
                    Some(b) => bus == Some(b),
                    None => true,
                }
            })
            .collect()
    }
}

/// A file name per scenario: its id (its first 80 characters) with every
/// character but letters and digits as `-`, numbered on a clash.
fn page_names<'s>(ids: impl Iterator<Item = &'s str>) -> Vec<(String, String)> {
    let mut taken = BTreeSet::new();
    let mut out = Vec::new();
    for id in ids {
        // At most 80 characters of the id: a file name has at most 255 bytes.
        let base: String = id
            .chars()
            .take(80)
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let mut name = format!("s-{base}.html");
        let mut n = 2;
        while !taken.insert(name.clone()) {
            name = format!("s-{base}-{n}.html");
            n += 1;
        }
        out.push((id.to_string(), name));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_names_are_distinct() {
        let names = page_names(["call/echo", "call-echo", "a b"].into_iter());
        assert_eq!(names[0].1, "s-call-echo.html");
        assert_eq!(names[1].1, "s-call-echo-2.html");
        assert_eq!(names[2].1, "s-a-b.html");
        let long = "x".repeat(100_000);
        let names = page_names([long.as_str(), &long[1..]].into_iter());
        assert!(names.iter().all(|(_, n)| n.len() <= 255), "{names:?}");
        assert_ne!(names[0].1, names[1].1);
        assert_eq!(short("0123456789abcdef-dirty"), "0123456-dirty");
    }
}
