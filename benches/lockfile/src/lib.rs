//! Used from adapters' `build.rs`: finds the exact version of the benchmarked
//! library in the workspace `Cargo.lock` and exposes it to the adapter as the
//! compile-time variable `DBUS_MATRIX_LIBRARY_VERSION`. No dependencies, so it
//! costs nothing to build twice (host and target).

use std::path::{Path, PathBuf};

/// All `(name, version)` pairs of a Cargo.lock text, in file order.
pub fn packages(lock: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut name: Option<String> = None;
    for line in lock.lines() {
        let line = line.trim();
        if line == "[[package]]" {
            name = None;
        } else if let Some(v) = line.strip_prefix("name = ") {
            name = Some(v.trim_matches('"').to_string());
        } else if let Some(v) = line.strip_prefix("version = ") {
            if let Some(n) = name.take() {
                out.push((n, v.trim_matches('"').to_string()));
            }
        }
    }
    out
}

/// The single version of `crate_name` whose version starts with `version_prefix`
/// (for example `("zbus", "6.")`). Errors when none or several match, because
/// then the adapter would report a version it may not be using.
pub fn version_in(lock: &str, crate_name: &str, version_prefix: &str) -> Result<String, String> {
    let found: Vec<String> = packages(lock)
        .into_iter()
        .filter(|(n, v)| n == crate_name && v.starts_with(version_prefix))
        .map(|(_, v)| v)
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("no {crate_name} {version_prefix}* in Cargo.lock")),
        many => Err(format!(
            "several {crate_name} {version_prefix}* in Cargo.lock: {many:?}"
        )),
    }
}

/// The workspace Cargo.lock, found by walking up from the crate's manifest dir.
pub fn find_lockfile(manifest_dir: &Path) -> Option<PathBuf> {
    manifest_dir
        .ancestors()
        .map(|d| d.join("Cargo.lock"))
        .find(|p| p.is_file())
}

/// For `build.rs`: sets `DBUS_MATRIX_LIBRARY_VERSION` for the crate being built.
/// Panics (failing the build with the message) if the version cannot be found.
pub fn emit_library_version(crate_name: &str, version_prefix: &str) {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("run from build.rs"));
    let lock_path = find_lockfile(&dir).expect("Cargo.lock not found above the adapter crate");
    println!("cargo:rerun-if-changed={}", lock_path.display());
    let lock = std::fs::read_to_string(&lock_path).expect("reading Cargo.lock");
    let version = version_in(&lock, crate_name, version_prefix).unwrap_or_else(|e| panic!("{e}"));
    println!("cargo:rustc-env=DBUS_MATRIX_LIBRARY_VERSION={version}");
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = r#"
version = 4

[[package]]
name = "zbus"
version = "5.19.0"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "zbus"
version = "6.2.1"
dependencies = [
 "zvariant",
]
"#;

    #[test]
    fn picks_the_matching_major() {
        assert_eq!(version_in(LOCK, "zbus", "6.").unwrap(), "6.2.1");
        assert_eq!(version_in(LOCK, "zbus", "5.").unwrap(), "5.19.0");
    }

    #[test]
    fn missing_or_ambiguous_is_an_error() {
        assert!(version_in(LOCK, "zbus", "4.").is_err());
        assert!(version_in(LOCK, "zbus", "").unwrap_err().contains("several"));
    }
}
