//! What each adapter row of a run was, and what it was built from: the
//! [`AdapterRecord`] of a results file with its provenance records (the build
//! it cost, a `run --patch` source, a `[[pinned]]`/`bisect` release). Its own
//! file so that results.rs holds the run and its cells, and the version-axis
//! and patch rows have one place; `harness::results` re-exports all of it.

use serde::{Deserialize, Serialize};

/// One adapter as it was in this run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AdapterRecord {
    pub id: String,
    pub library: String,
    pub version: String,
    #[serde(default)]
    pub baseline: bool,
    /// The adapter binary's code and data (ELF PT_LOAD segments), without debug info.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_bytes: Option<u64>,
    /// How the adapter drives its library (executor and threads, or blocking
    /// calls): the adapter's `runtime`, from its listing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// What building this adapter adds to a build (`dbus-matrix build-times --into`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildRecord>,
    /// A row built against a local source of a library (`run --patch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<PatchRecord>,
    /// A version-axis row (matrix.toml `[[pinned]]`, `bisect`): the adapter
    /// built with another release of its library.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<PinRecord>,
}

/// What a version-axis row was built from: the registry release cargo resolved.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PinRecord {
    /// The adapter whose code was built.
    pub of: String,
    #[serde(rename = "crate")]
    pub crate_name: String,
    /// The requirement written into the adapter's manifest (`~6.1`, `=6.2.0`).
    pub requirement: String,
    /// The version cargo resolved from the registry.
    pub version: String,
}

/// What a patched row (`<adapter>+patch`, `run --patch`) was built from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PatchRecord {
    /// The adapter whose code was built against the patched sources.
    pub of: String,
    pub crates: Vec<PatchedCrate>,
}

/// One crate (or program library) replaced by a local source.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PatchedCrate {
    pub name: String,
    /// The crate's version, as cargo resolved the source; none for a
    /// program's library (the row's `version` is what the program reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The source directory, absolute.
    pub path: String,
    /// `git rev-parse HEAD` of the source, when it is in a git checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_revision: Option<String>,
    /// Whether that checkout had uncommitted changes (`git status --porcelain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_dirty: Option<bool>,
}

/// Wall time of `cargo build --release -p <adapter package>` in a target
/// directory where only the shared code (the harness and its dependencies)
/// was already built: what the library adds to a build.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BuildRecord {
    pub seconds: f64,
    /// Crates cargo compiled (its `Compiling` lines), the adapter included.
    pub crates_compiled: u32,
    /// Cargo's `-j`.
    pub jobs: u32,
}
