//! Reading `matrix.toml`, the single source of truth: its entries and
//! selections here, a profile's keys in [`profile`], the checks of the
//! whole file in `check`.

mod build_mode;
mod check;
pub mod crate_name;
pub mod patched;
pub mod pinned;
mod profile;
pub mod roles;

pub use build_mode::{build_mode, BUILD_MODES};
pub use profile::Profile;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use sha2::{Digest, Sha256};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    pub schema: u32,
    #[serde(rename = "adapter")]
    pub adapters: Vec<AdapterEntry>,
    #[serde(rename = "scenario")]
    pub scenarios: Vec<ScenarioEntry>,
    #[serde(rename = "bus", default)]
    pub buses: Vec<BusEntry>,
    /// Libraries people compare that the matrix cannot build: rows of the
    /// coverage table with the reason (`list --format markdown`).
    #[serde(rename = "unavailable", default)]
    pub unavailable: Vec<UnavailableEntry>,
    /// The version axis: rows of an adapter built with another release of
    /// its library ([`pinned`]).
    #[serde(rename = "pinned", default)]
    pub pinned: Vec<pinned::PinnedEntry>,
    /// Client and server apart: the reference adapter ([`roles`]).
    #[serde(default)]
    pub roles: Option<roles::RolesConfig>,
    pub profile: BTreeMap<String, Profile>,
    /// Where the file was read from (set after parsing).
    #[serde(skip)]
    pub path: PathBuf,
    /// SHA-256 of the file's text, lowercase hex (set after parsing).
    #[serde(skip)]
    pub sha256: String,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct AdapterEntry {
    pub id: String,
    pub package: String,
    /// The crate directory, relative to matrix.toml; checked to exist unless
    /// `$DBUS_MATRIX_PREBUILT` says the sources are not there.
    pub path: String,
    pub library: String,
    #[serde(default)]
    pub baseline: bool,
    /// A program, not a Cargo package: the executable file in `path` that
    /// the runner runs (an adapter in another language speaking the same
    /// contract). `package` then names its installed executable where the
    /// adapters come prebuilt ([`PREBUILT_ENV`]), and its sockets.
    #[serde(default)]
    pub program: Option<String>,
    /// Build modes that cannot have this adapter, each with the reason
    /// (`unavailable_in = { nix = "…" }`: the library is not in nixpkgs).
    /// See [`AdapterEntry::unavailable_here`].
    #[serde(default)]
    pub unavailable_in: BTreeMap<String, String>,
    /// Where the library comes from the machine (a Debian package) rather
    /// than a lockfile or a hash: the release line it must stay on (`"0.8"`).
    /// The exact version floats with the machine: results and `list` record
    /// it, the committed coverage table shows `0.8.x`, and an adapter whose
    /// library reports a version outside the line is refused (its id would lie).
    #[serde(default)]
    pub version_line: Option<String>,
    /// `path`/`program` against matrix.toml's directory (set after parsing).
    #[serde(skip)]
    pub program_path: Option<PathBuf>,
    /// Its directory holds a Cargo.lock: a Cargo workspace of its own, built
    /// with `--manifest-path` (set when the file is read; false where the
    /// sources are absent).
    #[serde(skip)]
    pub own_lockfile: bool,
    /// A row built against a local source of its library (`run --patch`),
    /// added after the file was read; never in matrix.toml.
    #[serde(skip)]
    pub patched: Option<patched::Patched>,
    /// A version-axis row (`[[pinned]]`), added when a command builds it.
    #[serde(skip)]
    pub pinned: Option<pinned::Pinned>,
}

impl AdapterEntry {
    /// Whether this adapter is a program rather than a Cargo package.
    pub fn is_program(&self) -> bool {
        self.program.is_some()
    }

    /// Why this runner cannot run the adapter, as its cells' reason: its
    /// `unavailable_in` entry for the build mode ([`build_mode()`]: `nix`
    /// where prebuilt, [`PREBUILT_ENV`], or where [`build_mode::BUILD_MODE_ENV`] says so),
    /// which does not have such an adapter; host mode builds everything.
    /// [`Matrix::load`] refuses an unknown mode first.
    pub fn unavailable_here(&self) -> Option<String> {
        let mode = build_mode().ok().flatten()?;
        self.unavailable_in
            .get(mode)
            .map(|reason| format!("unavailable in {mode}: {reason}"))
    }
}

/// A library without an adapter, and why (not published, does not build
/// with the pinned toolchain, ...).
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct UnavailableEntry {
    pub library: String,
    /// The version people would compare, when there is one.
    #[serde(default)]
    pub version: Option<String>,
    pub reason: String,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct ScenarioEntry {
    pub id: String,
    /// The profiles that run it when no `--scenarios` is given (default:
    /// all); scaled scenarios keep their big sizes out of smoke and quick.
    #[serde(default)]
    pub profiles: Option<Vec<String>>,
}

impl ScenarioEntry {
    pub fn in_profile(&self, profile: &str) -> bool {
        self.profiles.as_ref().is_none_or(|p| p.iter().any(|n| n == profile))
    }
}

/// A bus of the matrix, and where its daemon comes from (Nix and the
/// install scripts read `debian`, `cargo`, `crate_sha256`, `nix`,
/// `nixos_implementation`).
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct BusEntry {
    pub id: String,
    pub debian: Option<String>,
    pub cargo: Option<String>,
    pub crate_sha256: Option<String>,
    pub nix: Option<String>,
    pub nixos_implementation: Option<String>,
}

/// The bus ids the runner can start: the daemons of the `bus` crate, and p2p.
pub fn known_bus_ids() -> impl Iterator<Item = &'static str> {
    bus::BusKind::ALL.into_iter().map(|k| k.id()).chain(["p2p"])
}

pub const SUPPORTED_SCHEMA: u32 = 1;

/// The runner's own package: never an adapter (it would start itself, recursively).
pub const RUNNER_PACKAGE: &str = env!("CARGO_PKG_NAME");

/// Set (to anything but empty or `0`) where the adapters come prebuilt
/// without their sources (the Nix-wrapped runner): `path` is then not checked.
pub const PREBUILT_ENV: &str = "DBUS_MATRIX_PREBUILT";

/// Whether [`PREBUILT_ENV`] says the adapters come prebuilt without sources.
pub fn prebuilt() -> bool {
    std::env::var(PREBUILT_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

impl Matrix {
    pub fn load(path: &Path) -> Result<Matrix> {
        build_mode()?;
        let text = crate::files::read_regular(path)
            .with_context(|| format!("cannot read the matrix file {}", path.display()))?;
        let m = Self::parse(&text, path)?;
        m.check_paths()
            .with_context(|| format!("invalid matrix file {}", path.display()))?;
        Ok(m)
    }

    /// Parses and checks; errors name the file, and line and column where toml knows them.
    pub fn parse(text: &str, path: &Path) -> Result<Matrix> {
        let mut m: Matrix = toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| {
                    let (line, col) = line_col(text, s.start);
                    format!(":{line}:{col}")
                })
                .unwrap_or_default();
            // The line itself: toml's messages do not always name the key.
            let line = e
                .span()
                .and_then(|s| text.lines().nth(line_col(text, s.start).0 - 1))
                .filter(|l| !l.trim().is_empty())
                .map(|l| format!(" (in `{}`)", l.trim()))
                .unwrap_or_default();
            anyhow::anyhow!("{}{at}: {}{line}", path.display(), e.message().trim_end())
        })?;
        m.path = path.to_path_buf();
        let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
        for a in &mut m.adapters {
            a.program_path = a.program.as_ref().map(|p| dir.join(&a.path).join(p));
            a.own_lockfile = dir.join(&a.path).join("Cargo.lock").is_file();
        }
        m.sha256 = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        m.check()
            .with_context(|| format!("invalid matrix file {}", path.display()))?;
        Ok(m)
    }

    /// The manifest of an adapter with a lockfile of its own (a Cargo workspace
    /// of its own, excluded from benches/: zbus-2, zbus-6-tokio), or `None`
    /// for a member of the one workspace. The lockfile's presence decides, as
    /// for scripts/test.sh and nix/adapters.nix. Absolute, as cargo runs
    /// elsewhere.
    pub fn own_lock_manifest(&self, a: &AdapterEntry) -> Option<PathBuf> {
        let manifest = self
            .path
            .parent()
            .unwrap_or(Path::new(""))
            .join(&a.path)
            .join("Cargo.toml");
        a.own_lockfile
            .then(|| std::path::absolute(&manifest).unwrap_or(manifest))
    }

    /// What a results file records about this file: absolute path and hash.
    pub fn record(&self) -> harness::results::MatrixFileRecord {
        let path = self
            .path
            .canonicalize()
            .unwrap_or_else(|_| std::path::absolute(&self.path).unwrap_or_else(|_| self.path.clone()));
        harness::results::MatrixFileRecord {
            path: path.display().to_string(),
            sha256: self.sha256.clone(),
        }
    }

    pub fn profile(&self, name: &str) -> Result<&Profile> {
        self.profile.get(name).with_context(|| {
            format!(
                "unknown profile {name:?}; {} defines: {}",
                self.path.display(),
                self.profile.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })
    }

    /// The adapters named in `filter` (all when empty), in matrix order.
    pub fn select_adapters(&self, filter: &[String]) -> Result<Vec<&AdapterEntry>> {
        select(&self.adapters, filter, |a| &a.id, "adapter")
    }

    pub fn select_scenarios(&self, filter: &[String]) -> Result<Vec<&ScenarioEntry>> {
        select(&self.scenarios, filter, |s| &s.id, "scenario")
    }

    pub fn select_buses(&self, filter: &[String]) -> Result<Vec<&BusEntry>> {
        select(&self.buses, filter, |b| &b.id, "bus")
    }
}

fn select<'a, T>(items: &'a [T], filter: &[String], id: impl Fn(&T) -> &String, what: &str) -> Result<Vec<&'a T>> {
    if filter.is_empty() {
        return Ok(items.iter().collect());
    }
    for f in filter {
        if !items.iter().any(|i| id(i) == f) {
            let known: Vec<_> = items.iter().map(|i| id(i).as_str()).collect();
            bail!("unknown {what} {f:?}; matrix.toml has: {}", known.join(", "));
        }
    }
    Ok(items.iter().filter(|i| filter.contains(id(i))).collect())
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// Finds matrix.toml: explicit path, `$DBUS_MATRIX_MATRIX`, `./matrix.toml`,
/// then the repository root above the executable (target/release/..).
pub fn locate(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("DBUS_MATRIX_MATRIX") {
        return Ok(PathBuf::from(p));
    }
    let cwd = PathBuf::from("matrix.toml");
    if cwd.is_file() {
        return Ok(cwd);
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(found) = exe.ancestors().map(|d| d.join("matrix.toml")).find(|p| p.is_file()) {
            return Ok(found);
        }
    }
    bail!("no matrix.toml: pass --matrix FILE, set DBUS_MATRIX_MATRIX, or run from the repository root")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_matrix() -> String {
        // CARGO_MANIFEST_DIR of run time first (nextest sets it): the tests
        // may run from a copy of the workspace (the Nix check's layout).
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
        std::fs::read_to_string(Path::new(&dir).join("../../matrix.toml")).unwrap()
    }

    #[test]
    fn the_repository_matrix_is_valid() {
        let m = Matrix::parse(&repo_matrix(), Path::new("matrix.toml")).unwrap();
        assert!(m.adapters.iter().any(|a| a.baseline));
        assert!(m.profile("smoke").is_ok());
    }

    #[test]
    fn unknown_keys_are_reported_with_line_and_column() {
        let text = repo_matrix().replacen("library = \"zbus\"", "libary = \"zbus\"", 1);
        let err = Matrix::parse(&text, Path::new("m.toml")).unwrap_err().to_string();
        let line = text.lines().position(|l| l.starts_with("libary")).unwrap() + 1;
        assert!(err.contains(&format!("m.toml:{line}:1")), "{err}");
        assert!(err.contains("libary"), "{err}");
    }

    #[test]
    fn malformed_toml_is_reported_with_line() {
        let err = Matrix::parse("schema = 1\n[[adapter]\n", Path::new("m.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("m.toml:2:"), "{err}");
    }

    #[test]
    fn unknown_names_are_rejected() {
        let m = Matrix::parse(&repo_matrix(), Path::new("matrix.toml")).unwrap();
        let err = m.select_adapters(&["zbus-99".into()]).unwrap_err().to_string();
        assert!(err.contains("zbus-99") && err.contains("zbus-6"), "{err}");
        assert!(m.select_scenarios(&["marshal/nothing".into()]).is_err());
        assert!(m.profile("turbo").is_err());
        let bad = repo_matrix().replace("id = \"marshal/mixed\"", "id = \"marshal/unknown\"");
        assert!(Matrix::parse(&bad, Path::new("m")).is_err());
        let newer = repo_matrix().replace("schema = 1", "schema = 2");
        let err = format!("{:#}", Matrix::parse(&newer, Path::new("m")).unwrap_err());
        assert!(err.contains("schema = 2"), "{err}");
    }

    #[test]
    fn scenario_profiles_choose_where_a_scenario_runs() {
        let m = Matrix::parse(&repo_matrix(), Path::new("matrix.toml")).unwrap();
        let entry = |id: &str| m.scenarios.iter().find(|s| s.id == id).unwrap();
        assert!(entry("call/void").in_profile("smoke") && entry("call/void").in_profile("full"));
        let big = entry("signal/match-rules/sender/131072");
        assert!(!big.in_profile("smoke") && !big.in_profile("quick") && big.in_profile("full"));
        assert!(entry("signal/match-rules/wildcard/16384").in_profile("quick"));
        let typo = repo_matrix().replacen("profiles = [\"full\"]", "profiles = [\"ful\"]", 1);
        let err = format!("{:#}", Matrix::parse(&typo, Path::new("m")).unwrap_err());
        assert!(err.contains("unknown profile \"ful\""), "{err}");
    }
}
