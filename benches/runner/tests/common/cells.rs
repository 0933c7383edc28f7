//! Finding one cell of a results file (and its status, reason or
//! verification notes), and the smoke runs most tests start with (of the
//! repository's matrix, of a matrix the test wrote, of a fault setup): the
//! helpers the tests of the IPC, subscription, application and program
//! families had each copied for themselves. One copy here, so that a change
//! to how a cell is found or a run is judged is made once.

use std::path::Path;
use std::process::Command;

use harness::results::{Cell, CellStatus, ResultsFile};

use super::{dbus_matrix, results_file, smoke_run_of_repo, text, validate, FaultSetup};

/// The cell of `adapter` on `scenario` on the bus `bus` (`p2p` included);
/// panics naming the cell when the run has none.
pub fn cell<'r>(r: &'r ResultsFile, adapter: &str, scenario: &str, bus: &str) -> &'r Cell {
    r.cells
        .iter()
        .find(|c| c.adapter == adapter && c.scenario == scenario && c.bus.as_deref() == Some(bus))
        .unwrap_or_else(|| panic!("no cell {adapter} {scenario} {bus}"))
}

/// [`cell`] where the cell may have no bus: `None` finds a marshal, demarshal
/// or baseline cell, `Some(bus)` an IPC cell on that bus.
pub fn cell_on<'r>(r: &'r ResultsFile, adapter: &str, scenario: &str, bus: Option<&str>) -> &'r Cell {
    r.cells
        .iter()
        .find(|c| c.adapter == adapter && c.scenario == scenario && c.bus.as_deref() == bus)
        .unwrap_or_else(|| panic!("no cell {adapter} {scenario} {bus:?}"))
}

/// The status of the [`cell`] on `bus` (`status_of` finds a cell by adapter
/// and scenario alone, whatever its bus).
pub fn status_on(r: &ResultsFile, adapter: &str, scenario: &str, bus: &str) -> CellStatus {
    cell(r, adapter, scenario, bus).status()
}

/// Why the [`cell`] on `bus` is unsupported or failed; empty for an ok cell
/// (the callers then fail on the words they look for).
pub fn reason_of(r: &ResultsFile, adapter: &str, scenario: &str, bus: &str) -> String {
    cell(r, adapter, scenario, bus).reason().unwrap_or_default().to_string()
}

/// The verification notes of the ok [`cell`] on `bus`, one a line; panics
/// with the outcome of a cell that measured nothing.
pub fn notes_of(r: &ResultsFile, adapter: &str, scenario: &str, bus: &str) -> String {
    let c = cell(r, adapter, scenario, bus);
    let m = c
        .measurement()
        .unwrap_or_else(|| panic!("{adapter} {scenario}: {:?}", c.outcome));
    m.verification_notes.join("\n")
}

/// `dbus-matrix --matrix MATRIX run --profile smoke --quiet --out OUT`: a
/// smoke run of a matrix file the test wrote (`smoke_run_of_repo` runs the
/// repository's).
pub fn smoke_run_of(matrix: &Path, out: &Path) -> Command {
    dbus_matrix(&[
        "--matrix",
        matrix.to_str().unwrap(),
        "run",
        "--profile",
        "smoke",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ])
}

/// A smoke run of the repository's matrix.toml and adapters (`args`: the
/// selection) that must succeed; its results file in `out`, validated.
pub fn repo_smoke_results(out: &Path, args: &[&str]) -> ResultsFile {
    let o = smoke_run_of_repo(out, args).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    validate(&results_file(out))
}

impl FaultSetup {
    /// `run --profile smoke --quiet --out OUT` of the setup, into
    /// [`FaultSetup::out`]; the caller adds what else it needs (environment,
    /// pipes) and judges the outcome.
    pub fn smoke_command(&self) -> Command {
        self.command(&[
            "run",
            "--profile",
            "smoke",
            "--quiet",
            "--out",
            self.out().to_str().unwrap(),
        ])
    }

    /// A smoke run of the setup into [`FaultSetup::out`] that must end with
    /// failed cells (exit 1, neither 0 nor a refusal); its results file,
    /// validated.
    pub fn smoke_run_with_failed_cells(&self) -> ResultsFile {
        let o = self.smoke_command().output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(1),
            "a failed cell must give exit 1:\n{}",
            text(&o)
        );
        validate(&results_file(&self.out()))
    }
}

/// No cell failed, and each of `buses` has a cell that ran.
pub fn assert_none_failed(out: &Path, o: &std::process::Output, buses: &[&str], what: &str) {
    let log = text(o);
    assert!(o.status.success(), "{what}: the run failed:\n{log}");
    let r = validate(&results_file(out));
    for c in &r.cells {
        assert_ne!(
            c.status(),
            CellStatus::Failed,
            "{what}: {} {} {:?}: {:?}",
            c.adapter,
            c.scenario,
            c.bus,
            c.reason()
        );
    }
    for b in buses {
        assert!(
            r.cells
                .iter()
                .any(|c| c.bus.as_deref() == Some(*b) && c.status() == CellStatus::Ok),
            "{what}: no cell ran on {b}"
        );
    }
}
