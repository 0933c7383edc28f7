//! The raw-sample form (what a non-Rust adapter writes) and the one method
//! that turns samples into figures (harness::raw_samples): fed criterion's
//! own raw samples of one run, it must agree with criterion's estimates of
//! that run within 2%. Here, not in the harness, because the Nix source
//! filter keeps runner/tests/fixtures/ only.

use std::path::{Path, PathBuf};

use harness::cli::read_criterion_output;
use harness::results::{BenchResult, Estimate, RawSample, WallTime};

fn fixture(name: &str) -> PathBuf {
    crate::common::workspace()
        .join("runner/tests/fixtures/criterion")
        .join(name)
}

/// criterion's `sample.json` of a fixture as raw samples.
fn raw_samples_of(dir: &Path) -> Vec<RawSample> {
    #[derive(serde::Deserialize)]
    struct Sample {
        iters: Vec<f64>,
        times: Vec<f64>,
    }
    let s: Sample = serde_json::from_slice(&std::fs::read(dir.join("sample.json")).unwrap()).unwrap();
    s.iters
        .iter()
        .zip(&s.times)
        .map(|(&i, &t)| RawSample {
            iterations: i as u64,
            elapsed_ns: t,
        })
        .collect()
}

/// criterion's estimates of a fixture (read by the harness's own reader,
/// which looks for `new/estimates.json` under a directory).
fn criterion_estimates(name: &str) -> WallTime {
    let tmp = std::env::temp_dir().join(format!("dbus-matrix-raw-samples-{}-{name}", std::process::id()));
    let new = tmp.join("group/bench/new");
    std::fs::create_dir_all(&new).unwrap();
    for f in ["estimates.json", "sample.json"] {
        std::fs::copy(fixture(name).join(f), new.join(f)).unwrap();
    }
    let w = read_criterion_output(&tmp).unwrap();
    std::fs::remove_dir_all(&tmp).unwrap();
    w
}

fn assert_within(what: &str, ours: f64, theirs: f64, tolerance: f64) {
    let rel = (ours - theirs).abs() / theirs.abs();
    assert!(
        rel <= tolerance,
        "{what}: ours {ours:.3} vs criterion's {theirs:.3} ({:.2}% apart)",
        rel * 100.0
    );
}

fn assert_estimate_within(what: &str, ours: &Estimate, theirs: &Estimate) {
    assert_within(&format!("{what} point"), ours.point, theirs.point, 0.02);
    assert_within(&format!("{what} lower bound"), ours.lower, theirs.lower, 0.02);
    assert_within(&format!("{what} upper bound"), ours.upper, theirs.upper, 0.02);
}

#[test]
fn figures_from_criterions_raw_samples_agree_with_criterions_estimates_within_2_percent() {
    for name in ["rustbus-0.19-marshal-mixed", "zbus-5-demarshal-str-array"] {
        let theirs = criterion_estimates(name);
        let raw = raw_samples_of(&fixture(name));
        let ours = WallTime::from_raw_samples(&raw, 100_000).unwrap();
        assert_estimate_within(&format!("{name} median"), &ours.median_ns, &theirs.median_ns);
        assert_estimate_within(&format!("{name} mean"), &ours.mean_ns, &theirs.mean_ns);
        assert_within(&format!("{name} std dev"), ours.std_dev_ns, theirs.std_dev_ns, 0.02);
        assert_eq!(ours.samples, theirs.samples, "{name}");
        assert_eq!(ours.iterations, theirs.iterations, "{name}");
        assert_eq!(ours.sample_ns, theirs.sample_ns, "{name}");
    }
}

#[test]
fn the_same_samples_give_the_same_figures_every_time() {
    let raw = raw_samples_of(&fixture("rustbus-0.19-marshal-mixed"));
    assert_eq!(
        WallTime::from_raw_samples(&raw, 10_000).unwrap(),
        WallTime::from_raw_samples(&raw, 10_000).unwrap()
    );
}

#[test]
fn bad_samples_are_refused_with_a_reason() {
    let ok = RawSample {
        iterations: 10,
        elapsed_ns: 100.0,
    };
    assert!(WallTime::from_raw_samples(&[], 1000).is_err());
    let zero = RawSample {
        iterations: 0,
        ..ok.clone()
    };
    assert!(WallTime::from_raw_samples(&[ok.clone(), zero], 1000).is_err());
    let negative = RawSample {
        elapsed_ns: -1.0,
        ..ok.clone()
    };
    assert!(WallTime::from_raw_samples(&[ok.clone(), negative], 1000).is_err());
    let nan = RawSample {
        elapsed_ns: f64::NAN,
        ..ok
    };
    let err = WallTime::from_raw_samples(&[nan], 1000).unwrap_err();
    assert!(err.to_string().contains("sample 0"), "{err}");
}

#[test]
fn a_raw_result_file_becomes_a_measurement_with_its_allocation_reason() {
    let json = r#"{
        "raw_samples": [
            {"iterations": 10, "elapsed_ns": 1000.0},
            {"iterations": 20, "elapsed_ns": 2100.0},
            {"iterations": 30, "elapsed_ns": 2900.0}
        ],
        "throughput_bytes": 0,
        "verification_notes": ["checked"],
        "alloc_unavailable": "CPython: no counting allocator"
    }"#;
    let m = BenchResult::from_json(json.as_bytes(), 1000).unwrap();
    assert_eq!(m.wall.sample_ns, vec![100.0, 105.0, 2900.0 / 30.0]);
    assert_eq!(m.wall.median_ns.point, 100.0);
    assert_eq!(m.wall.iterations, 60);
    assert_eq!(m.alloc, None);
    assert_eq!(m.alloc_unavailable.as_deref(), Some("CPython: no counting allocator"));
    assert_eq!(m.verification_notes, vec!["checked".to_string()]);
    // A raw result must say why it has no allocation counts.
    let silent = json.replace(r#","alloc_unavailable": "CPython: no counting allocator""#, "");
    let silent = silent.replace("\"alloc_unavailable\": \"CPython: no counting allocator\"", "");
    let silent = silent.replace("[\"checked\"],", "[\"checked\"]");
    let err = BenchResult::from_json(silent.as_bytes(), 1000).unwrap_err();
    assert!(format!("{err:#}").contains("alloc_unavailable"), "{err:#}");
    // A Rust adapter's full measurement reads as it always did.
    let full = serde_json::to_vec(&m).unwrap();
    let as_before: harness::results::Measurement = serde_json::from_slice(&full).unwrap();
    assert_eq!(BenchResult::from_json(&full, 1000).unwrap(), as_before);
}
