//! An adapter that one build mode cannot have (matrix.toml
//! `unavailable_in = { nix = "reason" }`: ruby-dbus, which nixpkgs does not
//! package): where the adapters come prebuilt ($DBUS_MATRIX_PREBUILT, the Nix
//! flake's wrapped runner) it is not built, and the runner shows its row with
//! the reason and makes its cells `unsupported` with it, never failed. These
//! tests need only the runner: the bin dir is empty, as for an adapter the
//! flake does not build. The flake's nextest check runs the adapters from
//! their sources, not prebuilt, and says the mode itself
//! ($DBUS_MATRIX_BUILD_MODE=nix): the row is unavailable there too.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use harness::results::CellStatus;

use crate::common::*;

const ID: &str = "ruby-dbus-0.16";
const REASON: &str = "ruby-dbus is not in nixpkgs (no gem of that name in its Ruby package set)";

/// A matrix of one program adapter whose sources are absent (as in the Nix
/// store), with `unavailable` as its `unavailable_in` table.
fn matrix(tmp: &TempDir, unavailable: &str) -> PathBuf {
    matrix_at(tmp, "benches/programs/ruby-dbus-0.16", unavailable)
}

/// The same with the adapter's sources at `path`.
fn matrix_at(tmp: &TempDir, path: &str, unavailable: &str) -> PathBuf {
    let row = ProgramRow {
        id: ID,
        package: "adapter-ruby-dbus-0-16",
        path,
        program: "adapter.rb",
        library: "ruby-dbus",
        version_line: "0.16",
        unavailable_in: Some(unavailable),
    };
    write_program_matrix(tmp.path(), &row, &["marshal/mixed", "call/void"], &["p2p"])
}

/// The runner with an empty bin dir, prebuilt or not, with no
/// $DBUS_MATRIX_BUILD_MODE (the nextest check sets one).
fn runner(tmp: &TempDir, matrix: &Path, prebuilt: bool, args: &[&str]) -> Output {
    runner_in_mode(tmp, matrix, prebuilt, None, args)
}

/// The same with $DBUS_MATRIX_BUILD_MODE set to `mode`.
fn runner_in_mode(tmp: &TempDir, matrix: &Path, prebuilt: bool, mode: Option<&str>, args: &[&str]) -> Output {
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
    match mode {
        Some(m) => c.env("DBUS_MATRIX_BUILD_MODE", m),
        None => c.env_remove("DBUS_MATRIX_BUILD_MODE"),
    };
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

/// The nextest check's case: the sources are there (not prebuilt) and
/// $DBUS_MATRIX_BUILD_MODE=nix says the mode: the row is unavailable, its
/// program never run, every cell unsupported with the reason.
#[test]
fn build_mode_nix_without_prebuilt_adapters_makes_the_row_unavailable() {
    let tmp = TempDir::new("unavailable-mode");
    let sources = workspace().join("programs/ruby-dbus-0.16");
    let m = matrix_at(&tmp, sources.to_str().unwrap(), &format!("{{ nix = \"{REASON}\" }}"));
    let o = runner_in_mode(&tmp, &m, false, Some("nix"), &["list"]);
    assert_eq!(o.status.code(), Some(0), "list:\n{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("not available: unavailable in nix: {REASON}")),
        "{}",
        text(&o)
    );
    let out = tmp.path().join("out");
    let o = runner_in_mode(
        &tmp,
        &m,
        false,
        Some("nix"),
        &["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "run:\n{}", text(&o));
    let r = validate(&results_file(&out));
    assert_eq!(
        r.cells.len(),
        2,
        "{:?}",
        r.cells.iter().map(|c| c.key()).collect::<Vec<_>>()
    );
    assert_unavailable_cells(&r, ID, &format!("unavailable in nix: {REASON}"));
    // `host` is host mode even where prebuilt: the row is not hidden (its
    // program is run, and here there is none in the empty bin dir).
    let o = runner_in_mode(&tmp, &m, true, Some("host"), &["list"]);
    assert!(!text(&o).contains(REASON), "{}", text(&o));
}

#[test]
fn an_unknown_build_mode_is_bad_input() {
    let tmp = TempDir::new("unavailable-bad-mode");
    let m = matrix(&tmp, &format!("{{ nix = \"{REASON}\" }}"));
    for mode in ["nixos", "Nix", "0"] {
        let o = runner_in_mode(&tmp, &m, true, Some(mode), &["list"]);
        assert_eq!(o.status.code(), Some(2), "{mode}:\n{}", text(&o));
        assert!(
            text(&o).contains("DBUS_MATRIX_BUILD_MODE") && text(&o).contains(&format!("{mode:?}")),
            "{mode}:\n{}",
            text(&o)
        );
        assert!(!text(&o).contains("panicked"), "{}", text(&o));
    }
}
