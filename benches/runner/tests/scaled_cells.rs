//! The runner-driven cells of issue 15 (`call/parallel-clients/<k>`,
//! `signal/match-rules/<kind>/<n>`), the memory of every process of an IPC
//! cell, and the placement recorded on each, on every bus.

use crate::common::*;
use harness::results::CellStatus;

const BUSES: [&str; 3] = ["dbus-daemon", "dbus-broker", "busd"];

#[test]
fn parallel_clients_match_rules_memory_and_placement() {
    let out = TempDir::new("scaled-cells");
    let r = repo_smoke_results(
        out.path(),
        &[
            "--adapters",
            "rustbus-0.19,libdbus-c-1.14",
            "--scenarios",
            "call/void,call/parallel-clients/2,signal/match-rules/sender/16,signal/match-rules/wildcard/16",
            "--buses",
            "dbus-daemon,dbus-broker,busd,p2p",
        ],
    );
    for adapter in ["rustbus-0.19", "libdbus-c-1.14"] {
        for bus in BUSES {
            // K clients: one figure per call over both, the bus daemon's CPU per call, every process's memory.
            let c = cell(&r, adapter, "call/parallel-clients/2", bus);
            assert_eq!(c.status(), CellStatus::Ok, "{c:?}");
            let m = c.measurement().unwrap();
            assert!(m.wall.median_ns.point > 0.0);
            assert!(
                m.verification_notes
                    .iter()
                    .any(|n| n.contains("2 `repeat` processes of call/void")),
                "{:?}",
                m.verification_notes
            );
            let costs = m.costs.as_ref().unwrap_or_else(|| panic!("{adapter} {bus}: no costs"));
            for role in ["client", "server", "bus"] {
                let p = costs
                    .process(role)
                    .unwrap_or_else(|| panic!("{adapter} {bus}: no {role}"));
                assert!(p.cpu_ns_per_op > 0.0, "{adapter} {bus} {role}: {p:?}");
                assert!(p.vm_hwm_kib.is_some_and(|k| k > 0), "{adapter} {bus} {role}: {p:?}");
            }
            // smoke's `one-cpu`: server and bus on the worker's CPU, the clients not pinned.
            let cpu = worker_cpu(m.placement.as_deref());
            assert_eq!(
                m.placement.as_deref(),
                Some(format!("client={cpu},server={cpu},bus={cpu} (the clients unpinned)").as_str()),
                "{adapter} {bus}"
            );

            // The runner's rules held on the bus, the adapter's fan-out to one subscriber timed.
            for kind in ["sender", "wildcard"] {
                let c = cell(&r, adapter, &format!("signal/match-rules/{kind}/16"), bus);
                assert_eq!(c.status(), CellStatus::Ok, "{c:?}");
                let m = c.measurement().unwrap();
                assert!(
                    m.verification_notes
                        .iter()
                        .any(|n| n == &format!("the runner held 16 {kind} match rules (every AddMatch answered)")),
                    "{adapter} {bus} {kind}: {:?}",
                    m.verification_notes
                );
                let cpu = worker_cpu(m.placement.as_deref());
                assert_eq!(m.placement, Some(format!("client={cpu},server={cpu},bus={cpu}")));
            }

            // Every process of a call/void cell has its peak and current resident memory.
            let costs = cell(&r, adapter, "call/void", bus)
                .measurement()
                .unwrap()
                .costs
                .clone()
                .unwrap();
            for role in ["client", "server", "bus"] {
                let p = costs.process(role).unwrap();
                let hwm = p.vm_hwm_kib.unwrap_or(0);
                assert!(
                    hwm > 0 && p.vm_rss_kib.is_some_and(|rss| rss > 0 && rss <= hwm),
                    "{role}: {p:?}"
                );
            }
        }
        for s in ["call/parallel-clients/2", "signal/match-rules/sender/16"] {
            let c = cell(&r, adapter, s, "p2p");
            assert_eq!(c.status(), CellStatus::Unsupported, "{c:?}");
            assert!(c.reason().is_some_and(|why| why.contains("bus")), "{c:?}");
        }
    }

    // Every format shows the memory and says which placement it shows.
    let file = results_file(out.path());
    let report = |format: &str| {
        let o = dbus_matrix(&["report", file.to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        assert!(o.status.success(), "report --format {format}: {}", text(&o));
        text(&o)
    };
    let md = report("markdown");
    assert!(md.contains("#### peak resident memory (VmHWM"), "{md}");
    assert!(
        md.contains(
            "CPU placement of these cells: client, server and bus daemon of a cell on one CPU (`--pin one-cpu`; CPU "
        ),
        "{md}"
    );
    assert!(md.contains(" calls/s"), "parallel clients' calls/s: {md}");
    let csv = report("csv");
    let header = csv.lines().next().unwrap();
    for col in [
        "client_vm_hwm_kib",
        "server_vm_hwm_kib",
        "bus_vm_hwm_kib",
        "bus_vm_rss_kib",
        "placement",
    ] {
        assert!(header.split(',').any(|h| h == col), "{col} in {header}");
    }
    let bmf: serde_json::Value = serde_json::from_str(&report("bmf")).unwrap();
    let void = &bmf["rustbus-0.19/call/void@dbus-daemon"];
    assert!(void["peak-rss"]["value"].as_f64().is_some_and(|k| k > 0.0), "{void}");
    let parallel = &bmf["rustbus-0.19/call/parallel-clients/2@dbus-broker"];
    assert!(
        parallel["calls-per-second"]["value"].as_f64().is_some_and(|n| n > 0.0),
        "{parallel}"
    );
    let html = report("html");
    assert!(html.contains("eak resident memory (VmHWM"), "HTML cost table");
    assert!(
        html.contains("CPU placement of these cells: client, server and bus daemon of a cell on one CPU"),
        "HTML placement line"
    );
}

/// The CPU of a cell placed by `one-cpu` (`client=C,…`).
fn worker_cpu(placement: Option<&str>) -> usize {
    placement
        .and_then(|p| p.strip_prefix("client="))
        .and_then(|p| p.split(',').next())
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not placed on one CPU: {placement:?}"))
}
