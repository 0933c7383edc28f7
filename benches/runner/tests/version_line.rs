//! `version_line` (matrix.toml) is host mode's: a library from Debian's
//! package must stay on the release line the row's id names, or the runner
//! refuses the adapter. In build mode nix ($DBUS_MATRIX_BUILD_MODE=nix: the
//! flake's nextest check and dev shell, which run the programs from their
//! sources with nixpkgs' interpreters; or prebuilt) the library is nixpkgs'
//! at the flake's pin, another release than the row id's (jeepney 0.9 for
//! jeepney-0.8), and is recorded as it is, never refused.

use std::process::Output;

use crate::common::*;

/// `list` of a matrix of the jeepney program whose `version_line` is `line`,
/// with $DBUS_MATRIX_BUILD_MODE set to `mode` (or unset).
fn list(tag: &str, line: &str, mode: Option<&str>) -> Output {
    let tmp = TempDir::new(tag);
    let path = workspace().join("programs/jeepney-0.8").display().to_string();
    let row = ProgramRow {
        id: "jeepney-0.8",
        package: "adapter-jeepney-0-8",
        path: &path,
        program: "adapter.py",
        library: "jeepney",
        version_line: line,
        unavailable_in: None,
    };
    let matrix = write_program_matrix(tmp.path(), &row, &["marshal/mixed"], &[]);
    let mut c = dbus_matrix(&["--matrix", matrix.to_str().unwrap(), "list"]);
    c.env_remove("DBUS_MATRIX_PREBUILT");
    match mode {
        Some(m) => c.env("DBUS_MATRIX_BUILD_MODE", m),
        None => c.env_remove("DBUS_MATRIX_BUILD_MODE"),
    };
    c.output().unwrap()
}

#[test]
fn a_library_off_its_line_is_refused_in_host_mode_and_recorded_as_it_is_in_build_mode_nix() {
    // The version the machine's jeepney reports (Debian's, or nixpkgs' in the check).
    let o = list("version-line-own", "0", Some("nix"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let version = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some("jeepney-0.8"))
        .and_then(|l| l.split_whitespace().nth(2))
        .unwrap_or_else(|| panic!("no version of jeepney-0.8 in\n{stdout}"))
        .to_string();
    // A line it is not on: "0.8" -> "1.8", "0.9.1" -> "1.9".
    let (major, rest) = version.split_once('.').unwrap();
    let minor = rest.split('.').next().unwrap();
    let other = format!("{}.{minor}", major.parse::<u32>().unwrap() + 1);

    for mode in [None, Some("host")] {
        let o = list("version-line-host", &other, mode);
        assert_eq!(o.status.code(), Some(2), "{mode:?}:\n{}", text(&o));
        assert!(
            text(&o).contains(&format!("runs jeepney {version}, outside its line {other}")),
            "{mode:?}:\n{}",
            text(&o)
        );
    }
    let o = list("version-line-nix", &other, Some("nix"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("jeepney {version}")),
        "{}",
        text(&o)
    );
}
