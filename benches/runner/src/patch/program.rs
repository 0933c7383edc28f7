//! A program adapter (Python, Ruby) run against a local source of its
//! library: a wrapper script that puts the source first on the
//! interpreter's library path (`PYTHONPATH`, `RUBYLIB`, as `ruby -I` does)
//! and runs the program. The program reports the version it then loads.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use harness::results::PatchRecord;

use super::{crate_record, Patched, Spec};
use crate::matrix::AdapterEntry;

/// The wrapper of `a` with `spec` first on its library path, written into `dir`.
pub fn wrap(a: &AdapterEntry, spec: &Spec, dir: &Path) -> Result<Patched> {
    let program = a.program_path.as_ref().expect("a program adapter");
    let program = std::path::absolute(program).unwrap_or_else(|_| program.clone());
    let here = program.parent().unwrap_or(Path::new("/"));
    let var = if here.join("adapter.py").is_file() {
        "PYTHONPATH"
    } else if here.join("adapter.rb").is_file() {
        "RUBYLIB"
    } else {
        bail!(
            "--patch {}: adapter {} is neither a Python nor a Ruby program; its library cannot be \
             swapped for a source directory",
            spec.name,
            a.id
        );
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let bin = dir.join(format!("{}{}", a.id, super::SUFFIX));
    // The interpreter the runner supplies (harness::interpreter), as the
    // unpatched program gets it: the variable the runner sets.
    let exec = match harness::interpreter::named_by(&program) {
        Some(name) => format!("\"${{{}:-{name}}}\" ", harness::interpreter::variable(&name)),
        None => String::new(),
    };
    let script = format!(
        // Paths and names only as quoted words: a newline in a comment would start a command.
        "#!/bin/sh\n# dbus-matrix run --patch: a program adapter with its library from the directory below\n{var}={src_q}${{{var}:+:${var}}}\nexport {var}\nexec {exec}{prog_q} \"$@\"\n",
        src_q = quote(&spec.path.display().to_string()),
        prog_q = quote(&program.display().to_string()),
    );
    std::fs::write(&bin, script).with_context(|| format!("cannot write {}", bin.display()))?;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755))?;
    Ok(Patched {
        of: a.id.clone(),
        bin,
        record: PatchRecord {
            of: a.id.clone(),
            crates: vec![crate_record(spec, None)],
        },
    })
}

/// A single-quoted shell word.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 42 (1): a newline in the source directory's path, written into
    /// the wrapper's comment line, ran the next line as a command.
    #[test]
    fn a_source_path_with_a_newline_runs_nothing_and_reaches_the_program_whole() {
        let dir = std::env::temp_dir().join(format!("dbus-matrix-wrap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let program_dir = dir.join("program");
        std::fs::create_dir_all(&program_dir).unwrap();
        let program = program_dir.join("adapter.py");
        // Stands in for the interpreter and the program: prints what it got.
        std::fs::write(&program, "#!/bin/sh\nprintf '%s' \"$PYTHONPATH\"\n").unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let marker = dir.join("ran");
        let src = dir.join(format!("src\ntouch {}\n#", marker.display()));
        std::fs::create_dir_all(&src).unwrap();
        let mut a: AdapterEntry =
            toml::from_str("id = \"jeepney-0.8\"\npackage = \"adapter-jeepney-0.8\"\npath = \"p\"\nlibrary = \"jeepney\"\nprogram = \"adapter.py\"\n")
                .unwrap();
        a.program_path = Some(program);
        let spec = Spec {
            name: "jeepney".into(),
            path: src.clone(),
        };
        let wrapped = wrap(&a, &spec, &dir.join("bin")).unwrap();
        let o = std::process::Command::new(&wrapped.bin)
            .env_remove("PYTHONPATH")
            .env("DBUS_MATRIX_PYTHON3", "/bin/sh")
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        assert!(!marker.exists(), "the wrapper ran a line of the path as a command");
        assert_eq!(o.stdout, src.as_os_str().as_encoded_bytes());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
