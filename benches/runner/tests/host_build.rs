//! The one build of host mode (scripts/build.sh, shared by quick.sh and
//! test.sh) and the run's preflight: after the build, a run of the whole
//! matrix finds every adapter's binary; a missing one is named, with all
//! others missing, and the one command that builds them. Adapter lists come
//! from matrix.toml and the adapters' directories, never from this file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

fn matrix() -> toml::Table {
    std::fs::read_to_string(repo_matrix()).unwrap().parse().unwrap()
}

/// (id, package, has a lockfile of its own) of every Cargo adapter of matrix.toml.
fn cargo_adapters() -> Vec<(String, String, bool)> {
    matrix()["adapter"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a.get("program").is_none())
        .map(|a| {
            let path = repo_root().join(a["path"].as_str().unwrap());
            (
                a["id"].as_str().unwrap().to_owned(),
                a["package"].as_str().unwrap().to_owned(),
                path.join("Cargo.lock").is_file(),
            )
        })
        .collect()
}

fn every_adapter_id() -> Vec<String> {
    matrix()["adapter"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_owned())
        .collect()
}

fn reference_package() -> String {
    let m = matrix();
    let id = m["roles"]["reference"].as_str().unwrap();
    let a = m["adapter"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"].as_str() == Some(id))
        .unwrap();
    a["package"].as_str().unwrap().to_owned()
}

fn preflight(bin: &Path, args: &[&str]) -> std::process::Output {
    let mut c = Command::new(runner_bin());
    c.args([
        "--matrix",
        repo_matrix().to_str().unwrap(),
        "--bin-dir",
        bin.to_str().unwrap(),
    ]);
    c.args(["run", "--preflight"]).args(args);
    c.output().unwrap()
}

#[test]
fn after_the_shared_build_a_run_of_the_whole_matrix_finds_every_adapter() {
    let o = preflight(&bin_dir(), &[]);
    let out = text(&o);
    assert!(o.status.success(), "preflight of the whole matrix failed:\n{out}");
    for id in every_adapter_id() {
        // A row this build mode cannot have (ruby-dbus in Nix) is not run,
        // with the matrix's reason.
        let ready = match unavailable_here(&id) {
            Some(why) => format!("not run here: {why}"),
            None => "ready".to_string(),
        };
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("{id} ")) && l.contains(&ready)),
            "no {ready:?} line for {id}:\n{out}"
        );
    }
}

/// A bin dir `…/target/ci` of links to the real binaries, without `leave_out`.
fn bin_dir_without(tmp: &TempDir, leave_out: &BTreeSet<String>) -> PathBuf {
    let dir = tmp.path().join("target").join("ci");
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(bin_dir()).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_file() && !leave_out.contains(&name) {
            std::os::unix::fs::symlink(entry.path(), dir.join(&name)).unwrap();
        }
    }
    dir
}

#[test]
fn every_missing_binary_is_named_with_the_command_that_builds_them_all() {
    // What `cargo build --workspace` alone leaves out: the own-lockfile adapters.
    let own: Vec<(String, String, bool)> = cargo_adapters().into_iter().filter(|a| a.2).collect();
    assert!(!own.is_empty(), "matrix.toml has no adapter with a lockfile of its own");
    let tmp = TempDir::new("preflight-missing");
    let dir = bin_dir_without(&tmp, &own.iter().map(|a| a.1.clone()).collect());
    let o = preflight(&dir, &[]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    let ids: Vec<&str> = own.iter().map(|a| a.0.as_str()).collect();
    for (id, package, _) in &own {
        assert!(
            out.contains(&format!("{id} ({package})")) || own.len() == 1,
            "{id} not named:\n{out}"
        );
    }
    assert!(
        out.contains(&format!("bash scripts/build.sh ci --adapters {}", ids.join(","))),
        "no single build command for {ids:?}:\n{out}"
    );
    assert!(
        !out.contains("ready"),
        "preflight asked adapters before every binary was there:\n{out}"
    );
}

/// `run --list-builds ARGS` on the repository's matrix.
fn list_builds(args: &[&str]) -> Vec<String> {
    let o = dbus_matrix(&["--matrix", repo_matrix().to_str().unwrap(), "run", "--list-builds"])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_build_list_names_every_cargo_adapter_own_lockfiles_by_manifest() {
    let lines = list_builds(&[]);
    for (id, package, own) in cargo_adapters() {
        let wanted = if own {
            lines
                .iter()
                .any(|l| l.starts_with("manifest /") && l.ends_with(&format!("/{}/Cargo.toml", id_dir(&id))))
        } else {
            lines.contains(&format!("package {package}"))
        };
        assert!(
            wanted,
            "{id} ({package}, own lockfile: {own}) is not built:\n{}",
            lines.join("\n")
        );
    }
    // A selection builds only itself and the reference its roles need.
    let lines = list_builds(&["--profile", "quick", "--adapters", "zbus-6,rustbus-0.19"]);
    let got: BTreeSet<&str> = lines.iter().map(String::as_str).collect();
    let reference = format!("package {}", reference_package());
    let want: BTreeSet<&str> = [
        "package adapter-zbus-6",
        "package adapter-rustbus-0-19",
        reference.as_str(),
    ]
    .into();
    assert_eq!(got, want);
}

/// The directory name of an adapter under adapters/ (its path in matrix.toml).
fn id_dir(id: &str) -> String {
    let m = matrix();
    let a = m["adapter"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"].as_str() == Some(id))
        .unwrap();
    Path::new(a["path"].as_str().unwrap())
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// scripts/build.sh with a `cargo` first on PATH that only writes down its
/// arguments: the runner it then asks is the real one of this build.
fn build_sh(args: &[&str]) -> (std::process::Output, Vec<String>) {
    let tmp = TempDir::new("build-sh");
    let fake = tmp.path().join("bin");
    std::fs::create_dir_all(&fake).unwrap();
    let log = tmp.path().join("cargo.log");
    let cargo = fake.join("cargo");
    std::fs::write(&cargo, format!("#!/bin/sh\necho \"$*\" >> '{}'\n", log.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap_or_default());
    let o = Command::new("bash")
        .arg(repo_root().join("scripts/build.sh"))
        .arg("ci")
        .args(args)
        // Its `$HOME/.cargo/bin` goes first on PATH: a HOME without one keeps the fake first.
        .env("HOME", tmp.path())
        .env("PATH", path)
        .output()
        .unwrap();
    let calls = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    (o, calls)
}

#[test]
fn build_sh_builds_the_workspace_and_every_own_lockfile_adapter_then_preflights() {
    let (o, calls) = build_sh(&[]);
    assert!(o.status.success(), "{}\ncargo calls: {calls:#?}", text(&o));
    assert!(
        calls.iter().any(|c| c == "build --profile ci --locked --workspace"),
        "{calls:#?}"
    );
    for (id, _, _) in cargo_adapters().into_iter().filter(|a| a.2) {
        let manifest = format!("/{}/Cargo.toml --target-dir target", id_dir(&id));
        assert!(
            calls
                .iter()
                .any(|c| c.starts_with("build --profile ci --locked --manifest-path /") && c.ends_with(&manifest)),
            "{id} (own lockfile) is not built by scripts/build.sh: {calls:#?}"
        );
    }
    assert!(
        text(&o).contains(&format!("preflight: {} adapters ready", every_adapter_id().len())),
        "{}",
        text(&o)
    );
}

#[test]
fn build_sh_with_a_selection_builds_only_what_its_run_needs() {
    let (o, calls) = build_sh(&["--profile", "quick", "--adapters", "zbus-6,rustbus-0.19"]);
    assert!(o.status.success(), "{}\ncargo calls: {calls:#?}", text(&o));
    let selected = format!(
        "build --profile ci --locked -p adapter-zbus-6 -p adapter-rustbus-0-19 -p {}",
        reference_package()
    );
    assert_eq!(
        calls,
        vec!["build --profile ci --locked -p dbus-matrix".to_owned(), selected]
    );
    assert!(text(&o).contains("preflight: 3 adapters ready"), "{}", text(&o));
}
