//! `dbus-matrix site`: a static site from a folder of results files. One
//! module per kind of page, all flat in the output directory so that links
//! work from `file://` and any static host; nothing is fetched (style,
//! script, charts and data are inline):
//! - `index.html` ([`index`]): per scenario family the newest run's headline
//!   tables, the scenario list, the runs with their machines and versions;
//! - `s-<scenario>.html` ([`scenario`]): the figure over runs per bus, with
//!   the interval as a band, `history`'s steps and not-like-for-like marks,
//!   each beside its table;
//! - `l-<adapter>.html` ([`library`]): a library over runs and its versions;
//! - `compare.html` ([`compare`]): any two runs, `compare`'s verdicts;
//! - `run-<n>.html`: each run's full report (`export::html`).
//!
//! The steps and verdicts are those of `analyze::history` and
//! `analyze::compare`, called here, never re-derived.

mod chart;
mod compare;
mod index;
mod library;
mod model;
mod page;
mod scenario;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::analyze::history;
pub use model::Settings;

/// Marks a directory as this command's output: only such a directory (or an
/// empty or new one) is written into, and its old pages are replaced.
const MARKER: &str = ".dbus-matrix-site";

pub struct Built {
    pub runs: usize,
    pub pages: usize,
    pub skipped: Vec<anyhow::Error>,
}

/// Every `*.json` under `inputs` (directories are walked, subdirectories
/// included), with a label: the path below the directory given, or the
/// file's name.
fn collect(inputs: &[PathBuf]) -> Result<Vec<(PathBuf, String)>> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(PathBuf, String)>) -> Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read directory {}", dir.display()))?
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, root, out)?;
            } else if p.is_file() && p.extension().is_some_and(|e| e == "json") {
                let label = p.strip_prefix(root).unwrap_or(&p).display().to_string();
                out.push((p, label));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            walk(input, input, &mut out)?;
        } else {
            anyhow::ensure!(input.exists(), "{} does not exist", input.display());
            let label = input
                .file_name()
                .map_or_else(|| input.display().to_string(), |n| n.to_string_lossy().to_string());
            out.push((input.clone(), label));
        }
    }
    Ok(out)
}

/// Makes `out` ready: created, or an empty directory, or one this command
/// wrote before (its `*.html` removed).
fn prepare(out: &Path) -> Result<()> {
    if out.exists() {
        anyhow::ensure!(out.is_dir(), "--out {} exists and is not a directory", out.display());
        let entries: Vec<PathBuf> = std::fs::read_dir(out)
            .with_context(|| format!("cannot read {}", out.display()))?
            .flatten()
            .map(|e| e.path())
            .collect();
        if !entries.is_empty() {
            anyhow::ensure!(
                out.join(MARKER).is_file(),
                "--out {} is a directory with other files in it (no {MARKER}): name a new or empty directory",
                out.display()
            );
            for p in entries.iter().filter(|p| p.extension().is_some_and(|e| e == "html")) {
                std::fs::remove_file(p).with_context(|| format!("cannot remove the old page {}", p.display()))?;
            }
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    std::fs::write(
        out.join(MARKER),
        "written by dbus-matrix site; its pages are replaced on the next build\n",
    )
    .with_context(|| format!("cannot write in {}", out.display()))
}

pub fn build(inputs: &[PathBuf], out: &Path, settings: Settings) -> Result<Built> {
    let found = collect(inputs)?;
    let labels: BTreeMap<PathBuf, String> = found.iter().cloned().collect();
    let files: Vec<PathBuf> = found.into_iter().map(|(p, _)| p).collect();
    let (loaded, skipped) = history::load_inputs(&files);
    anyhow::ensure!(
        !loaded.is_empty(),
        "no results file could be loaded from the given paths ({} skipped)",
        skipped.len()
    );
    let files: Vec<(PathBuf, String, harness::results::ResultsFile)> = loaded
        .into_iter()
        .map(|(p, r)| {
            let label = labels.get(&p).cloned().unwrap_or_else(|| p.display().to_string());
            (p, label, r)
        })
        .collect();
    let site = model::Site::new(&files, settings)?;
    prepare(out)?;
    let mut pages: Vec<(String, String)> = vec![
        ("index.html".into(), index::render(&site)),
        ("compare.html".into(), compare::render(&site)?),
    ];
    for (s, name) in &site.scenarios {
        pages.push((name.clone(), scenario::render(&site, s)));
    }
    for a in &site.adapters {
        pages.push((library::page_name(a), library::render(&site, a)));
    }
    for (j, run) in site.runs.iter().enumerate() {
        pages.push((model::Run::page(j), crate::export::html::render(run.r)));
    }
    for (name, html) in &pages {
        let path = out.join(name);
        std::fs::write(&path, html).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(Built {
        runs: site.runs.len(),
        pages: pages.len(),
        skipped,
    })
}
