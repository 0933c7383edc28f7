//! Bad input gets a clear error and exit status 2, never a panic.

use crate::common::*;

fn fails_with(mut c: std::process::Command, needles: &[&str]) {
    let o = c.output().unwrap();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "expected exit 2:\n{out}");
    assert!(!out.contains("panicked"), "panic instead of an error:\n{out}");
    for n in needles {
        assert!(out.contains(n), "expected {n:?} in:\n{out}");
    }
}

#[test]
fn malformed_matrix_names_line_and_column() {
    let dir = TempDir::new("bad-matrix");
    let text = std::fs::read_to_string(repo_matrix())
        .unwrap()
        .replacen("package = ", "pakage = ", 1);
    let line = text.lines().position(|l| l.starts_with("pakage")).unwrap() + 1;
    let m = dir.path().join("matrix.toml");
    std::fs::write(&m, text).unwrap();
    fails_with(
        dbus_matrix(&["--matrix", m.to_str().unwrap(), "list"]),
        &[&format!("matrix.toml:{line}:1"), "pakage"],
    );
    std::fs::write(&m, "schema = 1\n[[adapter]\n").unwrap();
    fails_with(
        dbus_matrix(&["--matrix", m.to_str().unwrap(), "list"]),
        &["matrix.toml:2:"],
    );
    fails_with(
        dbus_matrix(&["--matrix", "/nonexistent/matrix.toml", "list"]),
        &["cannot read the matrix file"],
    );
}

#[test]
fn unknown_names_are_refused() {
    let m = repo_matrix();
    let m = m.to_str().unwrap();
    fails_with(
        dbus_matrix(&["--matrix", m, "run", "--adapters", "zbus-99"]),
        &["unknown adapter \"zbus-99\"", "zbus-6"],
    );
    fails_with(
        dbus_matrix(&["--matrix", m, "run", "--scenarios", "marshal/nope"]),
        &["unknown scenario"],
    );
    fails_with(
        dbus_matrix(&["--matrix", m, "run", "--profile", "turbo"]),
        &["unknown profile \"turbo\""],
    );
    fails_with(
        dbus_matrix(&["--matrix", m, "run", "--buses", "kdbus"]),
        &["unknown bus \"kdbus\"", "dbus-broker"],
    );
}

#[test]
fn bad_results_files_are_refused() {
    let dir = TempDir::new("bad-results");
    let p = |n: &str| dir.path().join(n);
    std::fs::write(
        p("truncated.json"),
        "{\"format\": \"dbus-matrix-results\", \"schema_ver",
    )
    .unwrap();
    std::fs::write(p("foreign.json"), "{\"hello\": 1}").unwrap();
    std::fs::write(
        p("newer.json"),
        "{\"format\": \"dbus-matrix-results\", \"schema_version\": 99}",
    )
    .unwrap();
    let cases: [(&str, &[&str]); 4] = [
        ("truncated.json", &["not valid JSON", "truncated"]),
        ("foreign.json", &["not a dbus-matrix results file"]),
        ("newer.json", &["schema_version 99", "newer"]),
        ("absent.json", &["cannot read"]),
    ];
    // Every command that reads results files refuses them the same way, naming the file.
    for (name, needles) in cases {
        let path = p(name);
        let path = path.to_str().unwrap();
        let needles = [needles, &[name]].concat();
        fails_with(dbus_matrix(&["report", path]), &needles);
        fails_with(dbus_matrix(&["compare", path, path]), &needles);
    }
}

#[test]
fn unwritable_output_and_missing_binaries_are_refused() {
    let dir = TempDir::new("bad-out");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = file.join("results");
    let m = repo_matrix();
    fails_with(
        dbus_matrix(&[
            "--matrix",
            m.to_str().unwrap(),
            "run",
            "--adapters",
            "raw",
            "--out",
            out.to_str().unwrap(),
        ]),
        &["cannot create the output directory"],
    );
    let mut c = std::process::Command::new(runner_bin());
    c.args([
        "--matrix",
        m.to_str().unwrap(),
        "--bin-dir",
        dir.path().to_str().unwrap(),
        "run",
        "--adapters",
        "raw",
    ]);
    fails_with(
        c,
        // The reference of the default profile's roles is missing too: both named, one command.
        &["raw (adapter-raw)", "bash scripts/build.sh release --adapters raw,"],
    );
}

/// Exit 2 with an error naming the option, never a panic (exit 101) nor a run.
fn refused(tag: &str, args: &[&str], needles: &[&str]) {
    let setup = fault_setup(tag, &["fault-ok"], &["marshal/mixed"]);
    let mut c = setup.command(args);
    c.args(["--out", setup.out().to_str().unwrap()]);
    fails_with(c, needles);
}

#[test]
fn cell_timeouts_that_are_not_a_positive_finite_time_are_refused() {
    for v in ["nan", "NaN", "inf", "-inf", "1e300", "-1", "0", "-0", "1e-12", "ten"] {
        refused(
            "cell-timeout",
            &["run", "--profile", "smoke", "--quiet", &format!("--cell-timeout={v}")],
            &["--cell-timeout"],
        );
    }
}

#[test]
fn thresholds_alphas_and_jobs_out_of_range_are_refused() {
    let fixture = workspace().join("runner/tests/fixtures/run-1.json");
    let f = fixture.to_str().unwrap();
    for cmd in ["compare", "history"] {
        let files: &[&str] = if cmd == "compare" { &[f, f] } else { &[f] };
        for v in ["nan", "inf", "-inf", "-0.5", "1e309"] {
            let arg = format!("--threshold={v}");
            fails_with(
                dbus_matrix(&[&[cmd], files, &[arg.as_str()]].concat()),
                &["--threshold"],
            );
        }
        for v in ["nan", "inf", "0", "1", "-0.1", "1.5"] {
            let arg = format!("--alpha={v}");
            fails_with(dbus_matrix(&[&[cmd], files, &[arg.as_str()]].concat()), &["--alpha"]);
        }
    }
    for v in ["0", "-1", "99999999999", "nan"] {
        fails_with(
            dbus_matrix(&["build-times", &format!("--jobs={v}"), "--quiet"]),
            &["--jobs"],
        );
    }
}

#[test]
fn cpu_placements_that_name_a_role_twice_or_a_missing_cpu_are_refused() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    let missing = format!("client={cpus}");
    let cases: [(&str, &[&str]); 6] = [
        ("client=0,client=1", &["client", "twice"]),
        ("bus=0,server=0,bus=0", &["bus", "twice"]),
        ("gpu=0", &["unknown role"]),
        (&missing, &["is not one this process may run on", "allowed:"]),
        ("client=-1", &["not a CPU number"]),
        ("client=0,", &["ROLE=CPU"]),
    ];
    for (spec, needles) in cases {
        refused(
            "pin",
            &["run", "--profile", "smoke", "--quiet", "--pin", spec],
            &[&["--pin"], needles].concat(),
        );
    }
}

/// A $TMPDIR that cannot hold the runner's scratch directory: refused with
/// the operating system's reason.
#[test]
fn an_unusable_tmpdir_is_refused_with_the_reason() {
    let dir = TempDir::new("bad-tmpdir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let cases = [
        (dir.path().join("missing"), "No such file or directory"),
        (file.clone(), "Not a directory"),
    ];
    for (tmp, reason) in cases {
        let mut c = dbus_matrix(&[
            "--matrix",
            repo_matrix().to_str().unwrap(),
            "verify",
            "--adapters",
            "raw",
            "--scenarios",
            "marshal/mixed",
        ]);
        c.env("TMPDIR", &tmp);
        fails_with(c, &[tmp.to_str().unwrap(), reason]);
    }
}

/// A selection that checks nothing is an error, not an empty success.
#[test]
fn selections_that_check_nothing_are_refused() {
    let m = repo_matrix();
    let m = m.to_str().unwrap();
    // verify checks codec work only.
    fails_with(
        dbus_matrix(&["--matrix", m, "verify", "--adapters", "raw", "--scenarios", "call/void"]),
        &["no marshal or demarshal scenario"],
    );
    // The baseline never takes part in interop.
    fails_with(
        dbus_matrix(&["--matrix", m, "interop", "--quiet", "--adapters", "raw"]),
        &["no pair to check"],
    );
    // A floor scenario is the baseline's only.
    let setup = fault_setup(
        "bad-empty-run",
        &["fault-ok"],
        &["marshal/mixed", "baseline/raw-socket/64"],
    );
    let out = setup.out();
    fails_with(
        setup.command(&[
            "run",
            "--profile",
            "smoke",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
            "--scenarios",
            "baseline/raw-socket/64",
        ]),
        &["no cell to run"],
    );
    assert!(
        !out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(),
        "a results file was written"
    );
}

/// Issue 42 (15): a full file system at `--out` said only "No space left on
/// device (os error 28)". The error names the file it could not write, exit
/// 2, and nothing is left in the directory. The full file system is a 16 KiB
/// tmpfs in a mount namespace of the run's own (root: `.ci/run` runs this
/// test as root, the Nix sandbox leaves it out).
#[test]
fn a_full_out_directory_is_named() {
    let dir = TempDir::new("full-out");
    let full = dir.path().join("full");
    std::fs::create_dir_all(&full).unwrap();
    let out = full.join("out");
    let runner = dbus_matrix(&[]);
    let mut args: Vec<String> = vec![runner.get_program().to_str().unwrap().into()];
    args.extend(runner.get_args().map(|a| a.to_str().unwrap().to_owned()));
    let m = repo_matrix();
    args.extend(
        [
            "--matrix",
            m.to_str().unwrap(),
            "run",
            "--profile",
            "smoke",
            "--quiet",
            "--adapters",
            "raw",
            "--scenarios",
            "marshal/mixed",
            "--out",
            out.to_str().unwrap(),
        ]
        .map(str::to_owned),
    );
    // Mount, fill (dd ends when the disk is full), then the run; $0 and the
    // run's arguments reach the shell as arguments, never as its text.
    let script = r#"mount -t tmpfs -o size=16k dbus-matrix-full "$0" && mkdir "$0/out" &&
        { dd if=/dev/zero of="$0/fill" bs=4k 2>/dev/null; true; } && exec "$@""#;
    let o = std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", script])
        .arg(&full)
        .args(&args)
        .output()
        .unwrap();
    let log = text(&o);
    assert_eq!(o.status.code(), Some(2), "expected exit 2:\n{log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(log.contains("No space left on device"), "{log}");
    assert!(log.contains(out.to_str().unwrap()), "the error names no file:\n{log}");
}
