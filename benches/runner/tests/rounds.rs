//! Cells measured in rounds (docs/scenarios.md, "Rounds, intervals and
//! budgets"): rounds interleaved across the cells, extra rounds only while
//! an interval is wider than the target, one timed operation for a cell over
//! its budget, the combined interval, and buses measured at once (`jobs`).

use std::path::Path;

use crate::common::*;
use harness::results::{CellStatus, ResultsFile};

const CODEC: [&str; 2] = ["marshal/mixed", "demarshal/mixed"];

/// A fault setup whose matrix has one more profile, `[profile.test]`.
fn setup_with_profile(tag: &str, adapters: &[&str], buses: &[&str], profile: &str) -> FaultSetup {
    let mut scenarios = CODEC.to_vec();
    if !buses.is_empty() {
        scenarios.push("call/void");
    }
    let setup = fault_setup_with_buses(tag, adapters, &scenarios, buses);
    let mut toml = std::fs::read_to_string(&setup.matrix).unwrap();
    toml += &format!("[profile.test]\n{profile}\n");
    std::fs::write(&setup.matrix, toml).unwrap();
    setup
}

/// Runs `[profile.test]` with `FAULT_ADAPTER_LOG`; the results and the log's lines.
fn run_logged(setup: &FaultSetup, env: &[(&str, &str)]) -> (ResultsFile, Vec<String>) {
    let log = setup.dir.path().join("invocations.log");
    let out = setup.out();
    let mut c = setup.command(&["run", "--profile", "test", "--quiet", "--out", out.to_str().unwrap()]);
    c.env("FAULT_ADAPTER_LOG", &log);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "run failed:\n{}", text(&o));
    let r = validate(&results_file(&out));
    let lines = std::fs::read_to_string(&log).unwrap_or_default();
    (r, lines.lines().map(str::to_string).collect())
}

fn benches(log: &[String]) -> Vec<&str> {
    log.iter()
        .filter(|l| l.split(' ').nth(1) == Some("bench"))
        .map(String::as_str)
        .collect()
}

#[test]
fn every_cell_gets_its_rounds_interleaved_with_the_other_cells() {
    let profile = "sample_size = 10\nwarm_up = 0.01\nmeasurement = 0.02\nnresamples = 1000\nrounds = 3";
    let setup = setup_with_profile("rounds-order", &["fault-ok", "fault-ok-2"], &[], profile);
    let (r, log) = run_logged(&setup, &[]);
    assert!(r.run.complete);
    let plan = r.plan.as_ref().unwrap();
    assert_eq!(
        (plan.fingerprint.profile.rounds, plan.fingerprint.profile.max_rounds),
        (3, 3)
    );
    let benches = benches(&log);
    // 2 adapters x 2 codec scenarios = 4 cells, 3 rounds each: round 1 of all
    // four, then round 2 of all four, then round 3 — never one cell's rounds back to back.
    assert_eq!(benches.len(), 12, "{benches:#?}");
    let first_round: Vec<&str> = benches[..4].to_vec();
    let mut distinct = first_round.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "round 1 measures each cell once: {benches:#?}");
    assert_eq!(&benches[4..8], &first_round[..], "round 2 in the same order");
    assert_eq!(&benches[8..12], &first_round[..], "round 3 in the same order");
    for c in &r.cells {
        let m = c.measurement().unwrap_or_else(|| panic!("{c:?}"));
        let rounds = &m.wall.round_medians_ns;
        assert_eq!(rounds.len(), 3, "{c:?}");
        // The combined median is the median of the round medians.
        let mut sorted = rounds.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(m.wall.median_ns.point, sorted[1]);
        assert!(m.wall.median_ns.lower <= sorted[1] && sorted[1] <= m.wall.median_ns.upper);
        assert_eq!(m.wall.sample_ns.len(), 30, "the samples of all three rounds");
        assert!(m.alloc.is_some(), "allocations are still counted (untimed)");
    }
}

#[test]
fn extra_rounds_go_to_cells_wider_than_the_target_and_stop_at_the_limit() {
    // An unreachable target: every cell gets max_rounds.
    let tight = "sample_size = 10\nwarm_up = 0.01\nmeasurement = 0.02\nnresamples = 1000\nrounds = 2\nmax_rounds = 4\ntarget_width = 0.000000001";
    let setup = setup_with_profile("rounds-tight", &["fault-ok"], &[], tight);
    let (r, log) = run_logged(&setup, &[]);
    assert_eq!(benches(&log).len(), 2 * 4, "{log:#?}");
    for c in &r.cells {
        assert_eq!(c.measurement().unwrap().wall.round_medians_ns.len(), 4, "{c:?}");
    }
    // A target every cell meets: exactly `rounds`.
    let loose = tight.replace("target_width = 0.000000001", "target_width = 10");
    let setup = setup_with_profile("rounds-loose", &["fault-ok"], &[], &loose);
    let (r, log) = run_logged(&setup, &[]);
    assert_eq!(benches(&log).len(), 2 * 2, "{log:#?}");
    for c in &r.cells {
        assert_eq!(c.measurement().unwrap().wall.round_medians_ns.len(), 2, "{c:?}");
        assert_eq!(r.plan.as_ref().unwrap().fingerprint.profile.target_width, Some(10.0));
    }
}

#[test]
fn an_operation_over_the_cell_budget_is_timed_once_and_the_cell_says_so() {
    // fault-slow adds about 1 ms of work per operation: over a 0.2 ms budget.
    let profile =
        "sample_size = 10\nwarm_up = 0.01\nmeasurement = 0.02\nnresamples = 1000\nrounds = 3\ncell_budget = 0.0002";
    let setup = setup_with_profile("rounds-cut", &["fault-ok"], &[], profile);
    let (r, log) = run_logged(&setup, &[("FAULT_ADAPTER_AS", "fault-slow")]);
    assert_eq!(benches(&log).len(), 2, "a cut cell gets no more rounds: {log:#?}");
    for c in &r.cells {
        let m = c.measurement().unwrap_or_else(|| panic!("{c:?}"));
        let cut = m.cut.as_deref().unwrap_or_else(|| panic!("{c:?}: not cut"));
        assert!(cut.contains("over the profile's cell budget of 0.0002 s"), "{cut}");
        assert_eq!((m.wall.samples, m.wall.sample_ns.len()), (1, 1));
        assert!(m.wall.round_medians_ns.is_empty());
        assert!(m.wall.median_ns.point > 200_000.0, "{:?}", m.wall.median_ns);
    }
}

#[test]
fn buses_are_measured_at_once_with_jobs_and_every_cell_is_kept() {
    let profile = "timer = \"direct\"\nsample_size = 10\nwarm_up = 0.01\nmeasurement = 0.02\njobs = 2";
    let setup = setup_with_profile("rounds-jobs", &["fault-ok", "fault-ok-2"], &["dbus-daemon"], profile);
    let (r, log) = run_logged(&setup, &[]);
    assert!(r.run.complete);
    // 2 adapters x (2 codec + call/void on dbus-daemon)
    assert_eq!(r.cells.len(), 6, "{:#?}", r.cells);
    assert!(r.cells.iter().all(|c| c.status() == CellStatus::Ok), "{:#?}", r.cells);
    assert_eq!(benches(&log).len(), 6);
    for c in &r.cells {
        let w = &c.measurement().unwrap().wall;
        // The direct timer: sample_size samples of one iteration count each.
        assert_eq!(w.samples, 10, "{c:?}");
        assert_eq!(w.iterations % 10, 0, "{c:?}");
    }
    // Pinning places one client, server and bus: refused with jobs > 1.
    let o = setup
        .command(&["run", "--profile", "test", "--quiet", "--pin", "client=0", "--out"])
        .arg(setup.out())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--pin cannot place"), "{}", text(&o));
}

#[test]
fn one_cpu_runs_client_server_and_bus_of_a_cell_on_its_worker_cpu() {
    let profile =
        "timer = \"direct\"\nsample_size = 10\nwarm_up = 0.01\nmeasurement = 0.02\njobs = 2\nplacement = \"one-cpu\"";
    // The fault adapter serves on a bus only; the codec cells are the other worker's.
    let setup = setup_with_profile("placement-one-cpu", &["fault-ok"], &["dbus-daemon"], profile);
    let (r, log) = run_logged(&setup, &[]);
    assert!(r.run.complete);
    assert_eq!(r.run.placement.as_deref(), Some("one-cpu"));
    let mut cell_cpus = Vec::new();
    for c in r.cells.iter().filter(|c| c.scenario == "call/void") {
        let placement = c.measurement().and_then(|m| m.placement.clone()).unwrap_or_default();
        let cpu = placement
            .strip_prefix("client=")
            .and_then(|rest| rest.split(',').next())
            .unwrap_or_else(|| panic!("{c:?}"));
        assert_eq!(placement, format!("client={cpu},server={cpu},bus={cpu}"), "{c:?}");
        cell_cpus.push(cpu.to_string());
    }
    assert_eq!(cell_cpus.len(), 1, "{:#?}", r.cells);
    // The processes ran where the cells say: each server and each timed call
    // could run on one CPU only, a CPU of the cells.
    let ipc: Vec<&String> = log
        .iter()
        .filter(|l| l.contains(" serve ") || l.contains(" call/void "))
        .collect();
    assert!(ipc.len() >= 2, "{log:#?}");
    for line in ipc {
        let cpus = line.rsplit("cpus=").next().unwrap();
        assert!(
            cell_cpus.iter().any(|c| c == cpus),
            "{line} not on one of {cell_cpus:?}"
        );
    }
    // The markdown report says so.
    let o = setup
        .command(&["report", "--format", "markdown"])
        .arg(results_file(&setup.out()))
        .output()
        .unwrap();
    assert!(text(&o).contains("on one CPU (`--pin one-cpu`"), "{}", text(&o));
}

#[test]
fn a_profile_with_bad_round_settings_is_refused() {
    for (bad, says) in [
        ("rounds = 0", "rounds = 0 must be"),
        ("rounds = 3\nmax_rounds = 2", "max_rounds = 2 must be from rounds (3)"),
        ("target_width = -1", "target_width = -1"),
        ("jobs = 0", "jobs = 0 must be"),
        ("cell_budget = nan", "cell_budget = NaN"),
        ("timer = \"sundial\"", "sundial"),
        ("costs = [\"marshal/mixed\"]", "not an IPC scenario"),
        ("placement = \"everywhere\"", "placement"),
        ("jobs = 2\nplacement = \"client=0\"", "jobs = 2 runs cells at once"),
    ] {
        let profile = format!("sample_size = 10\nwarm_up = 0.01\nmeasurement = 0.02\n{bad}");
        let setup = setup_with_profile("rounds-bad", &["fault-ok"], &[], &profile);
        let o = setup.command(&["list"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains(says), "{bad}: {}", text(&o));
        assert!(!Path::new(&setup.out()).exists(), "{bad}: no results file");
    }
}
