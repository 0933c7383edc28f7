//! Per-operation costs of IPC cells (`Measurement::costs`): counts that
//! follow from what a scenario does, not from how fast the machine is.

use crate::common::*;
use harness::results::{Cell, CellStatus, IpcCosts, ResultsFile};

fn costs<'a>(r: &'a ResultsFile, adapter: &str, scenario: &str, bus: Option<&str>) -> &'a IpcCosts {
    let c: &Cell = cell_on(r, adapter, scenario, bus);
    assert_eq!(c.status(), CellStatus::Ok, "{c:?}");
    let m = c.measurement().unwrap();
    m.costs
        .as_ref()
        .unwrap_or_else(|| panic!("{adapter} {scenario} {bus:?}: no costs: {:?}", m.verification_notes))
}

fn near(x: Option<f64>, want: f64, what: &str) {
    let x = x.unwrap_or_else(|| panic!("{what}: not counted"));
    assert!((x - want).abs() <= 0.05 * want.max(1.0), "{what}: {x}, expected {want}");
}

#[test]
fn costs_follow_what_each_scenario_does() {
    let out = TempDir::new("ipc-costs");
    let o = smoke_run_of_repo(
        out.path(),
        &[
            "--adapters",
            "raw,zbus-6,rustbus-0.19",
            "--scenarios",
            "call/void,property/get,signal/fanout/10,baseline/raw-socket/1",
            "--buses",
            "dbus-daemon,dbus-broker,busd,p2p",
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let file = results_file(out.path());
    let r = validate(&file);
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;

    // The floor: one byte each way between two threads of one process: a
    // send and a receive on each side per round trip, nothing else (std's
    // UnixStream uses send/recv, which /proc/PID/io does not count).
    let floor = costs(&r, "raw", "baseline/raw-socket/1", None);
    assert_eq!(floor.processes.len(), 1, "{floor:?}");
    let client = floor.process("client").unwrap();
    assert!(client.cpu_ns_per_op > 0.0);
    if root {
        near(client.syscalls_per_op, 4.0, "floor system calls");
    } else {
        assert!(
            floor.notes.iter().any(|n| n.starts_with("system calls not counted")),
            "{floor:?}"
        );
    }
    assert!(floor.bus_messages_per_op.is_none());

    for bus in ["dbus-daemon", "dbus-broker", "busd"] {
        for lib in ["zbus-6", "rustbus-0.19"] {
            // A method call and its reply cross the bus, nothing else.
            let c = costs(&r, lib, "call/void", Some(bus));
            near(
                c.bus_messages_per_op,
                2.0,
                &format!("{lib} call/void on {bus}: messages"),
            );
            assert!(c.bus_bytes_per_op.unwrap() > 100.0, "{c:?}");
            let roles: Vec<&str> = c.processes.iter().map(|p| p.role.as_str()).collect();
            assert_eq!(roles, ["client", "server", "bus"], "{lib} {bus}");
            for p in &c.processes {
                assert!(p.cpu_ns_per_op > 0.0, "{lib} {bus}: {p:?}");
                if root {
                    // At least a send and a receive each.
                    assert!(p.syscalls_per_op.unwrap() >= 2.0, "{lib} {bus}: {p:?}");
                }
            }
            // The server waits for every call.
            let server = c.process("server").unwrap();
            assert!(
                server.voluntary_switches_per_op + server.involuntary_switches_per_op >= 0.5,
                "{lib} {bus}: {server:?}"
            );
            // One signal per operation, however many subscribers get it.
            let f = costs(&r, lib, "signal/fanout/10", Some(bus));
            near(
                f.bus_messages_per_op,
                1.0,
                &format!("{lib} fanout/10 on {bus}: messages"),
            );
            assert!(f.process("subscribers").is_some(), "{f:?}");
        }
        // zbus caches properties (it reads them once, then follows PropertiesChanged);
        // rustbus asks the server every time.
        let cached = costs(&r, "zbus-6", "property/get", Some(bus));
        near(
            cached.bus_messages_per_op,
            0.0,
            &format!("zbus-6 property/get on {bus}"),
        );
        let asked = costs(&r, "rustbus-0.19", "property/get", Some(bus));
        near(
            asked.bus_messages_per_op,
            2.0,
            &format!("rustbus property/get on {bus}"),
        );
    }

    // Peer to peer there is no bus to count.
    let p2p = costs(&r, "zbus-6", "call/void", Some("p2p"));
    assert!(p2p.bus_messages_per_op.is_none() && p2p.process("bus").is_none());
    assert!(p2p.process("server").is_some());

    // Every report format shows them.
    let report = |format: &str| {
        let o = dbus_matrix(&["report", file.to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let md = report("markdown");
    assert!(md.contains("#### bus messages per operation (monitor)"), "{md}");
    assert!(md.contains("#### system calls per operation"), "{md}");
    let csv = report("csv");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for col in [
        "bus_messages_per_op",
        "client_cpu_ns_per_op",
        "bus_syscalls_per_op",
        "server_voluntary_switches_per_op",
    ] {
        assert!(header.contains(&col), "{col} in {header:?}");
    }
    assert!(csv.lines().skip(1).all(|l| l.split(',').count() >= header.len()));
    let bmf: serde_json::Value = serde_json::from_str(&report("bmf")).unwrap();
    let call = &bmf["rustbus-0.19/call/void@dbus-broker"];
    assert!(
        (call["bus-messages"]["value"].as_f64().unwrap() - 2.0).abs() < 0.1,
        "{call}"
    );
    assert!(call["cpu-time"]["value"].as_f64().unwrap() > 0.0);
    let html = report("html");
    assert!(html.contains("Bus messages per operation (monitor)"));
}
