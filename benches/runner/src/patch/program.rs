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
        "#!/bin/sh\n# dbus-matrix run --patch: {id} with {name} from {src}\n{var}={src_q}${{{var}:+:${var}}}\nexport {var}\nexec {exec}{prog_q} \"$@\"\n",
        id = a.id,
        name = spec.name,
        src = spec.path.display(),
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
