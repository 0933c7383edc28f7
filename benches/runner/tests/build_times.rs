//! `dbus-matrix build-times`: one real measurement (raw, the cheapest
//! adapter) in a fresh target directory, which costs one cold build of the
//! harness and its dependencies; the figures are recorded into a results file.

use std::process::Command;

use crate::common::*;
use harness::results::{AdapterRecord, Environment, ResultsFile, RunInfo, FORMAT_NAME, SCHEMA_VERSION};

fn results_with(adapters: Vec<AdapterRecord>) -> ResultsFile {
    ResultsFile {
        format: FORMAT_NAME.into(),
        schema_version: SCHEMA_VERSION,
        run: RunInfo {
            started_at: "2026-11-23T11:00:00Z".into(),
            finished_at: None,
            profile: "smoke".into(),
            revision: "test".into(),
            tool_version: "0.1.0".into(),
            command: vec!["dbus-matrix".into(), "run".into()],
            placement: None,
            complete: true,
            resumes: Vec::new(),
            runner_revision: None,
            matrix: None,
        },
        plan: None,
        environment: Environment {
            rustc: "rustc 1.0.0".into(),
            cpu_model: "Some CPU".into(),
            cpus: 2,
            memory_bytes: 1 << 30,
            kernel: "6.1".into(),
            os: "Debian".into(),
            hostname_hash: "0000000000000000".into(),
            mode: "host".into(),
            valgrind: None,
        },
        adapters,
        buses: vec![],
        cells: vec![],
        interop: None,
    }
}

fn record(id: &str, library: &str, version: &str) -> AdapterRecord {
    AdapterRecord {
        id: id.into(),
        library: library.into(),
        version: version.into(),
        baseline: id == "raw",
        loaded_bytes: Some(1_000_000),
        runtime: None,
        build: None,
        patch: None,
        pin: None,
    }
}

#[test]
fn raw_adds_only_itself_to_a_build_and_is_recorded() {
    // The version the checkout's raw adapter reports, so that the file matches.
    let listing = Command::new(bin_dir().join("adapter-raw"))
        .arg("list")
        .output()
        .unwrap();
    let listing: serde_json::Value = serde_json::from_slice(&listing.stdout).unwrap();
    let raw_version = listing["version"].as_str().unwrap().to_string();

    let dir = TempDir::new("build-times");
    let file = dir.path().join("results.json");
    let before = results_with(vec![
        record("zbus-6", "zbus", "6.0.0"),
        record("raw", "raw", &raw_version),
    ]);
    std::fs::write(&file, serde_json::to_vec_pretty(&before).unwrap()).unwrap();

    // The workspace named explicitly: in the Nix check it is source/, not
    // the benches/ next to matrix.toml that build-times looks for by default.
    let o = dbus_matrix(&["--matrix", repo_matrix().to_str().unwrap()])
        .env("DBUS_MATRIX_WORKSPACE", workspace())
        .args(["build-times", "--adapters", "raw", "--format", "json", "--quiet"])
        .arg("--into")
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", text(&o)));
    assert!(report["rustc"].as_str().unwrap().starts_with("rustc "), "{report}");
    let jobs = report["jobs"].as_u64().unwrap();
    assert!(jobs >= 1, "{report}");
    let adapters = report["adapters"].as_array().unwrap();
    assert_eq!(adapters.len(), 1, "{report}");
    let raw = &adapters[0];
    assert_eq!(raw["id"], "raw");
    assert_eq!(raw["version"].as_str(), Some(raw_version.as_str()));
    let seconds = raw["seconds"].as_f64().unwrap();
    assert!(seconds > 0.0, "{report}");
    // raw depends on nothing but the harness and anyhow (which the harness
    // has too): a build that recompiled the shared crates would count dozens.
    assert_eq!(
        raw["crates_compiled"].as_u64(),
        Some(1),
        "only adapter-raw itself is compiled:\n{}",
        text(&o)
    );
    assert!(raw["loaded_bytes"].as_u64().unwrap() > 100_000, "{report}");

    // Recorded into the results file: still valid and loadable, raw has `build`, zbus-6 untouched.
    let after = validate(&file);
    let rec = after.adapters.iter().find(|a| a.id == "raw").unwrap();
    let build = rec.build.as_ref().expect("raw has build figures");
    assert_eq!(build.seconds, seconds);
    assert_eq!(build.crates_compiled, 1);
    assert_eq!(u64::from(build.jobs), jobs);
    assert_eq!(rec.loaded_bytes, Some(1_000_000), "the run's figures are kept");
    assert!(after
        .adapters
        .iter()
        .find(|a| a.id == "zbus-6")
        .unwrap()
        .build
        .is_none());
    assert_eq!(after.cells, before.cells);

    let o = dbus_matrix(&["report", file.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!(
            "raw (baseline) 1.0 MB (build {seconds:.1} s, 1 crate, -j {jobs})"
        )),
        "{}",
        text(&o)
    );
}

#[test]
fn without_sources_the_user_is_told_why() {
    let dir = TempDir::new("build-times-nosrc");
    let matrix = dir.path().join("matrix.toml");
    std::fs::copy(repo_matrix(), &matrix).unwrap();
    // As a Nix-installed runner sees it: adapters prebuilt, no sources (their `path` is not checked).
    let o = dbus_matrix(&["--matrix", matrix.to_str().unwrap(), "build-times", "--adapters", "raw"])
        .env("DBUS_MATRIX_PREBUILT", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("no benches/Cargo.toml next to") && text(&o).contains("checkout"),
        "{}",
        text(&o)
    );
}

/// `build-times --patch`: rustbus-0.19 timed twice from the same prepared
/// state, the second build against a copy of rustbus's source (unchanged, so
/// both say 0.19.3): one row each, the patched one `rustbus-0.19+patch`,
/// and the copy's lockfile put back in between (the released build is
/// `--locked`, the patched one cannot be).
#[test]
fn a_patched_build_is_timed_beside_the_released_one() {
    let dir = TempDir::new("build-times-patch");
    let src = dir.path().join("rustbus");
    let o = Command::new("cp")
        .arg("-r")
        .arg(crate::patch_rows::registry_rustbus())
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = dbus_matrix(&["--matrix", repo_matrix().to_str().unwrap()])
        .env("DBUS_MATRIX_WORKSPACE", workspace())
        .args([
            "build-times",
            "--adapters",
            "raw,rustbus-0.19",
            "--format",
            "json",
            "--quiet",
        ])
        .arg("--patch")
        .arg(format!("rustbus={}", src.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", text(&o)));
    let ids: Vec<&str> = report["adapters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["rustbus-0.19", "rustbus-0.19+patch", "raw"],
        "matrix.toml's order, the patched row after its adapter: {report}"
    );
    let row = |id: &str| {
        report["adapters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id)
            .unwrap()
            .clone()
    };
    for id in ["rustbus-0.19", "rustbus-0.19+patch"] {
        assert_eq!(row(id)["version"], "0.19.3", "{report}");
        // rustbus itself and the adapter at least, from the same prepared state.
        assert!(row(id)["crates_compiled"].as_u64().unwrap() >= 2, "{id}: {report}");
    }
    assert_eq!(
        row("rustbus-0.19")["crates_compiled"],
        row("rustbus-0.19+patch")["crates_compiled"],
        "the same crates compiled for both: {report}"
    );
}

#[test]
fn build_times_refuses_bad_patches_before_building() {
    let rustbus = crate::patch_rows::registry_rustbus();
    for (patch, expected) in [
        ("rustbus".to_string(), "expected CRATE=PATH"),
        (
            format!("rustbus={}", rustbus.display()),
            "no selected workspace adapter (adapter-raw) depends on rustbus",
        ),
    ] {
        let o = dbus_matrix(&["--matrix", repo_matrix().to_str().unwrap()])
            .env("DBUS_MATRIX_WORKSPACE", workspace())
            .args(["build-times", "--adapters", "raw", "--quiet", "--patch", &patch])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{patch}: {}", text(&o));
        assert!(
            text(&o).contains(expected),
            "{patch}: expected {expected:?} in:\n{}",
            text(&o)
        );
    }
}
