//! `run --patch`: a row of an adapter built against a local source of its
//! library, beside the released row. The source is rustbus 0.19.3 from
//! cargo's registry cache with a deliberate change (marshalling panics), in
//! a git checkout with that change uncommitted: the patched row's cell fails
//! with it, the released row's does not, and the results file says what the
//! patched row was built from. The patched build goes to the workspace's
//! target/patch/ (warm after the first run: only rustbus and the adapter
//! compile again); no tracked file and no released binary changes.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use harness::results::CellStatus;

const MARK: &str = "this rustbus is patched by the test";

/// rustbus 0.19.3's source as cargo unpacked it (the rustbus adapter's build fetched it).
pub(crate) fn registry_rustbus() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let src = home.join("registry/src");
    std::fs::read_dir(&src)
        .unwrap_or_else(|e| panic!("no cargo registry cache at {}: {e}", src.display()))
        .flatten()
        .map(|d| d.path().join("rustbus-0.19.3"))
        .find(|p| p.join("Cargo.toml").is_file())
        .unwrap_or_else(|| panic!("rustbus-0.19.3 is not unpacked under {}", src.display()))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// The patched source: a git checkout of rustbus 0.19.3 whose `marshal`
/// panics, the change not committed. At a fixed place under the target
/// directory, so that the patched build stays warm between test runs.
fn patched_source() -> (PathBuf, String) {
    let dir = workspace().join("target/patch-test/rustbus");
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&registry_rustbus(), &dir);
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "rustbus 0.19.3"]);
    let head = git(&dir, &["rev-parse", "HEAD"]);
    let file = dir.join("src/wire/marshal.rs");
    let code = std::fs::read_to_string(&file).unwrap();
    let at = "    marshal_header(msg, chosen_serial, buf)?;\n";
    assert_eq!(code.matches(at).count(), 1, "rustbus's marshal changed shape");
    std::fs::write(
        &file,
        code.replacen(
            at,
            &format!("    panic!(\"{MARK}\");\n    #[allow(unreachable_code)]\n{at}"),
            1,
        ),
    )
    .unwrap();
    (dir, head)
}

fn sha(path: &Path) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(std::fs::read(path).unwrap()).to_vec()
}

#[test]
fn a_patched_row_runs_beside_the_released_one_and_says_what_it_was_built_from() {
    let (src, head) = patched_source();
    let lock = workspace().join("Cargo.lock");
    let released = bin_dir().join("adapter-rustbus-0-19");
    let (lock_before, bin_before) = (sha(&lock), sha(&released));

    let out = TempDir::new("patch-rows");
    let o = smoke_run_of_repo(
        out.path(),
        &["--adapters", "rustbus-0.19", "--scenarios", "marshal/mixed"],
    )
    .arg("--patch")
    .arg(format!("rustbus={}", src.display()))
    .output()
    .unwrap();
    // The patched cell fails, so the run exits 1, not 2.
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let r = validate(&results_file(out.path()));
    assert_eq!(status_of(&r, "rustbus-0.19", "marshal/mixed"), CellStatus::Ok);
    let patched_cell = r
        .cells
        .iter()
        .find(|c| c.adapter == "rustbus-0.19+patch" && c.scenario == "marshal/mixed")
        .expect("a patched cell");
    assert_eq!(patched_cell.status(), CellStatus::Failed);
    assert!(
        patched_cell.reason().unwrap().contains(MARK),
        "{:?}",
        patched_cell.reason()
    );

    let rec = |id: &str| r.adapters.iter().find(|a| a.id == id).unwrap();
    assert!(rec("rustbus-0.19").patch.is_none());
    let p = rec("rustbus-0.19+patch")
        .patch
        .clone()
        .expect("the patched row is recorded as patched");
    assert_eq!(p.of, "rustbus-0.19");
    assert_eq!(p.crates.len(), 1);
    let c = &p.crates[0];
    assert_eq!((c.name.as_str(), c.version.as_deref()), ("rustbus", Some("0.19.3")));
    assert_eq!(Path::new(&c.path), src.canonicalize().unwrap());
    assert_eq!(c.git_revision.as_deref(), Some(head.as_str()));
    assert_eq!(c.git_dirty, Some(true));
    assert_eq!(rec("rustbus-0.19+patch").version, "0.19.3");

    assert_eq!(sha(&lock), lock_before, "the tracked Cargo.lock is untouched");
    assert_eq!(sha(&released), bin_before, "the released binary is untouched");
}

#[test]
fn bad_patches_are_refused_with_exit_2() {
    let out = TempDir::new("patch-bad");
    let rustbus = registry_rustbus();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "--adapters".into(),
                "rustbus-0.19".into(),
                "--patch".into(),
                "rustbus".into(),
            ],
            "expected CRATE=PATH",
        ),
        (
            vec![
                "--adapters".into(),
                "rustbus-0.19".into(),
                "--patch".into(),
                "rustbus=/no/such/dir".into(),
            ],
            "no such directory",
        ),
        (
            vec![
                "--adapters".into(),
                "rustbus-0.19".into(),
                "--patch".into(),
                format!("zbus={}", rustbus.display()),
            ],
            "is the crate \"rustbus\", not \"zbus\"",
        ),
        (
            vec![
                "--adapters".into(),
                "raw".into(),
                "--patch".into(),
                format!("rustbus={}", rustbus.display()),
            ],
            "no selected adapter (raw) depends on rustbus",
        ),
        (
            vec![
                "--adapters".into(),
                "libdbus-c-1.14".into(),
                "--patch".into(),
                format!("libdbus={}", out.path().display()),
            ],
            "neither a Python nor a Ruby program",
        ),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = smoke_run_of_repo(out.path(), &args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains(expected),
            "{args:?}: expected {expected:?} in:\n{}",
            text(&o)
        );
    }
}

/// A Python program's row against a copy of its library whose version says
/// it is the copy: the wrapper's `PYTHONPATH` puts the copy first.
#[test]
fn a_python_program_runs_against_a_source_directory() {
    // The adapter's interpreter (the one the runner supplies), which may not be the python3 on PATH.
    let python = interpreter_of("jeepney-0.8/adapter.py").display().to_string();
    let o = Command::new(&python)
        .args(["-c", "import jeepney, os; print(os.path.dirname(jeepney.__file__))"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{python} with jeepney: {}", text(&o));
    let installed = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    let dir = TempDir::new("patch-python");
    let src = dir.path().join("src");
    copy_dir(&installed, &src.join("jeepney"));
    let init = src.join("jeepney/__init__.py");
    let code = std::fs::read_to_string(&init).unwrap();
    let version_line = code
        .lines()
        .find(|l| l.starts_with("__version__ ="))
        .expect("jeepney has __version__")
        .to_string();
    std::fs::write(&init, code.replacen(&version_line, "__version__ = '0.8.999'", 1)).unwrap();

    let out = dir.path().join("out");
    let o = smoke_run_of_repo(&out, &["--adapters", "jeepney-0.8", "--scenarios", "marshal/mixed"])
        .arg("--patch")
        .arg(format!("jeepney={}", src.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let r = validate(&results_file(&out));
    assert_eq!(status_of(&r, "jeepney-0.8+patch", "marshal/mixed"), CellStatus::Ok);
    let rec = |id: &str| r.adapters.iter().find(|a| a.id == id).unwrap().clone();
    assert_eq!(rec("jeepney-0.8+patch").version, "0.8.999");
    assert_ne!(rec("jeepney-0.8").version, "0.8.999");
    let p = rec("jeepney-0.8+patch").patch.expect("recorded as patched");
    assert_eq!(p.of, "jeepney-0.8");
    assert_eq!(p.crates[0].name, "jeepney");
    assert_eq!(p.crates[0].version, None, "a program's library version is the row's");
    assert_eq!(Path::new(&p.crates[0].path), src.canonicalize().unwrap());
}
