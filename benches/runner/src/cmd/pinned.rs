//! The version-axis rows of matrix.toml (`[[pinned]]`) in `run` and
//! `verify`: taken out of the selection before anything checks it, built,
//! and added to the matrix and the selection ([`crate::pin`]).

use std::path::Path;

use anyhow::{bail, Result};

use super::Context;
use crate::matrix::Matrix;
use crate::pin::Row;

/// The rows the selection asks for, taken out of `adapters`: those it
/// names, and every one when it is empty and `all_when_empty` (`run`; not
/// `verify`, whose whole-matrix check is of matrix.toml's adapters). The
/// flag: it named only such rows.
pub fn take(matrix: &Matrix, adapters: &mut Vec<String>, all_when_empty: bool) -> Result<(Vec<Row>, bool)> {
    let (mut rows, named_only) = crate::pin::take_selected(matrix, adapters)?;
    if adapters.is_empty() && !named_only && !all_when_empty {
        rows.clear();
    }
    Ok((rows, named_only))
}

/// Builds `rows`, adds them to the matrix, and to the selection where it is
/// not everything. Where the adapters come prebuilt (the Nix runner), which
/// cannot build them, the rows of a whole-matrix selection are left out
/// with a note; named ones are bad input.
pub fn add(
    matrix: &mut Matrix,
    adapters: &mut Vec<String>,
    (rows, named_only): (Vec<Row>, bool),
    bin_dir: &Path,
    ctx: &Context,
) -> Result<()> {
    if crate::matrix::prebuilt() && adapters.is_empty() && !named_only && !rows.is_empty() {
        crate::output::errln!(
            "note: the version-axis rows ({}) are left out: they are built from the crate registry at run time, \
             which the prebuilt runner cannot do",
            rows.iter().map(|r| r.id.as_str()).collect::<Vec<_>>().join(", ")
        );
        return Ok(());
    }
    let ids = crate::pin::add(matrix, &rows, bin_dir, ctx.interrupted())?;
    if !adapters.is_empty() || named_only {
        adapters.extend(ids);
    }
    Ok(())
}

/// `--patch` applies to the selected adapters: a selection of pinned rows
/// only would leave it none (and an empty one means all).
pub fn check_patch(named_only: bool, patching: bool) -> Result<()> {
    if named_only && patching {
        bail!("--patch needs an adapter in --adapters (the selection names only version-axis rows of [[pinned]])");
    }
    Ok(())
}
