//! Typed reads of `glib::Variant` values with an error that names the
//! mismatch (glib's `str()` is an `Option`, `try_get` owns its result).

use anyhow::{anyhow, Result};
use glib::variant::FromVariant;
use glib::Variant;

/// A string-like value (`s`, `o`, `g`), borrowed from the variant.
pub fn str(v: &Variant) -> Result<&str> {
    v.str().ok_or_else(|| anyhow!("expected a string, got {}", v.type_()))
}

/// A value of a basic type through `FromVariant`.
pub fn get<T: FromVariant>(v: &Variant) -> Result<T> {
    Ok(v.try_get::<T>()?)
}
