//! Property test: whatever numbers and strings reach the CLI or matrix.toml
//! (NaN, infinities, huge, negative, arbitrary text), the runner answers with
//! exit 0, 1 or 2: never a panic (101), never killed by a signal. Each case
//! runs a command that stops before any cell is measured, so the whole file
//! stays well under a minute on two cores.

use std::process::Command;

use crate::common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// A few hundred processes in all, deterministic from run to run.
fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha,
        ..Config::default()
    }
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new_with_rng(
        config(cases),
        proptest::test_runner::TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha),
    )
}

/// Any f64, with the troublesome ones made likely.
fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(1e300),
        Just(-1.0),
        Just(0.0),
        Just(f64::MIN_POSITIVE),
        0.0..10.0f64,
    ]
}

/// A command-line argument: anything but NUL, which no argv can hold.
fn text_arg() -> impl Strategy<Value = String> {
    any::<String>().prop_map(|s| s.replace('\0', ""))
}

/// An integer as matrix.toml would carry it, including far out of range.
fn integer() -> impl Strategy<Value = i64> {
    prop_oneof![any::<i64>(), -5i64..2_000_000, Just(0), Just(i64::MAX)]
}

/// TOML's spelling of a float (a TOML float needs a dot or an exponent).
fn toml_float(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{v:?}")
    }
}

/// Runs `c`; the test fails on a panic, a signal or any other status.
fn exits_cleanly(mut c: Command, allowed: &[i32]) -> Result<(), TestCaseError> {
    let o = c.output().unwrap();
    let out = text(&o);
    prop_assert!(
        o.status.code().is_some(),
        "killed by a signal ({:?}):\n{}",
        o.status,
        out
    );
    let code = o.status.code().unwrap();
    prop_assert!(!out.contains("panicked"), "panic (exit {}):\n{}", code, out);
    prop_assert!(
        allowed.contains(&code),
        "exit {} (allowed {:?}):\n{}",
        code,
        allowed,
        out
    );
    Ok(())
}

/// A run that stops after every option and the matrix were checked: its
/// output directory cannot be created (a path below a regular file).
fn stopping_run(setup: &FaultSetup, args: &[&str]) -> Command {
    let blocker = setup.dir.path().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let out = blocker.join("out");
    let mut c = setup.command(&["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()]);
    c.args(args);
    c
}

#[test]
fn cli_numbers_and_strings_never_panic() {
    let setup = fault_setup("fuzz-cli", &["fault-ok"], &["marshal/mixed"]);
    let fixture = workspace().join("runner/tests/fixtures/run-1.json");
    let f = fixture.to_str().unwrap().to_string();
    let inputs = (number(), number(), number(), text_arg(), text_arg(), integer());
    runner(128)
        .run(&inputs, |(timeout, threshold, alpha, pin, names, jobs)| {
            exits_cleanly(
                stopping_run(&setup, &[&format!("--cell-timeout={timeout}"), &format!("--pin={pin}")]),
                &[2],
            )?;
            exits_cleanly(stopping_run(&setup, &[&format!("--adapters={names}")]), &[2])?;
            let (t, a) = (format!("--threshold={threshold}"), format!("--alpha={alpha}"));
            exits_cleanly(dbus_matrix(&["compare", &t, &a, &f, &f]), &[0, 1, 2])?;
            exits_cleanly(dbus_matrix(&["history", &t, &a, &f]), &[0, 2])?;
            // --into a missing file: refused before anything is built.
            let missing = setup.dir.path().join("missing.json");
            exits_cleanly(
                dbus_matrix(&[
                    "build-times",
                    &format!("--jobs={jobs}"),
                    "--into",
                    missing.to_str().unwrap(),
                ]),
                &[2],
            )
        })
        .unwrap();
}

#[test]
fn matrix_numbers_never_panic() {
    let setup = fault_setup("fuzz-matrix", &["fault-ok"], &["marshal/mixed"]);
    let original = std::fs::read_to_string(&setup.matrix).unwrap();
    let inputs = (integer(), number(), number(), integer());
    runner(128)
        .run(&inputs, |(sample_size, warm_up, measurement, nresamples)| {
            let text = original
                .replace("sample_size = 10", &format!("sample_size = {sample_size}"))
                .replace("warm_up = 0.05", &format!("warm_up = {}", toml_float(warm_up)))
                .replace(
                    "measurement = 0.1",
                    &format!("measurement = {}", toml_float(measurement)),
                )
                .replace("nresamples = 1000", &format!("nresamples = {nresamples}"));
            std::fs::write(&setup.matrix, text).unwrap();
            exits_cleanly(setup.command(&["list"]), &[0, 2])?;
            // The run goes as far as its timeout (derived from the profile) before stopping.
            exits_cleanly(stopping_run(&setup, &[]), &[2])
        })
        .unwrap();
}
