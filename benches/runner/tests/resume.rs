//! The resume contract: a results file records its plan and a fingerprint
//! of the setup; `run --resume FILE` alone finishes exactly that plan,
//! refuses a file of another setup (unless `--force`, which is recorded),
//! `--rerun CELLS` measures chosen cells again; two runs started in the same
//! second into one directory both keep their cells.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::common::*;
use harness::results::{CellStatus, ResultsFile};

const ADAPTERS: [&str; 3] = ["fault-ok", "fault-hang", "fault-crash"];
const SCENARIOS: [&str; 3] = ["marshal/mixed", "demarshal/mixed", "marshal/big-array"];

/// A fault matrix with a second profile, so that a resume that falls back
/// to a default profile or to the whole matrix shows.
fn fault_matrix(tag: &str) -> FaultSetup {
    let s = fault_setup(tag, &ADAPTERS, &SCENARIOS);
    let mut toml = std::fs::read_to_string(&s.matrix).unwrap();
    toml += "[profile.quick]\nsample_size = 10\nwarm_up = 0.05\nmeasurement = 0.2\nnresamples = 1000\n";
    std::fs::write(&s.matrix, toml).unwrap();
    s
}

fn keys(r: &ResultsFile) -> BTreeSet<String> {
    r.cells
        .iter()
        .map(|c| format!("{}/{}", c.adapter, c.scenario))
        .collect()
}

fn load(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn save(path: &Path, v: &serde_json::Value) {
    std::fs::write(path, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

#[test]
fn resume_alone_finishes_exactly_the_interrupted_filtered_plan() {
    let setup = fault_matrix("resume-plan");
    let out = setup.out();
    let selection = [
        "--adapters",
        "fault-ok,fault-hang",
        "--scenarios",
        "marshal/mixed,demarshal/mixed",
        "--cell-timeout",
        "5",
    ];
    // An uninterrupted run of the same selection, alongside (its own copy of
    // the setup, so that its adapter processes are told apart): the reference.
    let reference_setup = fault_matrix("resume-plan-reference");
    let reference_out = reference_setup.out();
    let reference = reference_setup
        .command(&[
            "run",
            "--profile",
            "smoke",
            "--quiet",
            "--out",
            reference_out.to_str().unwrap(),
        ])
        .args(selection)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    let mut child = setup
        .command(&["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()])
        .args(selection)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // fault-ok marshal/mixed runs first; once fault-hang is timing, that cell is written.
    wait_for_process(
        &format!("{} bench", setup.bin("fault-hang")),
        Duration::from_secs(60),
        "the hang cell never started",
    );
    send_signal(child.id(), libc::SIGINT);
    assert_eq!(child.wait().unwrap().code(), Some(130), "SIGINT ends the run with 130");
    let file = results_file(&out);
    let interrupted = validate(&file);
    assert!(!interrupted.run.complete);
    assert!(
        !interrupted.cells.is_empty() && interrupted.cells.len() < 4,
        "the interrupted file holds the first cells only: {:?}",
        keys(&interrupted)
    );

    // Flags that disagree with the recorded plan are refused, the file untouched.
    let o = setup
        .command(&[
            "run",
            "--quiet",
            "--resume",
            file.to_str().unwrap(),
            "--adapters",
            "fault-ok",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--adapters"), "{}", text(&o));
    assert_eq!(validate(&file), interrupted);

    // `--resume FILE` alone: no profile, no selection.
    let o = setup
        .command(&["run", "--quiet", "--resume", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "the hang cells fail, nothing else:\n{}",
        text(&o)
    );
    let resumed = validate(&file);
    assert!(resumed.run.complete);
    assert_eq!(resumed.run.profile, "smoke");

    let reference = {
        let mut reference = reference;
        assert_eq!(reference.wait().unwrap().code(), Some(1));
        validate(&results_file(&reference_out))
    };
    assert_eq!(
        keys(&resumed),
        keys(&reference),
        "resume ran another plan than the interrupted run"
    );
    assert_eq!(resumed.cells.len(), 4);
    for c in &interrupted.cells {
        let after = resumed.cells.iter().find(|a| a.key() == c.key()).unwrap();
        assert_eq!(after, c, "a finished cell was measured again");
    }
    assert_eq!(status_of(&resumed, "fault-ok", "demarshal/mixed"), CellStatus::Ok);
    assert_eq!(status_of(&resumed, "fault-hang", "marshal/mixed"), CellStatus::Failed);
    let reason = resumed
        .cells
        .iter()
        .find(|c| c.adapter == "fault-hang")
        .unwrap()
        .reason()
        .unwrap()
        .to_string();
    assert!(
        reason.contains("timed out after 5 s"),
        "the recorded cell timeout applies: {reason}"
    );

    // The same flags as recorded are accepted (nothing left to run).
    let o = setup
        .command(&[
            "run",
            "--quiet",
            "--resume",
            file.to_str().unwrap(),
            "--profile",
            "smoke",
        ])
        .args(&selection[..4])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(keys(&validate(&file)), keys(&reference));
}

#[test]
fn a_file_of_another_setup_is_refused_unless_forced() {
    let setup = fault_matrix("resume-fingerprint");
    let out = setup.out();
    let o = setup
        .command(&["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()])
        .args(["--adapters", "fault-ok", "--scenarios", "marshal/mixed,demarshal/mixed"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let file = results_file(&out);
    let mut v = load(&file);
    // Pretend: another library version and another machine, one cell to go.
    for a in v["plan"]["fingerprint"]["adapters"].as_array_mut().unwrap() {
        a["version"] = "9.9.9".into();
    }
    for a in v["adapters"].as_array_mut().unwrap() {
        a["version"] = "9.9.9".into();
    }
    v["environment"]["hostname_hash"] = "0000000000000000".into();
    v["run"]["complete"] = false.into();
    v["cells"].as_array_mut().unwrap().pop();
    save(&file, &v);
    let before = std::fs::read(&file).unwrap();

    let o = setup
        .command(&["run", "--quiet", "--resume", file.to_str().unwrap()])
        .output()
        .unwrap();
    let msg = text(&o);
    assert_eq!(o.status.code(), Some(2), "{msg}");
    assert!(
        msg.contains("fault-ok") && msg.contains("9.9.9"),
        "names the adapter version:\n{msg}"
    );
    assert!(msg.contains("0000000000000000"), "names the host:\n{msg}");
    assert!(msg.contains("--force"), "says how to override:\n{msg}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "a refused resume changed the file"
    );

    let o = setup
        .command(&["run", "--quiet", "--force", "--resume", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = validate(&file);
    assert!(r.run.complete);
    assert_eq!(r.cells.len(), 2);
    let v = load(&file);
    let forced = v["run"]["resumes"][0]["forced_differences"].to_string();
    assert!(forced.contains("9.9.9") && forced.contains("0000000000000000"), "{v:#}");
}

#[test]
fn an_old_file_without_a_plan_cannot_be_resumed() {
    let old = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-1.json");
    let dir = TempDir::new("resume-old");
    let copy = dir.path().join("old.json");
    std::fs::copy(&old, &copy).unwrap();
    let o = dbus_matrix(&[
        "--matrix",
        repo_matrix().to_str().unwrap(),
        "run",
        "--resume",
        copy.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no recorded plan"), "{}", text(&o));
    // It still loads for reading.
    let o = dbus_matrix(&["report", copy.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn rerun_measures_chosen_cells_again() {
    let setup = fault_matrix("rerun");
    let out = setup.out();
    let o = setup
        .command(&["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()])
        .args(["--adapters", "fault-ok", "--scenarios", "marshal/mixed,demarshal/mixed"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let file = results_file(&out);
    let before = validate(&file);

    let o = setup
        .command(&[
            "run",
            "--quiet",
            "--resume",
            file.to_str().unwrap(),
            "--rerun",
            "fault-ok/nothing*",
        ])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "a pattern that matches no cell is refused:\n{}",
        text(&o)
    );

    let o = setup
        .command(&[
            "run",
            "--quiet",
            "--resume",
            file.to_str().unwrap(),
            "--rerun",
            "fault-ok/marshal/*",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let after = validate(&file);
    assert!(after.run.complete);
    assert_eq!(keys(&after), keys(&before));
    let cell = |r: &ResultsFile, s: &str| r.cells.iter().find(|c| c.scenario == s).unwrap().clone();
    assert_eq!(
        cell(&after, "demarshal/mixed"),
        cell(&before, "demarshal/mixed"),
        "kept"
    );
    assert_ne!(
        cell(&after, "marshal/mixed"),
        cell(&before, "marshal/mixed"),
        "measured again"
    );
    assert_eq!(cell(&after, "marshal/mixed").status(), CellStatus::Ok);
    let v = load(&file);
    assert_eq!(v["run"]["resumes"][0]["rerun"][0], "fault-ok/marshal/mixed", "{v:#}");
}

#[test]
fn two_runs_started_in_the_same_second_keep_their_cells() {
    let setup = fault_matrix("collision");
    let out = setup.out();
    // Start both right after a second boundary, so that they share it.
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    std::thread::sleep(Duration::from_nanos(1_000_000_000 - u64::from(now.subsec_nanos())) + Duration::from_millis(20));
    let spawn = |scenario: &str| {
        setup
            .command(&["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()])
            .args(["--adapters", "fault-ok", "--scenarios", scenario])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("marshal/mixed"), spawn("demarshal/mixed"));
    for child in [a, b] {
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    }
    let mut files: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "one run's file was overwritten: {files:?}");
    let mut scenarios = BTreeSet::new();
    for f in &files {
        let r = validate(f);
        assert!(r.run.complete);
        assert_eq!(r.cells.len(), 1, "{}", f.display());
        scenarios.insert(r.cells[0].scenario.clone());
    }
    assert_eq!(scenarios.len(), 2, "both runs' cells are kept");
}

/// A finished run of fault-ok's two codec cells, made resumable again
/// (incomplete, one cell dropped): its file and parsed JSON.
fn resumable(setup: &FaultSetup) -> (std::path::PathBuf, serde_json::Value) {
    let out = setup.out();
    let o = setup
        .command(&["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()])
        .args(["--adapters", "fault-ok", "--scenarios", "marshal/mixed,demarshal/mixed"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let file = results_file(&out);
    let mut v = load(&file);
    v["run"]["complete"] = false.into();
    v["cells"].as_array_mut().unwrap().pop();
    save(&file, &v);
    (file, v)
}

#[test]
fn a_tampered_cell_timeout_is_refused_naming_the_field() {
    let setup = fault_matrix("resume-timeout");
    let (file, v) = resumable(&setup);
    for bad in [-1.0, 0.0, 1e-300, 1e30, f64::MAX] {
        let mut t = v.clone();
        t["plan"]["cell_timeout_s"] = bad.into();
        save(&file, &t);
        let o = setup
            .command(&["run", "--quiet", "--resume", file.to_str().unwrap()])
            .output()
            .unwrap();
        let msg = text(&o);
        assert_eq!(o.status.code(), Some(2), "cell_timeout_s {bad}:\n{msg}");
        assert!(msg.contains("plan.cell_timeout_s"), "names the field ({bad}):\n{msg}");
    }
    // Not a number at all: refused as not the schema.
    let mut t = v.clone();
    t["plan"]["cell_timeout_s"] = "NaN".into();
    save(&file, &t);
    let o = setup
        .command(&["run", "--quiet", "--resume", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// Ctrl-C while the runner asks the adapters what they are: the file it
/// leaves (no cell, versions `unknown`) resumes, and the resume records the
/// versions it learns.
#[test]
fn a_run_interrupted_while_listing_the_adapters_resumes() {
    let setup = fault_matrix("resume-listing");
    let out = setup.out();
    let mut child = setup
        .command(&["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()])
        .args(["--adapters", "fault-ok", "--scenarios", "marshal/mixed"])
        .env("FAULT_ADAPTER_AS", "fault-hang-list")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_process(
        &format!("{} list", setup.bin("fault-ok")),
        Duration::from_secs(30),
        "the listing never started",
    );
    send_signal(child.id(), libc::SIGINT);
    assert_eq!(child.wait().unwrap().code(), Some(130), "SIGINT ends the run with 130");
    let Ok(dir) = std::fs::read_dir(&out) else {
        return; // no file written: nothing to resume, nothing refused
    };
    let files: Vec<_> = dir
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    for file in files {
        let o = setup
            .command(&["run", "--quiet", "--resume", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "its own resume refuses it:\n{}", text(&o));
        let r = validate(&file);
        assert!(r.run.complete);
        assert_eq!(status_of(&r, "fault-ok", "marshal/mixed"), CellStatus::Ok);
        let v = load(&file);
        assert_eq!(v["adapters"][0]["version"], "0.0.0", "{v:#}");
        assert_eq!(v["plan"]["fingerprint"]["adapters"][0]["version"], "0.0.0", "{v:#}");
        assert!(v["run"]["resumes"][0]["forced_differences"].is_null(), "{v:#}");
    }
}
