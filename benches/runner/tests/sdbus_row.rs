//! The sd-bus row (adapter systemd-0.11): its codec cells are unsupported
//! with sd-bus's own limits named, every IPC scenario is supported (peer to
//! peer too, except where a bus is needed), and its peer-to-peer server
//! answers real calls.

use std::process::Command;

use crate::common::*;
use harness::ipc::IpcOp;
use harness::results::CellStatus;

const ADAPTER: &str = "systemd-0.11";

fn listing() -> serde_json::Value {
    let bin = bin_dir().join("adapter-systemd-0-11");
    let o = Command::new(&bin)
        .arg("list")
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
    assert!(o.status.success(), "list: {}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn sd_bus_names_its_codec_limits_and_supports_every_ipc_scenario() {
    let l = listing();
    assert_eq!(l["id"], ADAPTER);
    assert_eq!(l["library"], "systemd");
    assert!(l["version"].as_str().unwrap().starts_with("0.11."), "{}", l["version"]);
    assert!(
        l["runtime"].as_str().unwrap().contains("single-threaded"),
        "{}",
        l["runtime"]
    );
    for s in l["scenarios"].as_array().unwrap() {
        let id = s["id"].as_str().unwrap();
        let reason = s["reason"].as_str().unwrap_or("");
        if id.starts_with("marshal/") {
            assert_eq!(s["supported"], false, "{id}");
            assert!(
                reason.contains("bus_message_get_blob") && reason.contains("not exported"),
                "{id}: {reason}"
            );
        } else if id.starts_with("demarshal/") {
            assert_eq!(s["supported"], false, "{id}");
            assert!(
                reason.contains("bus_message_from_malloc") && reason.contains("not exported"),
                "{id}: {reason}"
            );
        } else if id.starts_with("baseline/") {
            // The floor belongs to the baseline adapter only.
            assert_eq!(s["supported"], false, "{id}");
        } else if id.starts_with("proxy/startup/") {
            // The library's own reason: nothing in sd-bus parses introspection at run time.
            assert_eq!(s["supported"], false, "{id}");
            assert!(reason.contains("no public introspection parser"), "{id}: {reason}");
        } else if harness::scenario::find(id).unwrap().ipc_op().unwrap().opt_in() && s["supported"] == false {
            // Opt-in ops (calls in flight, idle connections) this adapter has no code for yet: said so.
            let op = harness::scenario::find(id).unwrap().ipc_op().unwrap();
            assert_eq!(reason, harness::ipc::not_implemented(op), "{id}");
        } else {
            assert_eq!(s["supported"], true, "{id}: {reason}");
            let op = harness::scenario::find(id).unwrap().ipc_op().unwrap();
            let scenario = harness::scenario::find(id).unwrap();
            let needs_bus = harness::ipc::needs_bus(op).is_some() || scenario.runner_needs_bus().is_some();
            let p2p_reason = s["p2p_reason"].as_str().unwrap_or("");
            if matches!(op, IpcOp::PropertyGetAll(_) | IpcOp::ManagedObjects(_)) {
                // Peer to peer its server would register these objects on every
                // accepted connection: the adapter's gap, and it says so.
                assert_eq!(s["p2p_supported"], false, "{id}");
                assert!(
                    p2p_reason.contains("this adapter does not serve") && p2p_reason.contains("peer to peer yet"),
                    "{id}: {p2p_reason}"
                );
            } else {
                assert_eq!(s["p2p_supported"], !needs_bus, "{id} on p2p: {p2p_reason}");
            }
        }
    }
}

#[test]
fn sd_bus_serves_and_calls_peer_to_peer() {
    let out = TempDir::new("sdbus-p2p");
    let scenarios = [
        "call/void",
        "call/relation-set",
        "call/echo-bytes/1048576",
        "property/get",
        "property/cold-start",
        "connect/marshal-send",
    ];
    let o = smoke_run_of_repo(
        out.path(),
        &[
            "--adapters",
            ADAPTER,
            "--buses",
            "p2p",
            "--scenarios",
            &scenarios.join(","),
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "smoke run failed:\n{}", text(&o));
    let r = validate(&results_file(out.path()));
    for s in scenarios {
        assert_eq!(status_of(&r, ADAPTER, s), CellStatus::Ok, "{s}");
    }
}

/// sd-bus answers a call to an object it does not have with UnknownObject
/// only when `sd_bus_process` is not asked to hand unhandled messages back
/// (the `systemd` crate's `BusRef::process` always asks): peer to peer, where
/// no bus daemon answers for it, the server must still reply.
#[test]
fn sd_bus_answers_calls_to_unknown_objects_peer_to_peer() {
    let dir = TempDir::new("sdbus-unknown");
    let socket = dir.path().join("p2p.sock");
    let t = harness::ipc::Transport::P2p { socket: socket.clone() };
    let bin = bin_dir().join("adapter-systemd-0-11");
    let mut server = crate::real_clients::serve(&bin, &t, dir.path().join("serve.err")).unwrap();
    let peer = format!("--peer=unix:path={}", socket.display());
    for (path, member, error) in [
        (
            "/nope",
            "io.killing.spark.Bench.Void",
            "org.freedesktop.DBus.Error.UnknownObject",
        ),
        (
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.Hello",
            "org.freedesktop.DBus.Error.UnknownObject",
        ),
        (
            harness::ipc::OBJECT_PATH,
            "io.killing.spark.Bench.Nope",
            "org.freedesktop.DBus.Error.UnknownMethod",
        ),
    ] {
        let o = crate::real_clients::tool(
            "dbus-send",
            &[&peer, "--print-reply", "--reply-timeout=5000", path, member],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains(error),
            "{path} {member}: {}",
            text(&o)
        );
    }
    // And it still serves.
    let o = crate::real_clients::tool(
        "dbus-send",
        &[
            &peer,
            "--print-reply",
            "--reply-timeout=5000",
            harness::ipc::OBJECT_PATH,
            "io.killing.spark.Bench.Void",
        ],
    );
    assert!(o.status.success(), "Void after the errors: {}", text(&o));
    assert!(server.alive(), "the server died: {}", server.stderr());
}
