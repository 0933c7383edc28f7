//! The version axis: rows of an adapter built with another registry release
//! of its library (`zbus-6@6.1` beside `zbus-6`), from matrix.toml's
//! `[[pinned]]` entries ([`crate::matrix::pinned`]) or from `bisect`. Each is
//! built like a patched row, in a copy of the workspace under
//! `benches/target/pinned/` ([`build`]), never editing a tracked file, and
//! added to the matrix right after its adapter, so that it runs in the same
//! run, rounds and placement. [`index`] lists a crate's registry releases.

pub mod build;
pub mod index;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::{bail, Result};

use crate::matrix::pinned::Pin;
use crate::matrix::{AdapterEntry, Matrix};

/// One row to build: its id, its adapter and its pin.
#[derive(Debug, Clone)]
pub struct Row {
    pub id: String,
    pub of: String,
    pub pin: Pin,
}

/// The `[[pinned]]` rows a selection names, taken out of `selected` (the
/// matrix does not know their ids until they are built). A run of the whole
/// matrix (no selection) leaves them out: each is a cargo build against the
/// registry, which a run, a preflight or a test of the whole matrix should not
/// wait for; they run where named (`--adapters zbus-6,zbus-6@6.1`). The
/// flag: the selection named only pinned rows.
pub fn take_selected(matrix: &Matrix, selected: &mut Vec<String>) -> Result<(Vec<Row>, bool)> {
    let named_only = !selected.is_empty() && selected.iter().all(|s| matrix.pinned.iter().any(|p| p.id == *s));
    let rows = matrix
        .pinned
        .iter()
        .filter(|p| selected.contains(&p.id))
        .map(|p| {
            Ok(Row {
                id: p.id.clone(),
                of: p.of.clone(),
                pin: Pin::parse(&p.pin)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    selected.retain(|s| !matrix.pinned.iter().any(|p| p.id == *s));
    Ok((rows, named_only))
}

/// Builds `rows` and adds them to `matrix`, each after its adapter (and
/// after that adapter's other extra rows); returns their ids. Not where the
/// adapters come prebuilt (the Nix runner: no sources, no registry).
pub fn add(matrix: &mut Matrix, rows: &[Row], bin_dir: &Path, interrupted: &AtomicBool) -> Result<Vec<String>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    if crate::matrix::prebuilt() {
        bail!(
            "{}: a version-axis row is built from the crate registry at run time, which the prebuilt (Nix) runner \
             cannot do: run it from a checkout of the repository",
            rows.iter().map(|r| r.id.as_str()).collect::<Vec<_>>().join(", ")
        );
    }
    let ws = crate::analyze::build_times::workspace(&matrix.path)?;
    let adapters: Vec<(&Row, &AdapterEntry)> = rows
        .iter()
        .map(|r| {
            let of = of_entry(matrix, r)?;
            crate::matrix::pinned::check_row_id(&r.id, of)?;
            Ok((r, of))
        })
        .collect::<Result<_>>()?;
    let pinned = build::build(matrix, &ws, &crate::patch::profile_of(bin_dir), &adapters, interrupted)?;
    let mut ids = Vec::new();
    for (row, pinned) in rows.iter().zip(pinned) {
        let of = of_entry(matrix, row)?;
        let mut entry = of.clone();
        entry.id = row.id.clone();
        // Its sockets and fifos are named after `package`: the id's tail keeps them apart, with
        // only characters a D-Bus address carries unescaped (`@` in a p2p socket's path broke its address).
        let tail: String = row.id[of.id.len() + 1..]
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '-' })
            .collect();
        entry.package = format!("{}-at-{tail}", of.package);
        entry.baseline = false;
        entry.pinned = Some(pinned);
        // After the adapter and the rows already added beside it.
        let base = matrix
            .adapters
            .iter()
            .position(|a| a.id == row.of)
            .expect("checked above");
        let at = base
            + 1
            + matrix.adapters[base + 1..]
                .iter()
                .take_while(|a| a.id.starts_with(&format!("{}+", row.of)) || a.id.starts_with(&format!("{}@", row.of)))
                .count();
        ids.push(entry.id.clone());
        matrix.adapters.insert(at, entry);
    }
    Ok(ids)
}

fn of_entry<'m>(matrix: &'m Matrix, row: &Row) -> Result<&'m AdapterEntry> {
    match matrix.adapters.iter().find(|a| a.id == row.of) {
        Some(a) if a.patched.is_none() && a.pinned.is_none() => Ok(a),
        _ => bail!("row {}: no adapter {:?} in matrix.toml", row.id, row.of),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_matrix() -> Matrix {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
        let path = Path::new(&dir).join("../../matrix.toml");
        Matrix::parse(&std::fs::read_to_string(&path).unwrap(), &path).unwrap()
    }

    #[test]
    fn a_selection_takes_the_rows_it_names_and_the_whole_matrix_none() {
        let m = repo_matrix();
        let id = m.pinned[0].id.clone();
        let mut all = Vec::new();
        let (rows, only) = take_selected(&m, &mut all).unwrap();
        assert_eq!((rows.len(), only), (0, false));
        let mut named = vec![id.clone()];
        let (rows, only) = take_selected(&m, &mut named).unwrap();
        assert_eq!((rows[0].id.as_str(), only, named.len()), (id.as_str(), true, 0));
        let mut mixed = vec!["raw".to_string(), id.clone()];
        let (rows, only) = take_selected(&m, &mut mixed).unwrap();
        assert_eq!((rows.len(), only), (1, false));
        assert_eq!(mixed, ["raw"]);
        let mut other = vec!["raw".to_string()];
        assert!(take_selected(&m, &mut other).unwrap().0.is_empty());
    }
}
