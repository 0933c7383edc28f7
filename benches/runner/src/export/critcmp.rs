//! critcmp baselines (<https://github.com/BurntSushi/critcmp>): the JSON
//! document `critcmp --export NAME` prints, so that `critcmp old.json new.json`
//! compares two of our runs. Checked against critcmp 0.1.8 (`src/data.rs`:
//! `BaseBenchmarks`, `Benchmark`, `CBenchmark`, `CEstimates`, `CStats`).
//!
//! One benchmark per ok cell; unsupported and failed cells are left out
//! (critcmp has no notion of them). A cell becomes criterion's benchmark id
//! `group_id` = adapter id, `function_id` = scenario (plus `@<bus>` for IPC
//! cells), no `value_str`; so `full_id` (critcmp's benchmark name, which it
//! matches across baselines) is `<adapter>/<scenario>[@<bus>]`, as in the BMF
//! export, and `directory_name` is what criterion would make of it.
//!
//! Estimates, all in ns per operation, at a 95% confidence level:
//! - `mean`, `median`: criterion's point and 95% interval from the results
//!   file; `standard_error` is not kept there, so it is the one implied by the
//!   interval under a normal approximation, (upper - lower) / (2 × 1.96);
//! - `std_dev`: the point from the results file; its interval and standard
//!   error were not kept: a zero-width interval at the point and standard
//!   error 0 stand in;
//! - `median_abs_dev`: required by critcmp but not in the results file:
//!   computed from the per-sample times as criterion does (the median absolute
//!   deviation from the median, times 1.4826); zero-width interval and
//!   standard error 0, as for `std_dev`;
//! - `slope`: optional in critcmp, omitted (not kept).
//!
//! The median's interval is `wall.median_ns`'s, for a cell measured in
//! several rounds the one of the variation between rounds. critcmp has no
//! field for the interval width, the rounds, the profile's target or a cut:
//! the width is implied by the median's `confidence_interval` (as
//! `export::model::width` defines it, `(upper_bound - lower_bound) /
//! point_estimate`), the rest is not exported.
//!
//! critcmp 0.1.8 reads only the mean and std_dev point estimates (it prints
//! mean ± std_dev and ranks by the mean) and the throughput; the stand-ins
//! above are never shown. Throughput is `{"Bytes": n}` when the cell processes
//! `throughput_bytes` > 0 bytes per operation.
//!
//! critcmp keys baselines by name: two exports with the same name replace one
//! another. The default name comes from the run (see [`default_baseline`]).

use std::collections::BTreeMap;

use harness::results::{Cell, Measurement, ResultsFile};
use harness::stats::median_of_sorted;
use serde::Serialize;

/// Criterion's default, and the level of every interval in the results file.
const CONFIDENCE_LEVEL: f64 = 0.95;
/// The two-sided 95% quantile of the normal distribution.
const Z_95: f64 = 1.959_963_984_540_054;
/// Scales the median absolute deviation to estimate the standard deviation
/// of normal data (criterion's `Sample::median_abs_dev` does the same).
const MAD_SCALE: f64 = 1.4826;
/// Criterion truncates each part of a directory name to this many bytes.
const MAX_DIRECTORY_NAME_LEN: usize = 64;

#[derive(Serialize)]
struct BaseBenchmarks {
    name: String,
    benchmarks: BTreeMap<String, Benchmark>,
}

#[derive(Serialize)]
struct Benchmark {
    baseline: String,
    fullname: String,
    criterion_benchmark_v1: CBenchmark,
    criterion_estimates_v1: CEstimates,
}

#[derive(Serialize)]
struct CBenchmark {
    group_id: String,
    function_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    throughput: Option<CThroughput>,
    full_id: String,
    directory_name: String,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct CThroughput {
    bytes: u64,
}

#[derive(Serialize)]
struct CEstimates {
    mean: CStats,
    median: CStats,
    median_abs_dev: CStats,
    std_dev: CStats,
}

#[derive(Serialize)]
struct CStats {
    confidence_interval: CConfidenceInterval,
    point_estimate: f64,
    standard_error: f64,
}

#[derive(Serialize)]
struct CConfidenceInterval {
    confidence_level: f64,
    lower_bound: f64,
    upper_bound: f64,
}

impl CStats {
    /// A point with its 95% interval; the standard error the interval implies.
    fn interval(point: f64, lower: f64, upper: f64) -> CStats {
        CStats {
            confidence_interval: CConfidenceInterval {
                confidence_level: CONFIDENCE_LEVEL,
                lower_bound: lower,
                upper_bound: upper,
            },
            point_estimate: point,
            standard_error: ((upper - lower) / (2.0 * Z_95)).max(0.0),
        }
    }

    /// A point whose uncertainty was not kept: zero-width interval, standard error 0.
    fn point_only(point: f64) -> CStats {
        CStats::interval(point, point, point)
    }
}

/// The baseline name when none is given: the run's start time (colons
/// removed) and profile, e.g. `2026-11-23T101500Z-quick`, which is also the
/// stem `run` gives the results file. It names the run, not the file, so a
/// renamed or copied results file exports under the same name.
pub fn default_baseline(r: &ResultsFile) -> String {
    format!("{}-{}", r.run.started_at.replace(':', ""), r.run.profile)
}

/// Criterion's `make_filename_safe` on Linux.
fn filename_safe(s: &str) -> String {
    let mut s = s.replace(['?', '"', '/', '\\', '*', '<', '>', ':', '|', '^'], "_");
    let mut end = s.len().min(MAX_DIRECTORY_NAME_LEN);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s
}

/// Criterion's median absolute deviation (scaled by 1.4826) of the
/// per-sample times; without samples, the standard deviation (which the
/// scaled MAD estimates for normal data).
fn median_abs_dev(m: &Measurement) -> f64 {
    let mut s: Vec<f64> = m.wall.sample_ns.clone();
    if s.is_empty() {
        return m.wall.std_dev_ns;
    }
    s.sort_by(f64::total_cmp);
    let mid = median_of_sorted(&s);
    let mut dev: Vec<f64> = s.iter().map(|x| (x - mid).abs()).collect();
    dev.sort_by(f64::total_cmp);
    median_of_sorted(&dev) * MAD_SCALE
}

fn benchmark(baseline: &str, c: &Cell, m: &Measurement) -> Benchmark {
    let role = match c.role.is_same() {
        true => String::new(),
        false => format!("#{}", c.role),
    };
    let function_id = match &c.bus {
        Some(bus) => format!("{}@{bus}{role}", c.scenario),
        None => format!("{}{role}", c.scenario),
    };
    let full_id = format!("{}/{function_id}", c.adapter);
    let w = &m.wall;
    Benchmark {
        baseline: baseline.to_string(),
        fullname: format!("{baseline}/{full_id}"),
        criterion_benchmark_v1: CBenchmark {
            directory_name: format!("{}/{}", filename_safe(&c.adapter), filename_safe(&function_id)),
            group_id: c.adapter.clone(),
            function_id,
            throughput: (m.throughput_bytes > 0).then_some(CThroughput {
                bytes: m.throughput_bytes,
            }),
            full_id,
        },
        criterion_estimates_v1: CEstimates {
            mean: CStats::interval(w.mean_ns.point, w.mean_ns.lower, w.mean_ns.upper),
            median: CStats::interval(w.median_ns.point, w.median_ns.lower, w.median_ns.upper),
            median_abs_dev: CStats::point_only(median_abs_dev(m)),
            std_dev: CStats::point_only(w.std_dev_ns),
        },
    }
}

/// The ok cells of `r` as the critcmp baseline `baseline`.
pub fn render(r: &ResultsFile, baseline: &str) -> String {
    let benchmarks = r
        .cells
        .iter()
        .filter_map(|c| c.measurement().map(|m| benchmark(baseline, c, m)))
        .map(|b| (b.criterion_benchmark_v1.full_id.clone(), b))
        .collect();
    let doc = BaseBenchmarks {
        name: baseline.to_string(),
        benchmarks,
    };
    serde_json::to_string_pretty(&doc).expect("serializable") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::{json, Value};

    // What critcmp 0.1.8 requires (its `Deserialize` structs, same field
    // names; `Option` fields there are optional and left out here, so
    // `deny_unknown_fields` also catches a misspelt optional field).
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Base {
        name: String,
        benchmarks: BTreeMap<String, Bench>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Bench {
        baseline: String,
        fullname: String,
        criterion_benchmark_v1: Info,
        criterion_estimates_v1: Estimates,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Info {
        group_id: String,
        function_id: Option<String>,
        throughput: Option<Value>,
        full_id: String,
        directory_name: String,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Estimates {
        mean: Stats,
        median: Stats,
        median_abs_dev: Stats,
        std_dev: Stats,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Stats {
        confidence_interval: Interval,
        point_estimate: f64,
        standard_error: f64,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Interval {
        confidence_level: f64,
        lower_bound: f64,
        upper_bound: f64,
    }

    fn ok(adapter: &str, scenario: &str, bus: Option<&str>, bytes: u64, samples: &[f64]) -> Value {
        json!({
            "adapter": adapter, "scenario": scenario, "bus": bus, "status": "ok", "elapsed_s": 0.1,
            "measurement": {
                "wall": {
                    "median_ns": {"point": 100.0, "lower": 90.0, "upper": 119.6},
                    "mean_ns": {"point": 105.0, "lower": 95.0, "upper": 115.0},
                    "std_dev_ns": 7.5, "samples": samples.len(), "iterations": 100, "sample_ns": samples
                },
                "throughput_bytes": bytes, "alloc": null, "verification_notes": []
            }
        })
    }

    fn results() -> ResultsFile {
        serde_json::from_value(json!({
            "format": "dbus-matrix-results", "schema_version": 1,
            "run": {"started_at": "2026-11-23T10:15:00Z", "profile": "quick", "revision": "abc",
                "tool_version": "0.1.0", "command": ["dbus-matrix", "run"], "complete": true},
            "environment": {"rustc": "rustc 1.95", "cpu_model": "Some CPU", "cpus": 2, "memory_bytes": 1u64 << 30,
                "kernel": "6.1", "os": "Debian 12", "hostname_hash": "0", "mode": "host"},
            "adapters": [
                {"id": "zbus-6", "library": "zbus", "version": "6.2.1"},
                {"id": "raw", "library": "raw", "version": "0.0.0", "baseline": true}
            ],
            "cells": [
                ok("raw", "marshal/mixed", None, 312, &[1.0, 2.0, 3.0, 4.0, 10.0]),
                ok("zbus-6", "call/void", Some("dbus-broker"), 0, &[]),
                {"adapter": "zbus-6", "scenario": "marshal/mixed", "status": "failed",
                    "reason": "boom", "elapsed_s": 0.1},
                {"adapter": "raw", "scenario": "call/void", "bus": "p2p", "status": "unsupported",
                    "reason": "no", "elapsed_s": 0.0}
            ]
        }))
        .unwrap()
    }

    fn parse(out: &str) -> Base {
        serde_json::from_str(out).unwrap_or_else(|e| panic!("critcmp could not read it: {e}\n{out}"))
    }

    #[test]
    fn ok_cells_become_benchmarks_named_like_criterion_ids() {
        let base = parse(&render(&results(), "before"));
        assert_eq!(base.name, "before");
        let names: Vec<&str> = base.benchmarks.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            ["raw/marshal/mixed", "zbus-6/call/void@dbus-broker"],
            "non-ok cells are left out"
        );

        let b = &base.benchmarks["zbus-6/call/void@dbus-broker"];
        assert_eq!(b.baseline, "before");
        assert_eq!(b.fullname, "before/zbus-6/call/void@dbus-broker");
        let i = &b.criterion_benchmark_v1;
        assert_eq!(i.group_id, "zbus-6");
        assert_eq!(i.function_id.as_deref(), Some("call/void@dbus-broker"));
        assert_eq!(i.full_id, "zbus-6/call/void@dbus-broker");
        assert_eq!(i.directory_name, "zbus-6/call_void@dbus-broker");
        assert!(i.throughput.is_none(), "no bytes, no throughput");

        let i = &base.benchmarks["raw/marshal/mixed"].criterion_benchmark_v1;
        assert_eq!(i.function_id.as_deref(), Some("marshal/mixed"));
        assert_eq!(i.directory_name, "raw/marshal_mixed");
        assert_eq!(i.throughput, Some(json!({"Bytes": 312})));
    }

    #[test]
    fn estimates_carry_the_intervals_and_honest_stand_ins() {
        let base = parse(&render(&results(), "x"));
        let e = &base.benchmarks["raw/marshal/mixed"].criterion_estimates_v1;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;

        assert_eq!(e.mean.point_estimate, 105.0);
        assert_eq!(e.mean.confidence_interval.lower_bound, 95.0);
        assert_eq!(e.mean.confidence_interval.upper_bound, 115.0);
        assert!(close(e.mean.standard_error, 20.0 / (2.0 * Z_95)));
        assert_eq!(e.median.point_estimate, 100.0);
        assert_eq!(e.median.confidence_interval.lower_bound, 90.0);
        assert_eq!(e.median.confidence_interval.upper_bound, 119.6);
        assert!(close(e.median.standard_error, 29.6 / (2.0 * Z_95)));
        for s in [&e.mean, &e.median, &e.std_dev, &e.median_abs_dev] {
            assert_eq!(s.confidence_interval.confidence_level, 0.95);
        }

        // Only the point was kept: zero-width interval, standard error 0.
        assert_eq!(e.std_dev.point_estimate, 7.5);
        assert_eq!(e.std_dev.confidence_interval.lower_bound, 7.5);
        assert_eq!(e.std_dev.confidence_interval.upper_bound, 7.5);
        assert_eq!(e.std_dev.standard_error, 0.0);

        // Samples 1 2 3 4 10: median 3, deviations 2 1 0 1 7, their median 1.
        assert!(close(e.median_abs_dev.point_estimate, 1.4826));
        assert_eq!(e.median_abs_dev.standard_error, 0.0);
        // Without samples: the standard deviation.
        let e = &base.benchmarks["zbus-6/call/void@dbus-broker"].criterion_estimates_v1;
        assert_eq!(e.median_abs_dev.point_estimate, 7.5);

        // slope is optional in critcmp and not written.
        let v: Value = serde_json::from_str(&render(&results(), "x")).unwrap();
        assert!(v["benchmarks"]["raw/marshal/mixed"]["criterion_estimates_v1"]
            .get("slope")
            .is_none());
    }

    #[test]
    fn default_baseline_names_the_run() {
        assert_eq!(default_baseline(&results()), "2026-11-23T101500Z-quick");
    }

    #[test]
    fn directory_names_are_made_safe_like_criterion() {
        assert_eq!(filename_safe("a/b:c?d"), "a_b_c_d");
        assert_eq!(filename_safe(&"é".repeat(40)).len(), 64);
    }

    #[test]
    fn mad_of_even_samples_interpolates() {
        // Samples 1 2 3 5: median 2.5, deviations 1.5 0.5 0.5 2.5, their median 1.
        let r = results();
        let mut m = r.cells[0].measurement().cloned().unwrap();
        m.wall.sample_ns = vec![5.0, 1.0, 3.0, 2.0];
        assert!((median_abs_dev(&m) - 1.4826).abs() < 1e-12);
    }
}
