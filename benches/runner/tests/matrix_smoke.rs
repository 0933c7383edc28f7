//! The whole repository matrix: every adapter does the same work (verify),
//! and a smoke run covers every adapter x scenario cell with a valid results
//! file whose reports render.

mod common;
use common::*;
use harness::results::CellStatus;

#[test]
fn every_adapter_passes_verification() {
    let o = dbus_matrix(&["--matrix", repo_matrix().to_str().unwrap(), "verify"])
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success(), "verify failed:\n{out}");
    let m: toml::Value = toml::from_str(&std::fs::read_to_string(repo_matrix()).unwrap()).unwrap();
    let adapters = m["adapter"].as_array().unwrap().len();
    let scenarios = m["scenario"].as_array().unwrap().len();
    let lines = out
        .lines()
        .filter(|l| l.contains(" ok") || l.contains("unsupported:"))
        .count();
    assert_eq!(
        lines,
        adapters * scenarios,
        "one verdict per adapter x scenario:\n{out}"
    );
    assert!(out.contains("verify: 0 failed"));
}

#[test]
fn smoke_run_covers_every_cell_and_reports() {
    let out = TempDir::new("smoke");
    let o = dbus_matrix(&[
        "--matrix",
        repo_matrix().to_str().unwrap(),
        "run",
        "--profile",
        "smoke",
        "--quiet",
        "--out",
        out.path().to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(o.status.success(), "smoke run failed:\n{}", text(&o));
    let file = results_file(out.path());
    let r = validate(&file);
    assert!(r.run.complete);
    assert_eq!(r.run.profile, "smoke");
    let m: toml::Value = toml::from_str(&std::fs::read_to_string(repo_matrix()).unwrap()).unwrap();
    for a in m["adapter"].as_array().unwrap() {
        let id = a["id"].as_str().unwrap();
        let rec = r
            .adapters
            .iter()
            .find(|x| x.id == id)
            .unwrap_or_else(|| panic!("adapter {id} missing"));
        assert!(!rec.version.is_empty());
        for s in m["scenario"].as_array().unwrap() {
            let s = s["id"].as_str().unwrap();
            let st = status_of(&r, id, s);
            assert_ne!(st, CellStatus::Failed, "{id} {s} failed");
        }
    }
    for format in ["markdown", "csv", "json"] {
        let o = dbus_matrix(&["report", file.to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        assert!(o.status.success(), "report --format {format}: {}", text(&o));
        assert!(text(&o).contains("marshal/mixed"));
    }
}
