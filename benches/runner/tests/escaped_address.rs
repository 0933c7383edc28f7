//! Issue 42 (3): every adapter in a $TMPDIR whose socket paths need the
//! D-Bus address escapes (`%20`, `%C3%A9`, ...). The runner escapes them as
//! the specification says; each library must decode them, or the adapter
//! connect to the socket itself (zbus does not decode them).

use crate::common::*;
use harness::results::CellStatus;

/// Every adapter of the repository, both roles its own, on dbus-daemon and
/// peer to peer, in a $TMPDIR with a space, quotes, `&<>`, `$` and a
/// non-ASCII letter: each must decode the escaped address or connect to the
/// socket itself (zbus 1 to 6 handed the escaped address to zbus, which does
/// not decode it, and failed every cell: issue 42, 3). Every adapter with an
/// IPC side must run a cell on each transport, none may fail.
#[test]
fn every_adapter_connects_in_a_tmpdir_that_needs_escaping() {
    let tmp_dir = TempDir(std::env::temp_dir().join(format!("dmé s&<>'\"${}", std::process::id())));
    let tmp = tmp_dir.path();
    std::fs::create_dir_all(tmp).unwrap();
    let scratch = TempDir::new("escaping-every-adapter");
    let out = scratch.path().join("out");
    let o = smoke_run_of_repo(
        &out,
        &[
            "--scenarios",
            "call/void",
            "--roles",
            "same",
            "--buses",
            "dbus-daemon,p2p",
        ],
    )
    .env("TMPDIR", tmp)
    .output()
    .unwrap();
    assert_none_failed(&out, &o, &["dbus-daemon", "p2p"], "every adapter");
    let r = validate(&results_file(&out));
    let mut adapters: Vec<&str> = r.cells.iter().map(|c| c.adapter.as_str()).collect();
    adapters.sort_unstable();
    adapters.dedup();
    let zbus = adapters.iter().filter(|a| a.starts_with("zbus-")).count();
    assert!(zbus >= 7, "zbus 1 to 6 and 6-tokio are in the run: {adapters:?}");
    for bus in ["dbus-daemon", "p2p"] {
        let ran: Vec<&str> = r
            .cells
            .iter()
            .filter(|c| c.bus.as_deref() == Some(bus) && c.status() == CellStatus::Ok)
            .map(|c| c.adapter.as_str())
            .collect();
        // zbus 1 and 2 have no usable peer-to-peer server (their cells say
        // why); every other zbus must have run.
        let no_p2p = ["zbus-1", "zbus-2"];
        for a in adapters
            .iter()
            .filter(|a| a.starts_with("zbus-") && !(bus == "p2p" && no_p2p.contains(a)))
        {
            assert!(ran.contains(a), "{a} did not run call/void on {bus}: ran {ran:?}");
        }
        // (Peer to peer fewer libraries can serve: their cells say why.)
        let floor = if bus == "p2p" { 8 } else { 18 };
        assert!(ran.len() >= floor, "{bus}: only {} adapters ran: {ran:?}", ran.len());
    }
}
