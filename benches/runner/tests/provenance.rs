//! A results file says what produced it, wherever the matrix file lies: the
//! revision (never `unknown` when the runner was built from a git checkout)
//! and the matrix file's path and SHA-256.

use crate::common::*;
use sha2::{Digest, Sha256};

/// Whether the runner was built in a git checkout (not the Nix build).
fn in_checkout() -> bool {
    git(&["rev-parse", "HEAD"])
}

fn git(args: &[&str]) -> bool {
    std::process::Command::new("git")
        .arg("-C")
        .arg(repo_root())
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_matrix_outside_the_checkout_records_the_runners_revision_and_the_matrix_hash() {
    // fault_setup writes its matrix.toml under $TMPDIR: outside any checkout.
    let setup = fault_setup("provenance", &["fault-ok"], &["marshal/mixed"]);
    let o = setup
        .smoke_command()
        .env_remove("DBUS_MATRIX_REVISION")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let file = results_file(&setup.out());
    validate(&file);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let run = &doc["run"];
    let revision = run["revision"].as_str().unwrap();
    // The revision the runner was built from (HEAD may have moved on since the build).
    assert_eq!(run["runner_revision"], revision, "{run}");
    if in_checkout() {
        assert!(
            revision.len() == 40 && git(&["cat-file", "-e", &format!("{revision}^{{commit}}")]),
            "revision {revision:?} is not a commit of this checkout"
        );
    }
    let text = std::fs::read(&setup.matrix).unwrap();
    let sha: String = Sha256::digest(&text).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(run["matrix"]["sha256"], sha.as_str(), "{run}");
    let path = setup.matrix.canonicalize().unwrap();
    assert_eq!(run["matrix"]["path"], path.to_str().unwrap(), "{run}");
}
