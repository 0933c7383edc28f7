//! The shared dependency build serves every package (issue 26, defect 8):
//! after `cargo build --workspace`, `cargo build -p <member>` of any
//! workspace member (every adapter, the runner, the libraries, the test
//! tools) compiles nothing, neither a dependency nor the member itself. The
//! flake builds each adapter exactly that way on one shared dependency build
//! (nix/adapters.nix); without the workspace-hack crate (benches/workspace-hack,
//! cargo-hakari) resolver 2 resolves each package's features alone and a
//! `-p` build compiles another libc, memchr, proc-macro2, ...
//!
//! Judged by the artifacts cargo reports (`--message-format json`), not only
//! by its `Compiling` lines: a dependency compiled with other features is
//! another artifact (another hash in its file names), which a target
//! directory may already hold from an earlier `-p` build, fresh, and then
//! cargo prints no `Compiling` line for it. Every artifact of a `-p` build
//! must be one the workspace build produced. Cheap when that holds: each
//! `-p` build only checks fingerprints (about a second a package here).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// The target directory and cargo profile the tests' binaries were built in
/// (target/ci/dbus-matrix: ci; target/release: release; target/debug: dev).
fn target_and_profile() -> (PathBuf, String) {
    let dir = runner_bin().parent().unwrap().to_path_buf();
    let profile = match dir.file_name().unwrap().to_str().unwrap() {
        "debug" => "dev".to_owned(),
        other => other.to_owned(),
    };
    (dir.parent().unwrap().to_path_buf(), profile)
}

struct Build {
    /// Every artifact file (and build-script output directory) cargo
    /// reported, by file identity: a library the workspace build reported
    /// where it uplifted it (target/ci/libharness.rlib) is reported by a
    /// `-p` build, where it is a dependency, as deps/libharness-<hash>.rlib,
    /// the same file (a hard link); another build of it is another file.
    artifacts: BTreeSet<(u64, u64)>,
    /// Their paths, to name them.
    paths: std::collections::BTreeMap<(u64, u64), String>,
    /// package ids of the units cargo compiled (not fresh).
    compiled: BTreeSet<String>,
    /// cargo's `Compiling …` lines.
    compiling_lines: Vec<String>,
}

fn cargo_build(target: &Path, profile: &str, selection: &[&str]) -> Build {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(&cargo)
        .current_dir(workspace())
        .args([
            "build",
            "--locked",
            "--offline",
            "--message-format",
            "json",
            "--profile",
            profile,
        ])
        .arg("--target-dir")
        .arg(target)
        .args(selection)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cargo:?}: {e}"));
    assert!(
        out.status.success(),
        "cargo build {selection:?} failed:\n{}",
        text(&out)
    );
    let mut build = Build {
        artifacts: BTreeSet::new(),
        paths: std::collections::BTreeMap::new(),
        compiled: BTreeSet::new(),
        compiling_lines: String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.trim_start().starts_with("Compiling "))
            .map(|l| l.trim().to_owned())
            .collect(),
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let package = msg["package_id"].as_str().unwrap_or_default().to_owned();
        match msg["reason"].as_str() {
            Some("compiler-artifact") => {
                for f in msg["filenames"].as_array().into_iter().flatten() {
                    build.insert(f.as_str().unwrap());
                }
                if msg["fresh"] == serde_json::Value::Bool(false) {
                    build.compiled.insert(package);
                }
            }
            Some("build-script-executed") => {
                build.insert(msg["out_dir"].as_str().unwrap_or_default());
            }
            _ => {}
        }
    }
    build
}

impl Build {
    fn insert(&mut self, path: &str) {
        use std::os::unix::fs::MetadataExt;
        let meta =
            std::fs::metadata(path).unwrap_or_else(|e| panic!("cargo reported {path}, which cannot be read: {e}"));
        let id = (meta.dev(), meta.ino());
        self.artifacts.insert(id);
        self.paths.insert(id, path.to_owned());
    }
}

/// The workspace's members with a binary: the packages built alone, with
/// `-p` (the adapters, the runner, the test tools; scripts/build.sh and
/// nix/adapters.nix). Not the adapters with a lockfile of their own, which
/// are workspaces of their own, nor the libraries (harness, lockfile), which
/// only ever build as a dependency of one of these: their own `-p` build
/// has no workspace-hack, which they must not depend on (the own-lockfile
/// adapters use them by path).
fn members() -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(&cargo)
        .current_dir(workspace())
        .args([
            "metadata",
            "--locked",
            "--offline",
            "--no-deps",
            "--format-version",
            "1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo metadata failed:\n{}", text(&out));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| ids.contains(p["id"].as_str().unwrap()))
        .filter(|p| p["targets"].as_array().unwrap().iter().any(|t| t["kind"][0] == "bin"))
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

/// "registry+https://…#libc@0.2.189" → "libc@0.2.189";
/// "path+file:///…/harness#0.1.0" → "harness@0.1.0".
fn short(id: &str) -> String {
    let (source, rest) = id.rsplit_once('#').unwrap_or(("", id));
    if rest.contains('@') {
        rest.to_owned()
    } else {
        format!("{}@{rest}", source.rsplit('/').next().unwrap_or(source))
    }
}

#[test]
fn a_single_package_build_after_the_workspace_build_compiles_nothing() {
    let (target, profile) = target_and_profile();
    let workspace_build = cargo_build(&target, &profile, &["--workspace"]);
    let members = members();
    assert!(
        members.iter().any(|m| m == "adapter-raw"),
        "no adapters among the members: {members:?}"
    );
    // Stops at the first member that compiles: each such build can take minutes.
    for (n, member) in members.iter().enumerate() {
        let build = cargo_build(&target, &profile, &["-p", member]);
        let other: Vec<&String> = build
            .artifacts
            .difference(&workspace_build.artifacts)
            .map(|id| &build.paths[id])
            .collect();
        if other.is_empty() && build.compiled.is_empty() {
            continue;
        }
        let compiled: Vec<String> = build.compiled.iter().map(|id| short(id)).collect();
        // Artifacts the workspace build did not produce (compiled now or by an earlier -p build).
        let files: Vec<&str> = other
            .iter()
            .map(|a| Path::new(a.as_str()).file_name().unwrap().to_str().unwrap())
            .collect();
        panic!(
            "after `cargo build --profile {profile} --workspace`, `cargo build --profile {profile} -p {member}` \
             (member {} of {}, the ones before compiled nothing) compiles again: features differ between the \
             workspace and one package; in benches/: `cargo hakari generate && cargo hakari manage-deps` \
             (docs/nix.md, \"The build graph\")\n\
             {} `Compiling` lines: {}\n\
             {} crates compiled: {}\n\
             {} artifacts the workspace build did not produce: {}",
            n + 1,
            members.len(),
            build.compiling_lines.len(),
            build.compiling_lines.join("; "),
            compiled.len(),
            compiled.join(", "),
            files.len(),
            files.join(", ")
        );
    }
}
