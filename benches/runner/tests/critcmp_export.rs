//! `dbus-matrix report --format critcmp`: the real `critcmp` binary reads two
//! exports (a run and a deliberately slowed run) and ranks the slowed one
//! slower, by the ratio of the means in the results files.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

const SCENARIOS: [&str; 2] = ["marshal/mixed", "demarshal/mixed"];
/// The version scripts/install-deps-debian.sh installs and export/critcmp.rs writes for.
const CRITCMP_VERSION: &str = "0.1.8";

/// `critcmp` on PATH, in the version the export was checked against; fails otherwise.
fn critcmp() -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("critcmp"))
            .find(|p| p.is_file())
    });
    let Some(bin) = found else {
        panic!("critcmp is not on PATH: run scripts/install-deps-debian.sh (it installs critcmp {CRITCMP_VERSION})")
    };
    let o = Command::new(&bin).arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&o.stdout);
    assert!(
        version.trim() == format!("critcmp {CRITCMP_VERSION}"),
        "{} is {version:?}, not critcmp {CRITCMP_VERSION}: run scripts/install-deps-debian.sh",
        bin.display()
    );
    bin
}

/// `report FILE --format critcmp [extra]` written to `to`.
fn export(results: &Path, extra: &[&str], to: &Path) -> serde_json::Value {
    let o = dbus_matrix(&["report", results.to_str().unwrap(), "--format", "critcmp"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(to, &o.stdout).unwrap();
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

fn mean_ns(results: &Path, scenario: &str) -> f64 {
    let r = validate(results);
    let c = r.cells.iter().find(|c| c.scenario == scenario).unwrap();
    c.measurement().unwrap().wall.mean_ns.point
}

fn run_critcmp(bin: &Path, dir: &Path, args: &[&str]) -> String {
    // In the temporary directory: no target/criterion of ours is picked up.
    let o = Command::new(bin)
        .current_dir(dir)
        .args(["--color", "never"])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "critcmp {args:?} failed:\n{}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn critcmp_reads_two_exports_and_ranks_the_slowed_run_slower() {
    let bin = critcmp();
    let setup = fault_setup("critcmp", &["fault-ok"], &SCENARIOS);
    let base = smoke_run(&setup, "base", false);
    let slow = smoke_run(&setup, "slow", true);
    let dir = setup.dir.path();

    // The default name is the run's (start time and profile), which is also
    // the results file's stem; --baseline sets one.
    let old = export(&base, &[], &dir.join("old.json"));
    let stem = base.file_stem().unwrap().to_str().unwrap();
    assert_eq!(old["name"], stem);
    let new = export(&slow, &["--baseline", "slowed"], &dir.join("new.json"));
    assert_eq!(new["name"], "slowed");
    let names: Vec<&String> = new["benchmarks"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["fault-ok/demarshal/mixed", "fault-ok/marshal/mixed"]);

    let columns = run_critcmp(&bin, dir, &["old.json", "new.json"]);
    eprintln!("critcmp old.json new.json:\n{columns}");
    let header = columns.lines().next().unwrap();
    assert!(
        header.starts_with("group") && header.contains(stem) && header.contains("slowed"),
        "{columns}"
    );
    for s in SCENARIOS {
        assert!(columns.contains(&format!("fault-ok/{s} ")), "{s}:\n{columns}");
    }

    // --list: per benchmark, its name, a divider, then one line per baseline,
    // fastest first: `NAME  RANK  MEAN±SD  THROUGHPUT`.
    let list = run_critcmp(&bin, dir, &["--list", "old.json", "new.json"]);
    for s in SCENARIOS {
        let name = format!("fault-ok/{s}");
        let lines: Vec<Vec<&str>> = list
            .lines()
            .skip_while(|l| l.trim() != name)
            .skip(2)
            .take(2)
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(lines.len(), 2, "{name} missing:\n{list}");
        assert_eq!(
            &lines[0][..2],
            [stem, "1.00"],
            "{name}: the unslowed run is fastest:\n{list}"
        );
        assert_eq!(lines[1][0], "slowed", "{list}");
        let rank: f64 = lines[1][1].parse().unwrap_or_else(|e| panic!("{e}:\n{list}"));
        // critcmp ranks by the mean: our mean, read back.
        let ratio = mean_ns(&slow, s) / mean_ns(&base, s);
        assert!(
            (rank - ratio).abs() <= 0.011,
            "{name}: rank {rank}, mean ratio {ratio}:\n{list}"
        );
        // The slowed adapter adds ~1 ms to 10-50 µs (see compare.rs).
        assert!(rank > 4.0, "{name}: the slowed run is only {rank}× slower:\n{list}");
    }
}

#[test]
fn baseline_is_only_for_critcmp() {
    let results = repo_root().join("docs/results/2026-11-23-quick.json");
    let o = dbus_matrix(&["report", results.to_str().unwrap(), "--baseline", "x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--baseline is only for --format critcmp"),
        "{}",
        text(&o)
    );
}
