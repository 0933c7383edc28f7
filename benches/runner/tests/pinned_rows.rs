//! The version axis: matrix.toml's `[[pinned]]` row `zbus-6@6.1` (zbus-6's
//! code with the newest zbus 6.1.x) runs beside zbus-6 in a smoke run and is
//! recorded with the release cargo resolved; `bisect` walks the registry
//! releases of a crate between two (zbus 6.2.0 to 6.2.1: rustbus 0.19.1 and
//! 0.19.2 do not build with this toolchain or adapter) and reports each; bad
//! input exits 2.
//! The builds go to the workspace's target/pinned/ (warm after the first:
//! only the library and the adapter compile again); the registry must be
//! reachable. No tracked file and no released binary changes.

use std::path::Path;

use crate::common::*;
use harness::results::CellStatus;

fn sha(path: &Path) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(std::fs::read(path).unwrap()).to_vec()
}

#[test]
fn a_pinned_row_runs_beside_its_adapter_with_the_release_it_names() {
    let lock = workspace().join("Cargo.lock");
    let manifest = workspace().join("adapters/zbus-6/Cargo.toml");
    let released = bin_dir().join("adapter-zbus-6");
    let before = (sha(&lock), sha(&manifest), sha(&released));

    let out = TempDir::new("pinned-rows");
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            "zbus-6,zbus-6@6.1",
            "--scenarios",
            "marshal/mixed,call/echo-bytes/4096",
            "--buses",
            "p2p",
        ],
    );
    for id in ["zbus-6", "zbus-6@6.1"] {
        assert_eq!(status_of(&r, id, "marshal/mixed"), CellStatus::Ok, "{id}");
        let ipc = r
            .cells
            .iter()
            .find(|c| c.adapter == id && c.scenario == "call/echo-bytes/4096" && c.role.is_same())
            .unwrap_or_else(|| panic!("{id}: no IPC cell"));
        assert_eq!(ipc.status(), CellStatus::Ok, "{id}: {:?}", ipc.reason());
    }
    let rec = |id: &str| r.adapters.iter().find(|a| a.id == id).unwrap().clone();
    assert!(rec("zbus-6").pin.is_none());
    assert!(rec("zbus-6").version.starts_with("6.2."), "{}", rec("zbus-6").version);
    let pinned = rec("zbus-6@6.1");
    let pin = pinned.pin.expect("the row records its pin");
    assert_eq!((pin.of.as_str(), pin.crate_name.as_str()), ("zbus-6", "zbus"));
    assert_eq!(pin.requirement, "~6.1");
    assert!(pin.version.starts_with("6.1."), "{pin:?}");
    assert_eq!(
        pinned.version, pin.version,
        "the row runs the release it was built with"
    );
    // The row is in the plan, right after its adapter.
    // (The roles' reference adapter is recorded too.)
    let order: Vec<&str> = r
        .adapters
        .iter()
        .map(|a| a.id.as_str())
        .filter(|id| id.starts_with("zbus"))
        .collect();
    assert_eq!(order, ["zbus-6", "zbus-6@6.1"]);

    assert_eq!(
        (sha(&lock), sha(&manifest), sha(&released)),
        before,
        "the tracked Cargo.lock, the adapter's Cargo.toml and the released binary are untouched"
    );
}

#[test]
fn bisect_reports_every_release_in_between() {
    let out = TempDir::new("bisect");
    let o = dbus_matrix(&[
        "--matrix",
        repo_matrix().to_str().unwrap(),
        "bisect",
        "--adapter",
        "zbus-6",
        "--from",
        "6.2.0",
        "--to",
        "6.2.1",
        "--cell",
        "marshal/mixed",
        "--profile",
        "smoke",
        "--quiet",
        "--out",
        out.path().to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("## zbus-6 with each zbus release: marshal/mixed"),
        "{stdout}"
    );
    for v in ["6.2.0", "6.2.1"] {
        assert!(stdout.contains(&format!("| {v} | ok |")), "{v}:\n{stdout}");
    }
    let r = validate(&results_file(out.path()));
    // The rows (the roles' reference adapter is recorded too, without cells).
    let rows: Vec<_> = r.adapters.iter().filter(|a| a.id.starts_with("zbus-6@")).collect();
    let ids: Vec<&str> = rows.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["zbus-6@6.2.0", "zbus-6@6.2.1"]);
    for a in rows {
        let pin = a.pin.as_ref().expect("a bisect row records its pin");
        assert_eq!(format!("zbus-6@{}", pin.version), a.id);
        assert_eq!(pin.requirement, format!("={}", pin.version));
        assert_eq!(a.version, pin.version);
    }
    assert_eq!(r.cells.len(), 2, "one cell per release");
}

#[test]
fn bad_bisects_and_pins_are_refused_with_exit_2() {
    let m = repo_matrix();
    let m = m.to_str().unwrap();
    let bisect = |extra: &[&str]| {
        let mut args = vec!["--matrix", m, "bisect"];
        args.extend_from_slice(extra);
        dbus_matrix(&args).output().unwrap()
    };
    let base = ["--adapter", "zbus-6", "--from", "6.1.0", "--to", "6.2.1"];
    let with = |cell: &str, swap: Option<(&str, &str)>| {
        let mut a: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        if let Some((k, v)) = swap {
            let i = a.iter().position(|x| x == k).unwrap();
            a[i + 1] = v.to_string();
        }
        a.push("--cell".into());
        a.push(cell.into());
        a
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            with("call/echo-bytes/4096@p2p", Some(("--from", "6.2.1"))),
            "must be an older release",
        ),
        (
            with("call/echo-bytes/4096@p2p", Some(("--to", "6.2"))),
            "is not a release number",
        ),
        (
            with("call/echo-bytes/4096@p2p", Some(("--adapter", "zbus-99"))),
            "unknown adapter",
        ),
        (
            with("call/echo-bytes/4096@p2p", Some(("--adapter", "jeepney-0.8"))),
            "not a member of the benches workspace",
        ),
        (with("call/echo-bytes/4096", None), "needs its bus"),
        (with("marshal/mixed@p2p", None), "runs on no bus"),
        (with("call/nothing@p2p", None), "unknown scenario"),
        (with("call/echo-bytes/4096@nobus", None), "unknown bus"),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = bisect(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains(expected),
            "{args:?}: expected {expected:?} in:\n{}",
            text(&o)
        );
        assert!(!text(&o).contains("panicked"), "{}", text(&o));
    }

    // A bad [[pinned]] entry makes matrix.toml invalid, for every command.
    let dir = TempDir::new("pinned-bad");
    let text_of = std::fs::read_to_string(repo_matrix()).unwrap();
    for (from, to, expected) in [
        ("pin = \"zbus@6.1\"", "pin = \"zbus@6\"", "expected CRATE@X.Y"),
        ("of = \"zbus-6\"\npin", "of = \"zbus-9\"\npin", "`of` names no adapter"),
        (
            "id = \"zbus-6@6.1\"",
            "id = \"zbus-6.1\"",
            "the id must be `zbus-6@<release>`",
        ),
    ] {
        assert!(text_of.contains(from), "{from}");
        let bad = dir.path().join("matrix.toml");
        std::fs::write(&bad, text_of.replacen(from, to, 1)).unwrap();
        let o = dbus_matrix(&["--matrix", bad.to_str().unwrap(), "list"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{to}: {}", text(&o));
        assert!(
            text(&o).contains(expected),
            "{to}: expected {expected:?} in:\n{}",
            text(&o)
        );
    }
}
