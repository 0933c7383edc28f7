//! A crate's releases, as the registry index lists them: read from cargo's
//! own copy of the sparse index (`$CARGO_HOME/registry/index/*/.cache/…`,
//! which cargo refreshes whenever it resolves the crate with the network;
//! `bisect` asks `cargo info` first so that it is fresh). Yanked releases and
//! pre-releases are left out.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, ensure, Context, Result};

/// A release number `X.Y.Z`, ordered numerically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u64, pub u64, pub u64);

impl Version {
    /// `X.Y.Z`, numbers only (no pre-release, no build metadata).
    pub fn parse(text: &str) -> Result<Version> {
        let parts: Vec<&str> = text.split('.').collect();
        let n = |p: &str| -> Option<u64> {
            if !p.is_empty() && p.len() <= 9 && p.chars().all(|c| c.is_ascii_digit()) {
                p.parse().ok()
            } else {
                None
            }
        };
        match parts.as_slice() {
            [a, b, c] => match (n(a), n(b), n(c)) {
                (Some(a), Some(b), Some(c)) => Ok(Version(a, b, c)),
                _ => bail!("{text:?} is not a release number X.Y.Z"),
            },
            _ => bail!("{text:?} is not a release number X.Y.Z"),
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The path of a crate's entry in a sparse index (`zb/us/zbus`); `name`
/// passed [`crate::matrix::crate_name::check`].
pub fn entry_path(name: &str) -> PathBuf {
    let n = name.to_ascii_lowercase();
    match n.len() {
        1 => Path::new("1").join(&n),
        2 => Path::new("2").join(&n),
        3 => Path::new("3").join(&n[..1]).join(&n),
        _ => Path::new(&n[..2]).join(&n[2..4]).join(&n),
    }
}

/// The releases in one of cargo's cached index entries (a binary header,
/// then NUL-separated version and JSON record pairs), unyanked, sorted.
pub fn releases_in_cache(bytes: &[u8]) -> Vec<Version> {
    let mut out: Vec<Version> = bytes
        .split(|b| *b == 0)
        .filter(|part| part.first() == Some(&b'{'))
        .filter_map(|part| serde_json::from_slice::<serde_json::Value>(part).ok())
        .filter(|v| v["yanked"].as_bool() != Some(true))
        .filter_map(|v| v["vers"].as_str().and_then(|s| Version::parse(s).ok()))
        .collect();
    out.sort();
    out.dedup();
    out
}

fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
}

/// Asks cargo about the crate (which refreshes its index entry), then reads
/// the newest cached entry of the crate.
pub fn releases(name: &str) -> Result<Vec<Version>> {
    crate::matrix::crate_name::check(name)?;
    let cargo = std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from);
    let refreshed = Command::new(&cargo)
        .args(["info", "--color", "never", name])
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let home = cargo_home().context("no $CARGO_HOME and no $HOME: where is cargo's registry cache?")?;
    let index = home.join("registry").join("index");
    let rel = entry_path(name);
    let newest = std::fs::read_dir(&index)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join(".cache").join(&rel))
        .filter_map(|p| std::fs::metadata(&p).and_then(|m| m.modified()).ok().map(|t| (t, p)))
        .max();
    let Some((_, file)) = newest else {
        bail!(
            "cargo's registry cache ({}) has no entry for {name}{}",
            index.display(),
            if refreshed {
                ""
            } else {
                " (`cargo info` could not reach the registry either): is it a crate of the registry?"
            }
        );
    };
    let bytes = std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
    let found = releases_in_cache(&bytes);
    ensure!(!found.is_empty(), "{} lists no release of {name}", file.display());
    Ok(found)
}

/// The releases from `from` to `to`, both included; both must be releases.
pub fn between(all: &[Version], from: Version, to: Version, name: &str) -> Result<Vec<Version>> {
    ensure!(from < to, "--from {from} must be an older release than --to {to}");
    for v in [from, to] {
        ensure!(
            all.contains(&v),
            "{name} {v} is not a release the registry lists (unyanked: {})",
            all.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        );
    }
    Ok(all.iter().copied().filter(|v| *v >= from && *v <= to).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_entries_are_read() {
        // The layout cargo writes: header, then version NUL record NUL pairs.
        let mut bytes = vec![3u8, 2, 0, 0, 0];
        bytes.extend_from_slice(b"etag\0");
        for (v, yanked) in [
            ("6.1.0", false),
            ("6.0.0", false),
            ("6.2.0-beta.1", false),
            ("6.1.1", true),
            ("6.2.0", false),
            ("6.10.0", false),
        ] {
            bytes.extend_from_slice(v.as_bytes());
            bytes.push(0);
            bytes.extend_from_slice(format!("{{\"name\":\"zbus\",\"vers\":\"{v}\",\"yanked\":{yanked}}}").as_bytes());
            bytes.push(0);
        }
        let all = releases_in_cache(&bytes);
        assert_eq!(
            all,
            vec![Version(6, 0, 0), Version(6, 1, 0), Version(6, 2, 0), Version(6, 10, 0)],
            "yanked and pre-releases left out, numeric order"
        );
        let v = |s| Version::parse(s).unwrap();
        assert_eq!(between(&all, v("6.1.0"), v("6.10.0"), "zbus").unwrap().len(), 3);
        assert!(between(&all, v("6.2.0"), v("6.1.0"), "zbus").is_err());
        assert!(
            between(&all, v("6.1.1"), v("6.2.0"), "zbus").is_err(),
            "a yanked release"
        );
    }

    #[test]
    fn index_paths() {
        assert_eq!(entry_path("zbus"), Path::new("zb/us/zbus"));
        // Issue 42 (4): these panicked (byte slicing) or read outside the cache.
        for bad in [
            "",
            "zbüs",
            "ü",
            "../../../etc/passwd",
            "a/b",
            "1abc",
            "a b",
            &"a".repeat(65),
        ] {
            assert!(releases(bad).is_err(), "{bad:?} was taken as a crate's name");
        }
        crate::matrix::crate_name::check("dbus-fast_2").unwrap();
        assert_eq!(entry_path("Abc"), Path::new("3/a/abc"));
        assert_eq!(entry_path("ab"), Path::new("2/ab"));
        for bad in ["6.1", "6.1.0-rc1", "a.b.c", "6.1.0.0", ""] {
            assert!(Version::parse(bad).is_err(), "{bad}");
        }
    }
}
