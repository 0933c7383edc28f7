//! What a results file must be to be read at all, beyond its JSON shape: a
//! known schema version, one record per cell, and measurements that can be
//! measurements (positive, finite times). A file edited by hand or damaged
//! is refused with the cell named, before any reader (reports, compare,
//! history, spread, resume) divides by, takes the log of or sorts a value
//! it cannot handle.

use std::collections::HashSet;
use std::path::Path;

use anyhow::{bail, Result};
use harness::results::{Cell, ResultsFile, SCHEMA_VERSION};

pub fn check(path: &Path, r: &ResultsFile) -> Result<()> {
    if r.schema_version == 0 || r.schema_version > SCHEMA_VERSION {
        bail!(
            "{} has schema_version {}, which no dbus-matrix wrote (this one reads 1 to {SCHEMA_VERSION})",
            path.display(),
            r.schema_version
        );
    }
    let mut seen = HashSet::new();
    for c in &r.cells {
        if !seen.insert(c.key()) {
            bail!(
                "{}: {} appears twice (a run records each cell once; the file was edited or merged by hand)",
                path.display(),
                name(c)
            );
        }
        if let Some(problem) = measurement_problem(c) {
            bail!(
                "{}: {}: {problem}: not a measurement (the file was edited or damaged)",
                path.display(),
                name(c)
            );
        }
    }
    Ok(())
}

/// `cell ADAPTER SCENARIO[ on BUS][ as ROLE]`.
fn name(c: &Cell) -> String {
    let bus = c.bus.as_ref().map(|b| format!(" on {b}")).unwrap_or_default();
    format!("cell {} {}{bus}{}", c.adapter, c.scenario, c.role.label_suffix())
}

fn measurement_problem(c: &Cell) -> Option<String> {
    let m = c.measurement()?;
    let w = &m.wall;
    let e = &w.median_ns;
    if !(e.point.is_finite() && e.point > 0.0) {
        return Some(format!("median {} ns is not above zero", e.point));
    }
    if !(e.lower.is_finite() && e.upper.is_finite() && e.lower >= 0.0 && e.lower <= e.point && e.point <= e.upper) {
        return Some(format!(
            "the median's interval {}..{} ns does not hold the median {} ns",
            e.lower, e.upper, e.point
        ));
    }
    let m_ = &w.mean_ns;
    if ![m_.point, m_.lower, m_.upper, w.std_dev_ns]
        .iter()
        .all(|v| v.is_finite() && *v >= 0.0)
    {
        return Some("a mean or standard deviation below zero".into());
    }
    if let Some(bad) = w
        .sample_ns
        .iter()
        .chain(&w.round_medians_ns)
        .find(|v| !(v.is_finite() && **v >= 0.0))
    {
        return Some(format!("a sample or round median of {bad} ns"));
    }
    None
}
