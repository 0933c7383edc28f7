//! Adapters that are programs, not Cargo packages (matrix.toml `program`):
//! the runner runs them from their source directory, reads their raw
//! samples into figures, and checks their marshal bytes and demarshal
//! digests with the reference decoder itself before their first round.

use std::path::{Path, PathBuf};

use harness::results::{CellStatus, ResultsFile};

use crate::common::*;

const JEEPNEY: &str = "jeepney-0.8";

fn jeepney_dir() -> PathBuf {
    workspace().join("programs/jeepney-0.8")
}

/// A matrix of one program adapter (`program` in `dir`) on `scenarios` and `buses`.
fn program_matrix(tmp: &TempDir, dir: &str, program: &str, scenarios: &[&str], buses: &[&str]) -> PathBuf {
    let mut toml = format!(
        "schema = 1\n[[adapter]]\nid = \"{JEEPNEY}\"\npackage = \"adapter-jeepney-0-8\"\npath = \"{dir}\"\n\
         program = \"{program}\"\nlibrary = \"jeepney\"\n"
    );
    for s in scenarios {
        toml += &format!("[[scenario]]\nid = \"{s}\"\n");
    }
    for b in buses {
        toml += &format!("[[bus]]\nid = \"{b}\"\n");
    }
    toml +=
        "[profile.smoke]\nsample_size = 10\nwarm_up = 0.05\nmeasurement = 0.1\nnresamples = 1000\ntimer = \"direct\"\n";
    let path = tmp.path().join("matrix.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

/// `run --profile smoke`; `cells_fail`: the run must end with failed cells (exit 1).
fn run(matrix: &Path, out: &Path, cells_fail: bool) -> ResultsFile {
    let o = smoke_run_of(matrix, out).output().unwrap();
    let want = if cells_fail { 1 } else { 0 };
    assert_eq!(o.status.code(), Some(want), "run:\n{}", text(&o));
    validate(&results_file(out))
}

#[test]
fn a_program_adapter_runs_from_its_path_with_figures_from_its_raw_samples() {
    let tmp = TempDir::new("program-jeepney");
    let scenarios = [
        "marshal/mixed",
        "demarshal/asv-dict",
        "call/relation-set",
        "property/get-x100",
        "property/cold-start",
    ];
    let matrix = program_matrix(
        &tmp,
        jeepney_dir().to_str().unwrap(),
        "adapter.py",
        &scenarios,
        &["dbus-daemon", "p2p"],
    );
    let r = run(&matrix, &tmp.path().join("out"), false);
    let a = r
        .adapters
        .iter()
        .find(|a| a.id == JEEPNEY)
        .expect("the adapter is recorded");
    // Debian's python3-jeepney, at whatever version this machine has: asked
    // of the same interpreter the adapter runs on, never written down here.
    let here = std::process::Command::new(interpreter_of("jeepney-0.8/adapter.py"))
        .args(["-c", "import jeepney; print(jeepney.__version__)"])
        .output()
        .unwrap();
    assert!(here.status.success(), "{}", text(&here));
    assert_eq!(a.version, String::from_utf8(here.stdout).unwrap().trim());
    // The row's version is host mode's (Debian 12's); in mode nix the row
    // runs nixpkgs' jeepney, 0.9 (docs/nix.md, "Versions"), and the build
    // of checks.cargo-nextest failed here on it (2026-12-08).
    if build_mode().is_none() {
        assert!(a.version.starts_with("0.8."), "jeepney-0.8 runs jeepney {}", a.version);
    }
    assert!(
        a.runtime
            .as_deref()
            .is_some_and(|r| r.starts_with("blocking: ") && r.contains("CPython")),
        "{:?}",
        a.runtime
    );
    for s in ["marshal/mixed", "demarshal/asv-dict"] {
        let c = cell_on(&r, JEEPNEY, s, None);
        let m = c.measurement().unwrap_or_else(|| panic!("{s}: {:?}", c.reason()));
        // The profile's 10 samples, or (an operation slower than the 0.1 s
        // measurement time, on a loaded machine) single operations that say so.
        let slow = m.verification_notes.iter().any(|n| n.starts_with("slow operation"));
        assert!(
            m.wall.samples == 10 || (slow && m.wall.samples >= 2),
            "{s}: {} samples, notes {:?}",
            m.wall.samples,
            m.verification_notes
        );
        assert!(m.alloc.is_none() && m.alloc_unavailable.as_deref().is_some_and(|w| w.contains("CPython")));
    }
    let canonical = harness::wire::canonical_signal(&harness::payload::mixed()).len() as u64;
    assert_eq!(
        cell_on(&r, JEEPNEY, "marshal/mixed", None)
            .measurement()
            .unwrap()
            .throughput_bytes,
        canonical
    );
    for s in ["call/relation-set", "property/get-x100", "property/cold-start"] {
        let c = cell_on(&r, JEEPNEY, s, Some("dbus-daemon"));
        assert_eq!(c.status(), CellStatus::Ok, "{s}: {:?}", c.reason());
        let p2p = cell_on(&r, JEEPNEY, s, Some("p2p"));
        assert_eq!(p2p.status(), CellStatus::Unsupported, "{s}");
        assert!(
            p2p.reason().unwrap().contains("always says Hello"),
            "{:?}",
            p2p.reason()
        );
    }
}

/// A program whose `emit` flips a body byte and whose `demarshal` prints a
/// made-up digest: the runner's own check must fail both cells.
#[test]
fn the_runner_checks_a_programs_bytes_and_digests_with_the_reference_decoder() {
    let tmp = TempDir::new("program-lying");
    let real = jeepney_dir().join("adapter.py");
    let script = format!(
        "#!/bin/sh\nreal={}\ncase \"$1\" in\n  emit) {python} \"$real\" \"$@\" | {python} -c \
         'import sys; b = bytearray(sys.stdin.buffer.read()); b[b.rindex(b\"Testtest\")] ^= 1; sys.stdout.buffer.write(b)' ;;\n  \
         demarshal) {python} \"$real\" \"$@\" > /dev/null; echo 0123456789abcdef ;;\n  *) exec {python} \"$real\" \"$@\" ;;\nesac\n",
        real.display(),
        python = interpreter_of("jeepney-0.8/adapter.py").display(),
    );
    let liar = tmp.path().join("lying.sh");
    std::fs::write(&liar, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&liar, std::fs::Permissions::from_mode(0o755)).unwrap();
    let matrix = program_matrix(&tmp, ".", "lying.sh", &["marshal/mixed", "demarshal/mixed"], &[]);
    let r = run(&matrix, &tmp.path().join("out"), true);
    let marshal = cell_on(&r, JEEPNEY, "marshal/mixed", None);
    assert_eq!(marshal.status(), CellStatus::Failed);
    let why = marshal.reason().unwrap();
    assert!(
        why.contains("the runner's verification failed") && why.contains("body bytes differ"),
        "{why}"
    );
    let demarshal = cell_on(&r, JEEPNEY, "demarshal/mixed", None);
    assert_eq!(demarshal.status(), CellStatus::Failed);
    assert!(
        demarshal.reason().unwrap().contains("digest"),
        "{:?}",
        demarshal.reason()
    );
}

#[test]
fn a_program_that_is_no_file_name_or_not_executable_is_refused() {
    let tmp = TempDir::new("program-bad");
    std::fs::write(tmp.path().join("plain.py"), "print()\n").unwrap();
    for (program, needle) in [
        ("../adapter.py", "must be a file name"),
        ("plain.py", "not an executable file"),
    ] {
        let matrix = program_matrix(&tmp, ".", program, &["marshal/mixed"], &[]);
        let o = dbus_matrix(&["--matrix", matrix.to_str().unwrap(), "list"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{program}: {}", text(&o));
        assert!(text(&o).contains(needle), "{program}: {}", text(&o));
    }
}

/// No program adapter names its interpreter by one machine's path (NixOS and
/// the Nix dev shell have no /usr/bin/python3): a shebang is
/// `#!/usr/bin/env NAME`, the interpreter the runner supplies
/// (harness::interpreter), or `#!/bin/sh`, which every system has. In the
/// flake's check the sources' shebangs are patched to store paths first.
#[test]
fn program_adapters_name_their_interpreter_by_name() {
    if std::env::var("DBUS_MATRIX_BUILD_MODE").as_deref() == Ok("nix") {
        eprintln!("skipped: the flake's check patches the programs' shebangs to its own interpreters");
        return;
    }
    let mut files = vec![];
    let mut dirs = vec![workspace().join("programs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if std::fs::read(&path).unwrap().starts_with(b"#!") {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 5, "found only {files:?}");
    let bad: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let line = text.lines().next().unwrap().to_string();
            (line != "#!/bin/sh" && !line.starts_with("#!/usr/bin/env ")).then(|| format!("{}: {line}", f.display()))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "shebangs with an interpreter's absolute path:\n{}",
        bad.join("\n")
    );
}
