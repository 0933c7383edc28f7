//! Results files edited by hand or damaged: the loader refuses what cannot
//! be a measurement (exit 2, the cell named), and every reader (report in
//! each format, compare, history, spread, run --resume) answers a corpus of
//! mutations of the committed fixtures with exit 0, 1 or 2, never a panic.
//! Also what a writer leaves when killed, and what a writer refuses up front.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    workspace().join("runner/tests/fixtures").join(name)
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn write(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

/// The first ok cell of `adapter` on `scenario`.
fn cell<'a>(v: &'a mut Value, adapter: &str, scenario: &str) -> &'a mut Value {
    v["cells"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["adapter"] == adapter && c["scenario"] == scenario && c["status"] == "ok")
        .unwrap_or_else(|| panic!("no ok cell {adapter} {scenario}"))
}

#[test]
fn the_loader_refuses_what_cannot_be_a_measurement() {
    let dir = TempDir::new("damaged-loader");
    let original = json(&fixture("run-1.json"));
    let file = dir.path().join("r.json");
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit, &str); 5] = [
        (
            "zero median",
            |v| cell(v, "zbus-5", "marshal/mixed")["measurement"]["wall"]["median_ns"]["point"] = 0.0.into(),
            "cell zbus-5 marshal/mixed",
        ),
        (
            "negative median",
            |v| {
                let m = &mut cell(v, "raw", "baseline/raw-socket/64")["measurement"]["wall"]["median_ns"];
                m["point"] = (-5.0).into();
                m["lower"] = (-6.0).into();
            },
            "cell raw baseline/raw-socket/64",
        ),
        (
            "duplicate cell",
            |v| {
                let c = cell(v, "zbus-5", "marshal/mixed").clone();
                v["cells"].as_array_mut().unwrap().push(c);
            },
            "cell zbus-5 marshal/mixed appears twice",
        ),
        (
            "schema_version 0",
            |v| v["schema_version"] = 0.into(),
            "schema_version 0",
        ),
        (
            "schema_version unknown",
            |v| v["schema_version"] = 99.into(),
            "schema_version 99",
        ),
    ];
    for (what, edit, named) in cases {
        let mut v = original.clone();
        edit(&mut v);
        write(&file, &v);
        for format in ["markdown", "html"] {
            let o = dbus_matrix(&["report", "--format", format, file.to_str().unwrap()])
                .output()
                .unwrap();
            let msg = text(&o);
            assert_eq!(o.status.code(), Some(2), "{what} ({format}):\n{msg}");
            assert!(msg.contains(named), "{what}: names {named:?}:\n{msg}");
        }
    }
}

/// The readers of a results file, each allowed its own exit codes.
fn readers(file: &Path, other: &Path, plan_matrix: &Path) -> Vec<(Command, &'static [i32])> {
    let (f, o) = (file.to_str().unwrap(), other.to_str().unwrap());
    let mut all: Vec<(Command, &'static [i32])> = ["markdown", "csv", "json", "bmf", "html", "critcmp"]
        .into_iter()
        .map(|format| (dbus_matrix(&["report", "--format", format, f]), &[0, 2][..]))
        .collect();
    all.push((dbus_matrix(&["compare", o, f]), &[0, 1, 2]));
    all.push((dbus_matrix(&["compare", f, o]), &[0, 1, 2]));
    all.push((dbus_matrix(&["history", o, f]), &[0, 2]));
    all.push((dbus_matrix(&["spread", "--allow-mixed", o, f]), &[0, 1, 2]));
    // Refused at the latest by the setup check (this matrix is not the run's).
    all.push((
        dbus_matrix(&[
            "--matrix",
            plan_matrix.to_str().unwrap(),
            "run",
            "--quiet",
            "--resume",
            f,
        ]),
        &[2],
    ));
    all
}

fn never_panics(mut c: Command, allowed: &[i32], mutation: &str) -> Result<(), TestCaseError> {
    let o = c.output().unwrap();
    let out = text(&o);
    prop_assert!(
        o.status.code().is_some(),
        "killed by a signal after {}:\n{}",
        mutation,
        out
    );
    let code = o.status.code().unwrap();
    prop_assert!(
        !out.contains("panicked") && allowed.contains(&code),
        "exit {} (allowed {:?}) after {}: {:?}\n{}",
        code,
        allowed,
        mutation,
        c.get_args().collect::<Vec<_>>(),
        out
    );
    Ok(())
}

/// Every leaf of `v` (numbers, strings, booleans, nulls) by JSON pointer.
fn leaves(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| leaves(x, format!("{at}/{k}"), out)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| leaves(x, format!("{at}/{i}"), out)),
        _ => out.push(at),
    }
}

/// What a hand edit puts in place of a leaf.
fn replacement() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::from(0)),
        Just(Value::from(-1)),
        Just(Value::from(-0.5)),
        Just(Value::from(1e308)),
        Just(Value::from(-1e308)),
        Just(Value::from(1e-300)),
        Just(Value::from(u64::MAX)),
        Just(Value::from(i64::MIN)),
        Just(Value::from("")),
        Just(Value::from("unknown")),
        Just(Value::Null),
        Just(Value::from(true)),
        Just(Value::Array(Vec::new())),
        any::<f64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    /// The leaf at this index (modulo their number) gets a new value.
    Replace(usize, Value),
    /// The number at this index (modulo their number) gets a new value.
    ReplaceNumber(usize, Value),
    /// The leaf's key is removed from its object (or the element from its array).
    Remove(usize),
    /// One cell (by index) appears twice.
    DuplicateCell(usize),
    /// The file is cut after this share of its bytes.
    Truncate(f64),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), replacement()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        6 => (any::<usize>(), replacement()).prop_map(|(i, v)| Mutation::ReplaceNumber(i, v)),
        2 => any::<usize>().prop_map(Mutation::Remove),
        1 => any::<usize>().prop_map(Mutation::DuplicateCell),
        1 => (0.0..1.0f64).prop_map(Mutation::Truncate),
    ]
}

/// Applies `m` to `v`; the text to write when it is a truncation.
fn apply(v: &mut Value, m: &Mutation) -> Option<Vec<u8>> {
    let mut all = Vec::new();
    leaves(v, String::new(), &mut all);
    match m {
        Mutation::Replace(i, x) => *v.pointer_mut(&all[i % all.len()]).unwrap() = x.clone(),
        Mutation::ReplaceNumber(i, x) => {
            let numbers: Vec<&String> = all.iter().filter(|p| v.pointer(p).unwrap().is_number()).collect();
            *v.pointer_mut(numbers[i % numbers.len()]).unwrap() = x.clone();
        }
        Mutation::Remove(i) => {
            let at = &all[i % all.len()];
            let (parent, key) = at.rsplit_once('/').unwrap();
            match v.pointer_mut(parent).unwrap() {
                Value::Object(o) => {
                    o.remove(key);
                }
                Value::Array(a) => {
                    a.remove(key.parse::<usize>().unwrap());
                }
                _ => unreachable!(),
            }
        }
        Mutation::DuplicateCell(i) => {
            let cells = v["cells"].as_array_mut().unwrap();
            let c = cells[i % cells.len()].clone();
            cells.push(c);
        }
        Mutation::Truncate(share) => {
            let bytes = serde_json::to_vec_pretty(v).unwrap();
            return Some(bytes[..(bytes.len() as f64 * share) as usize].to_vec());
        }
    }
    None
}

/// Hand edits that once crashed a reader, through every reader.
#[test]
fn every_reader_survives_a_corpus_of_hand_edits() {
    let dir = TempDir::new("damaged-corpus");
    let file = dir.path().join("edited.json");
    let other = fixture("run-2.json");
    let floor = "/cells/32/measurement/wall/median_ns";
    let corpus: &[(&str, &str, Value)] = &[
        ("run-1.json", "/cells/0/measurement/wall/median_ns/point", 0.into()),
        ("run-1.json", &format!("{floor}/point"), 0.into()),
        ("run-1.json", &format!("{floor}/point"), (-1.0).into()),
        (
            "run-1.json",
            "/cells/0/measurement/wall/sample_ns",
            Value::Array(Vec::new()),
        ),
        ("run-1.json", "/cells/0/measurement/wall/samples", 0.into()),
        ("run-1.json", "/cells/0/measurement/wall/iterations", 0.into()),
        ("run-1.json", "/cells/0/measurement/throughput_bytes", u64::MAX.into()),
        ("run-1.json", "/cells/0/elapsed_s", (-1.0).into()),
        ("run-1.json", "/environment/cpus", 0.into()),
        ("run-1.json", "/schema_version", 0.into()),
        ("rounds-1.json", "/plan/cell_timeout_s", (-1.0).into()),
        ("rounds-1.json", "/plan/cell_timeout_s", 0.into()),
        ("rounds-1.json", "/plan/cell_timeout_s", 1e30.into()),
        ("rounds-1.json", "/plan/fingerprint/profile/warm_up_s", (-1.0).into()),
        (
            "rounds-1.json",
            "/cells/0/measurement/wall/round_medians_ns",
            Value::Array(Vec::new()),
        ),
        (
            "rounds-1.json",
            "/cells/0/measurement/wall/median_ns/upper",
            1e308.into(),
        ),
    ];
    let run1 = json(&fixture("run-1.json"));
    assert_eq!(
        run1.pointer("/cells/32/scenario").and_then(Value::as_str),
        Some("baseline/raw-socket/64"),
        "the corpus's floor cell moved"
    );
    for (name, at, value) in corpus {
        let mut v = json(&fixture(name));
        *v.pointer_mut(at).unwrap_or_else(|| panic!("{name} has no {at}")) = value.clone();
        write(&file, &v);
        let what = format!("{name}{at} = {value}");
        for (c, allowed) in readers(&file, &other, &repo_matrix()) {
            never_panics(c, allowed, &what).unwrap();
        }
    }
}

#[test]
fn every_reader_survives_edited_results() {
    let dir = TempDir::new("damaged-fuzz");
    let file = dir.path().join("edited.json");
    let originals = [json(&fixture("run-1.json")), json(&fixture("rounds-1.json"))];
    let other = fixture("run-2.json");
    let config = Config {
        cases: 150,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let inputs = (0..originals.len(), proptest::collection::vec(mutation(), 1..4));
    runner
        .run(&inputs, |(which, mutations)| {
            let mut v = originals[which].clone();
            let mut bytes = None;
            for m in &mutations {
                if bytes.is_none() {
                    bytes = apply(&mut v, m);
                }
            }
            std::fs::write(&file, bytes.unwrap_or_else(|| serde_json::to_vec_pretty(&v).unwrap())).unwrap();
            let what = format!("{mutations:?} of fixture {which}");
            for (c, allowed) in readers(&file, &other, &repo_matrix()) {
                never_panics(c, allowed, &what)?;
            }
            Ok(())
        })
        .unwrap();
}
