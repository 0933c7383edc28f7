//! The interpreter of a program adapter (matrix.toml `program`: Python,
//! Ruby). Its shebang names the interpreter only by name
//! (`#!/usr/bin/env python3`): no absolute path of one machine. Which
//! interpreter runs it is the machine's setting, supplied by the runner (and
//! the tests, through this same rule):
//!
//! 1. `DBUS_MATRIX_<NAME>` (`DBUS_MATRIX_PYTHON3`, `DBUS_MATRIX_RUBY`): the
//!    Nix dev shell and checks set them to nixpkgs' interpreters with the
//!    adapters' libraries;
//! 2. else the distribution's `/usr/bin/<name>`, where there is one (host
//!    mode, Debian: scripts/install-deps-debian.sh installs the libraries for
//!    that interpreter; another `python3` may come first on PATH, pyenv's say,
//!    without them);
//! 3. else `<name>` from PATH.
//!
//! Launchers (`#!/bin/sh` scripts such as dbus-fast's `adapter.sh`) are run
//! as they are, with the resolved interpreters in their environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The interpreters program adapters name (`#!/usr/bin/env NAME`).
pub const NAMES: [&str; 2] = ["python3", "ruby"];

/// The variable that overrides interpreter `name`: `DBUS_MATRIX_PYTHON3`.
pub fn variable(name: &str) -> String {
    let upper: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("DBUS_MATRIX_{upper}")
}

/// The interpreter `name` resolves to here (see the module's rule).
pub fn resolve(name: &str) -> PathBuf {
    resolve_with(name, std::env::var_os(variable(name)), Path::new("/usr/bin"))
}

fn resolve_with(name: &str, set: Option<OsString>, system_dir: &Path) -> PathBuf {
    if let Some(path) = set.filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let system = system_dir.join(name);
    if system.is_file() {
        return system;
    }
    PathBuf::from(name)
}

/// The name a program's shebang gives its interpreter, when it is
/// `#!/usr/bin/env NAME` (None for anything else: run the file itself).
pub fn named_by(program: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(program).ok()?.read(&mut head).ok()?;
    let first = head[..n].split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(first).ok()?.strip_prefix("#!")?;
    let mut words = line.split_whitespace();
    (words.next()? == "/usr/bin/env").then_some(())?;
    words.next().map(str::to_string)
}

/// The interpreter `program` runs with, if its shebang names one by name.
pub fn of_program(program: &Path) -> Option<PathBuf> {
    named_by(program).map(|name| resolve(&name))
}

/// `(variable, interpreter)` for every interpreter program adapters name:
/// the environment a launcher gets.
pub fn environment() -> Vec<(String, PathBuf)> {
    NAMES.iter().map(|n| (variable(n), resolve(n))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_wins_then_the_system_interpreter_then_path() {
        let dir = std::env::temp_dir().join(format!("dbus-matrix-interpreter-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(resolve_with("python3", None, &dir), PathBuf::from("python3"));
        std::fs::write(dir.join("python3"), "").unwrap();
        assert_eq!(resolve_with("python3", None, &dir), dir.join("python3"));
        assert_eq!(
            resolve_with("python3", Some("/nix/py".into()), &dir),
            PathBuf::from("/nix/py")
        );
        assert_eq!(resolve_with("python3", Some("".into()), &dir), dir.join("python3"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn variables_are_upper_case_names() {
        assert_eq!(variable("python3"), "DBUS_MATRIX_PYTHON3");
        assert_eq!(variable("ruby"), "DBUS_MATRIX_RUBY");
    }

    #[test]
    fn only_env_shebangs_name_an_interpreter() {
        let dir = std::env::temp_dir().join(format!("dbus-matrix-shebang-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            ("#!/usr/bin/env python3\nprint()\n", Some("python3")),
            ("#!/usr/bin/env  ruby -w\n", Some("ruby")),
            ("#!/usr/bin/python3\n", None),
            ("#!/bin/sh\n", None),
            ("\x7fELF", None),
        ];
        for (i, (text, want)) in cases.iter().enumerate() {
            let f = dir.join(i.to_string());
            std::fs::write(&f, text).unwrap();
            assert_eq!(named_by(&f).as_deref(), *want, "{text:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
