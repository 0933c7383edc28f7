//! `--patch` of `run` and `verify`: the patched rows added to the matrix and
//! to the selection before anything else sees them ([`crate::patch`]).

use std::path::Path;

use anyhow::Result;

use super::Context;
use crate::matrix::Matrix;

/// Builds the patched rows of the selection `adapters` (empty: all) and
/// selects them too.
pub fn add_rows(
    matrix: &mut Matrix,
    adapters: &mut Vec<String>,
    bin_dir: &Path,
    items: &[String],
    ctx: &Context,
) -> Result<()> {
    let specs = crate::patch::parse(items)?;
    let ids = crate::patch::prepare(matrix, adapters, &specs, bin_dir, ctx.interrupted())?;
    // An empty selection is every adapter, the patched rows included.
    if !adapters.is_empty() {
        adapters.extend(ids);
    }
    Ok(())
}
