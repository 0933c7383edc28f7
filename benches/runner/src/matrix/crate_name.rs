//! The crate names a user gives (`--patch CRATE=DIR`, `bisect --crate`):
//! checked once, before a name becomes a path in cargo's cache or a word of
//! cargo's command line.

use anyhow::{ensure, Result};

/// Refuses what cannot be a crate's name on crates.io (ASCII letters, digits,
/// `-` and `_`, a letter first, at most 64 characters): the name becomes a
/// path in cargo's cache and a word of cargo's command line.
pub fn check(name: &str) -> Result<()> {
    let ok = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    ensure!(
        ok,
        "{name:?} is not a crate's name (ASCII letters, digits, '-' and '_', a letter first, at most 64 characters)"
    );
    Ok(())
}
