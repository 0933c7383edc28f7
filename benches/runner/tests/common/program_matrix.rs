//! A test's own matrix.toml of one program adapter row (a Python or Ruby
//! program of `programs/`), the scenarios and buses it names and the `smoke`
//! profile: the fixture of the tests on how the runner treats such a row
//! (`unavailable_in`, `version_line`), written once here.

use std::path::{Path, PathBuf};

/// The program adapter row of the matrix.
pub struct ProgramRow<'a> {
    pub id: &'a str,
    pub package: &'a str,
    /// The program's directory (absent where the test wants the sources missing).
    pub path: &'a str,
    pub program: &'a str,
    pub library: &'a str,
    pub version_line: &'a str,
    /// The row's `unavailable_in` table (`{ nix = "…" }`), or `None` for no such key.
    pub unavailable_in: Option<&'a str>,
}

/// Writes `dir/matrix.toml`: `row`, a `[[scenario]]` per id of `scenarios`, a
/// `[[bus]]` per id of `buses` and a short `smoke` profile; returns its path.
pub fn write_program_matrix(dir: &Path, row: &ProgramRow, scenarios: &[&str], buses: &[&str]) -> PathBuf {
    let quoted = |s: &str| toml::Value::String(s.into()).to_string();
    let mut toml = format!(
        "schema = 1\n[[adapter]]\nid = {}\npackage = {}\npath = {}\nprogram = {}\nlibrary = {}\nversion_line = {}\n",
        quoted(row.id),
        quoted(row.package),
        quoted(row.path),
        quoted(row.program),
        quoted(row.library),
        quoted(row.version_line),
    );
    if let Some(table) = row.unavailable_in {
        toml += &format!("unavailable_in = {table}\n");
    }
    for id in scenarios {
        toml += &format!("[[scenario]]\nid = {}\n", quoted(id));
    }
    for id in buses {
        toml += &format!("[[bus]]\nid = {}\n", quoted(id));
    }
    toml += "[profile.smoke]\nsample_size = 10\nwarm_up = 0.05\nmeasurement = 0.1\nnresamples = 1000\n";
    let path = dir.join("matrix.toml");
    std::fs::write(&path, toml).unwrap();
    path
}
