//! `dbus-matrix canon`: what it prints is what benches/programs holds (the
//! programs read those files), and a bad format is a usage error.

use crate::common::{dbus_matrix, text, workspace};

fn printed(args: &[&str]) -> String {
    let o = dbus_matrix(args).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn the_command_prints_the_committed_files() {
    let json = std::fs::read_to_string(workspace().join(harness::canon::JSON_PATH)).unwrap();
    assert!(
        printed(&["canon"]) == json,
        "programs/canon.json differs from `dbus-matrix canon` (docs/canon.md)"
    );
    let header = std::fs::read_to_string(workspace().join(harness::canon::C_HEADER_PATH)).unwrap();
    assert!(
        printed(&["canon", "--format", "c-header"]) == header,
        "the C header differs from `dbus-matrix canon --format c-header` (docs/canon.md)"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["service"]["object_path"], "/io/killing/spark");
}

#[test]
fn an_unknown_format_is_refused() {
    let o = dbus_matrix(&["canon", "--format", "yaml"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("yaml"), "{}", text(&o));
}
