//! Adapters with a lockfile of their own (zbus-2, zbus-6-tokio): Cargo
//! workspaces of their own inside benches/. The presence of the lockfile is
//! what scripts/build.sh, build-times and nix/adapters.nix go by; the
//! workspace must exclude exactly those directories (cargo refuses a member
//! with a `[workspace]` of its own, and an excluded directory without a
//! lockfile would be built by nobody), and their profiles must be the
//! workspace's, or their binaries would be timed with other settings.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::*;

fn toml_of(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse().unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `adapters/<dir>` for every adapter directory holding a Cargo.lock.
fn adapters_with_own_lockfile(ws: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for entry in std::fs::read_dir(ws.join("adapters")).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("Cargo.lock").is_file() {
            found.insert(format!("adapters/{}", dir.file_name().unwrap().to_str().unwrap()));
        }
    }
    found
}

#[test]
fn the_workspace_excludes_exactly_the_adapters_with_a_lockfile_of_their_own() {
    let ws = workspace();
    let root = toml_of(&ws.join("Cargo.toml"));
    let excluded: BTreeSet<String> = root["workspace"]
        .get("exclude")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    let own = adapters_with_own_lockfile(&ws);
    assert!(
        !own.is_empty(),
        "no adapter with a lockfile of its own under {}",
        ws.display()
    );
    assert_eq!(
        excluded, own,
        "benches/Cargo.toml `exclude` against adapters/*/Cargo.lock"
    );
}

#[test]
fn adapters_with_a_lockfile_of_their_own_are_workspaces_with_the_workspace_profiles() {
    let ws = workspace();
    let root = toml_of(&ws.join("Cargo.toml"));
    for dir in adapters_with_own_lockfile(&ws) {
        let manifest = toml_of(&ws.join(&dir).join("Cargo.toml"));
        assert!(
            manifest.contains_key("workspace"),
            "{dir}/Cargo.toml has no [workspace]"
        );
        for profile in ["release", "ci"] {
            assert_eq!(
                manifest["profile"].get(profile),
                root["profile"].get(profile),
                "{dir}: [profile.{profile}] differs from benches/Cargo.toml's"
            );
        }
    }
}

#[test]
fn every_adapter_with_a_lockfile_of_its_own_is_in_matrix_toml_and_built() {
    let matrix = toml_of(&repo_matrix());
    let paths: BTreeSet<String> = matrix["adapter"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["path"].as_str().unwrap().trim_start_matches("benches/").to_owned())
        .collect();
    let bins = bin_dir();
    for dir in adapters_with_own_lockfile(&workspace()) {
        assert!(
            paths.contains(&dir),
            "{dir} has a lockfile but no [[adapter]] in matrix.toml"
        );
        let package = toml_of(&workspace().join(&dir).join("Cargo.toml"))["package"]["name"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            bins.join(&package).is_file(),
            "{package} is not next to the runner in {}: scripts/test.sh builds it with --manifest-path {dir}/Cargo.toml",
            bins.display()
        );
    }
}
