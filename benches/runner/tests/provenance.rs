//! A results file says what produced it, wherever the matrix file lies: the
//! revision (never `unknown` when the runner was built from a git checkout)
//! and the matrix file's path and SHA-256.

mod common;
use common::*;
use sha2::{Digest, Sha256};

/// `git rev-parse HEAD` of the checkout the runner was built from, if it is one.
fn checkout_revision() -> Option<String> {
    let o = std::process::Command::new("git")
        .arg("-C")
        .arg(repo_root())
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

#[test]
fn a_matrix_outside_the_checkout_records_the_runners_revision_and_the_matrix_hash() {
    // fault_setup writes its matrix.toml under $TMPDIR: outside any checkout.
    let setup = fault_setup("provenance", &["fault-ok"], &["marshal/mixed"]);
    let o = setup
        .command(&[
            "run",
            "--profile",
            "smoke",
            "--quiet",
            "--out",
            setup.out().to_str().unwrap(),
        ])
        .env_remove("DBUS_MATRIX_REVISION")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let file = results_file(&setup.out());
    validate(&file);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let run = &doc["run"];
    let revision = run["revision"].as_str().unwrap();
    if let Some(head) = checkout_revision() {
        assert!(
            revision.starts_with(&head),
            "revision {revision:?}, but the runner was built from {head}"
        );
    }
    let text = std::fs::read(&setup.matrix).unwrap();
    let sha: String = Sha256::digest(&text).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(run["matrix"]["sha256"], sha.as_str(), "{run}");
    let path = setup.matrix.canonicalize().unwrap();
    assert_eq!(run["matrix"]["path"], path.to_str().unwrap(), "{run}");
}
