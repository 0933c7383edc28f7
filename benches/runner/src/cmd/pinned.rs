//! The version-axis rows of matrix.toml (`[[pinned]]`) in `run` and
//! `verify`: taken out of the selection before anything checks it, built,
//! and added to the matrix and the selection ([`crate::pin`]).

use std::path::Path;

use anyhow::{bail, Result};

use super::Context;
use crate::matrix::Matrix;
use crate::pin::Row;

/// The rows the selection names, taken out of `adapters` (a whole-matrix
/// selection names none: [`crate::pin::take_selected`]). The flag: it named
/// only such rows.
pub fn take(matrix: &Matrix, adapters: &mut Vec<String>) -> Result<(Vec<Row>, bool)> {
    crate::pin::take_selected(matrix, adapters)
}

/// Builds `rows` and adds them to the matrix and to the selection (which
/// named them). Where the adapters come prebuilt (the Nix runner), which
/// cannot build them, a named row is bad input ([`crate::pin::add`]).
pub fn add(
    matrix: &mut Matrix,
    adapters: &mut Vec<String>,
    (rows, _named_only): (Vec<Row>, bool),
    bin_dir: &Path,
    ctx: &Context,
) -> Result<()> {
    let ids = crate::pin::add(matrix, &rows, bin_dir, ctx.interrupted())?;
    adapters.extend(ids);
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
