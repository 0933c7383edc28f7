//! Every figure of docs/results.schema.json carries its `x-portability`
//! label (issue 30), and the labels are exactly the runner's one table,
//! `harness::results::portability::FIGURES`: a figure added to one and not
//! the other, or labelled differently, fails here.

use std::collections::BTreeSet;

use harness::results::portability::FIGURES;
use serde_json::Value;

use crate::common::*;

/// (figure path, label) of every `x-portability` under `props`, paths
/// relative to a measurement (`prefix`).
fn labels(props: &serde_json::Map<String, Value>, prefix: &str, out: &mut BTreeSet<(String, String)>) {
    for (name, p) in props {
        let path = format!("{prefix}{name}");
        match p.get("x-portability") {
            Some(Value::String(word)) => {
                out.insert((path.clone(), word.clone()));
            }
            Some(Value::Object(by)) => {
                for (qualifier, word) in by {
                    out.insert((format!("{path} ({qualifier})"), word.as_str().unwrap().to_string()));
                }
            }
            _ => {}
        }
        if let Some(inner) = p.get("properties").and_then(Value::as_object) {
            labels(inner, &format!("{path}."), out);
        }
    }
}

fn schema_labels(schema: &Value) -> BTreeSet<(String, String)> {
    let defs = &schema["$defs"];
    let mut out = BTreeSet::new();
    labels(defs["measurement"]["properties"].as_object().unwrap(), "", &mut out);
    labels(
        defs["process_cost"]["properties"].as_object().unwrap(),
        "costs.processes.",
        &mut out,
    );
    out
}

#[test]
fn the_schema_labels_every_figure_as_the_runner_does() {
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo_root().join("docs/results.schema.json")).unwrap()).unwrap();
    let table: BTreeSet<(String, String)> = FIGURES
        .iter()
        .map(|(f, p)| (f.to_string(), p.word().to_string()))
        .collect();
    assert_eq!(schema_labels(&schema), table);

    // A label flipped in the schema is caught.
    let mut flipped = schema.clone();
    flipped["$defs"]["measurement"]["properties"]["wall"]["x-portability"] = "portable".into();
    assert_ne!(schema_labels(&flipped), table);
}
