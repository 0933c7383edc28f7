//! An adapter that one build mode cannot have (matrix.toml
//! `unavailable_in = { nix = "reason" }`: ruby-dbus, which nixpkgs does not
//! package): where the adapters come prebuilt ($DBUS_MATRIX_PREBUILT, the Nix
//! flake's wrapped runner) it is not built, and the runner shows its row with
//! the reason and makes its cells `unsupported` with it, never failed. These
//! tests need only the runner: the bin dir is empty, as for an adapter the
//! flake does not build.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use harness::results::CellStatus;

use crate::common::*;

const ID: &str = "ruby-dbus-0.16";
const REASON: &str = "ruby-dbus is not in nixpkgs (no gem of that name in its Ruby package set)";

/// A matrix of one program adapter whose sources are absent (as in the Nix
/// store), with `unavailable` as its `unavailable_in` table.
fn matrix(tmp: &TempDir, unavailable: &str) -> PathBuf {
    let toml = format!(
        "schema = 1\n[[adapter]]\nid = \"{ID}\"\npackage = \"adapter-ruby-dbus-0-16\"\n\
         path = \"benches/programs/ruby-dbus-0.16\"\nprogram = \"adapter.rb\"\nlibrary = \"ruby-dbus\"\n\
         unavailable_in = {unavailable}\n\
         [[scenario]]\nid = \"marshal/mixed\"\n[[scenario]]\nid = \"call/void\"\n[[bus]]\nid = \"p2p\"\n\
         [profile.smoke]\nsample_size = 10\nwarm_up = 0.05\nmeasurement = 0.1\nnresamples = 1000\n"
    );
    let path = tmp.path().join("matrix.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

/// The runner with an empty bin dir, prebuilt or not.
fn runner(tmp: &TempDir, matrix: &Path, prebuilt: bool, args: &[&str]) -> Output {
    let bin_dir = tmp.path().join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let mut c = Command::new(runner_bin());
    c.arg("--bin-dir").arg(&bin_dir).arg("--matrix").arg(matrix).args(args);
    c.env_remove("DBUS_MATRIX_MATRIX");
    if prebuilt {
        c.env("DBUS_MATRIX_PREBUILT", "1");
    } else {
        c.env_remove("DBUS_MATRIX_PREBUILT");
    }
    c.output().unwrap()
}

#[test]
fn list_shows_a_row_unavailable_in_nix_with_its_reason() {
    let tmp = TempDir::new("unavailable-list");
    let m = matrix(&tmp, &format!("{{ nix = \"{REASON}\" }}"));
    let o = runner(&tmp, &m, true, &["list"]);
    assert_eq!(o.status.code(), Some(0), "list:\n{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with(ID))
        .unwrap_or_else(|| panic!("no row {ID}:\n{stdout}"));
    assert!(row.contains("unavailable in nix") && row.contains(REASON), "{row}");
}

#[test]
fn run_makes_every_cell_of_a_row_unavailable_in_nix_unsupported_with_its_reason() {
    let tmp = TempDir::new("unavailable-run");
    let m = matrix(&tmp, &format!("{{ nix = \"{REASON}\" }}"));
    let out = tmp.path().join("out");
    let o = runner(
        &tmp,
        &m,
        true,
        &["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "run:\n{}", text(&o));
    let r = validate(&results_file(&out));
    // marshal/mixed, and call/void on p2p.
    assert_eq!(
        r.cells.len(),
        2,
        "{:?}",
        r.cells.iter().map(|c| c.key()).collect::<Vec<_>>()
    );
    for c in &r.cells {
        assert_eq!(c.status(), CellStatus::Unsupported, "{:?}", c.key());
        let reason = c.reason().unwrap_or("");
        assert!(
            reason.contains("unavailable in nix") && reason.contains(REASON),
            "{reason}"
        );
    }
    let a = r.adapters.iter().find(|a| a.id == ID).expect("the adapter is recorded");
    assert_eq!(a.library, "ruby-dbus");
}

#[test]
fn outside_nix_the_row_is_not_hidden() {
    // Host mode runs the program from its path: here absent, which is the
    // usual bad-input error (exit 2), not the Nix reason.
    let tmp = TempDir::new("unavailable-host");
    let m = matrix(&tmp, &format!("{{ nix = \"{REASON}\" }}"));
    let o = runner(&tmp, &m, false, &["list"]);
    assert_eq!(o.status.code(), Some(2), "list:\n{}", text(&o));
    assert!(!text(&o).contains(REASON), "{}", text(&o));
}

#[test]
fn an_unknown_mode_or_an_empty_reason_is_bad_input() {
    for (table, needle) in [
        (format!("{{ nixos = \"{REASON}\" }}"), "nixos"),
        ("{ nix = \"\" }".to_string(), "reason"),
    ] {
        let tmp = TempDir::new("unavailable-bad");
        let m = matrix(&tmp, &table);
        let o = runner(&tmp, &m, true, &["list"]);
        assert_eq!(o.status.code(), Some(2), "{table}:\n{}", text(&o));
        assert!(
            text(&o).contains("unavailable_in") && text(&o).contains(needle),
            "{table}:\n{}",
            text(&o)
        );
    }
}
