//! Rows of the repository's matrix.toml that the runner's build mode cannot
//! have (`unavailable_in`: ruby-dbus in Nix, whose Ruby has no ruby-dbus gem).
//! The runner shows such a row with the reason and makes every one of its
//! cells `unsupported` with it, never failed, and the adapter itself cannot
//! run there. Tests that run such a row ask [`unavailable_here`] and expect
//! exactly that instead of ok cells. The mode is read as the runner reads it
//! (`$DBUS_MATRIX_BUILD_MODE`, else `nix` where `$DBUS_MATRIX_PREBUILT`): the
//! flake's nextest check (and nix/tests/sandbox-nextest.sh) sets it to `nix`;
//! `.ci/run` sets neither, and there every row runs and must pass.

use harness::results::{CellStatus, ResultsFile};

use super::{dbus_matrix, repo_matrix, text};

/// The build mode whose `unavailable_in` entries apply, `None` in host mode
/// (the runner's `matrix::build_mode`; an unknown value fails the test, as
/// the runner refuses it).
pub fn build_mode() -> Option<String> {
    match std::env::var("DBUS_MATRIX_BUILD_MODE").unwrap_or_default().as_str() {
        "" => std::env::var("DBUS_MATRIX_PREBUILT")
            .is_ok_and(|v| !v.is_empty() && v != "0")
            .then(|| "nix".to_string()),
        "host" => None,
        "nix" => Some("nix".to_string()),
        other => panic!("DBUS_MATRIX_BUILD_MODE={other:?} is no build mode the runner knows"),
    }
}

/// matrix.toml's `unavailable_in` table of adapter `id` (empty when it has none).
fn unavailable_in(id: &str) -> toml::value::Table {
    let m: toml::Value = toml::from_str(&std::fs::read_to_string(repo_matrix()).unwrap()).unwrap();
    let a = m["adapter"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"].as_str() == Some(id))
        .unwrap_or_else(|| panic!("no adapter {id} in matrix.toml"));
    a.get("unavailable_in")
        .map(|t| t.as_table().unwrap().clone())
        .unwrap_or_default()
}

/// Why the runner cannot run the repository's adapter `id` in this build
/// mode, worded as its cells' reason (`unavailable in nix: <matrix.toml's
/// reason>`), or `None`: the row runs, and its cells must pass.
pub fn unavailable_here(id: &str) -> Option<String> {
    let mode = build_mode()?;
    let reason = unavailable_in(id).get(&mode)?.as_str().unwrap().to_string();
    Some(format!("unavailable in {mode}: {reason}"))
}

/// The `unavailable_in = { … }` line of adapter `id` in matrix.toml, for a
/// test's own matrix of that row (empty when it has none), so the runner
/// treats the row there as in the repository's matrix.
pub fn unavailable_in_toml(id: &str) -> String {
    let t = unavailable_in(id);
    if t.is_empty() {
        return String::new();
    }
    let entries: Vec<String> = t
        .iter()
        .map(|(mode, reason)| format!("{mode} = {}", toml::Value::String(reason.as_str().unwrap().into())))
        .collect();
    format!("unavailable_in = {{ {} }}\n", entries.join(", "))
}

/// Every cell of `adapter` in `r` is `unsupported` with exactly `reason`,
/// and it has at least one.
pub fn assert_unavailable_cells(r: &ResultsFile, adapter: &str, reason: &str) {
    let cells: Vec<_> = r.cells.iter().filter(|c| c.adapter == adapter).collect();
    assert!(!cells.is_empty(), "no cell of {adapter}");
    for c in cells {
        assert_eq!(c.status(), CellStatus::Unsupported, "{:?}: {:?}", c.key(), c.outcome);
        assert_eq!(c.reason(), Some(reason), "{:?}", c.key());
    }
}

/// The runner's `list` of the repository's matrix shows `adapter` as not
/// available, with exactly `reason`.
pub fn assert_listed_unavailable(adapter: &str, reason: &str) {
    let o = dbus_matrix(&["--matrix", repo_matrix().to_str().unwrap(), "list"])
        .output()
        .unwrap();
    assert!(o.status.success(), "list: {}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let row = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(adapter))
        .unwrap_or_else(|| panic!("list has no row {adapter}:\n{stdout}"));
    assert!(row.ends_with(&format!("not available: {reason}")), "{row}");
}
