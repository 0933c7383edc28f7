//! `connect/idle-connections/<n>` through the runner: connect time, the bus
//! daemon's memory per held connection and the client's VmRSS/VmHWM, in the
//! results file and in the Markdown, CSV, BMF and HTML reports; the threads
//! and idle cost of client, server and bus (issue 31), and each daemon's own
//! memory with 0, 10 and 100 idle peers.

use crate::common::*;
use harness::results::{CellStatus, Outcome};

#[test]
fn idle_connections_record_bus_and_client_memory_in_every_format() {
    let out = TempDir::new("idle-connections");
    let o = smoke_run_of_repo(
        out.path(),
        &[
            "--adapters",
            "zbus-6,dbus-0.9,rustbus-0.19,jeepney-0.8",
            "--scenarios",
            "connect/idle-connections/10,connect/idle-connections/100",
            "--buses",
            "dbus-daemon,p2p",
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let file = results_file(out.path());
    let r = validate(&file);
    for (n, s) in [
        (10, "connect/idle-connections/10"),
        (100, "connect/idle-connections/100"),
    ] {
        for adapter in ["zbus-6", "dbus-0.9", "rustbus-0.19", "jeepney-0.8"] {
            let c = cell(&r, adapter, s, "dbus-daemon");
            assert_eq!(c.status(), CellStatus::Ok, "{adapter} {s}: {:?}", c.outcome);
            let m = c.measurement().unwrap();
            let mem = m
                .connection_memory
                .as_ref()
                .unwrap_or_else(|| panic!("{adapter} {s}: no memory: {:?}", m.verification_notes));
            assert_eq!(mem.connections, n);
            assert!(mem.bus_rss_before_bytes > 0 && mem.bus_rss_held_bytes > 0, "{mem:?}");
            let delta = mem.bus_rss_held_bytes as f64 - mem.bus_rss_before_bytes as f64;
            assert_eq!(mem.bus_bytes_per_connection, delta / n as f64);
            assert!(
                mem.client_rss_bytes > 0 && mem.client_hwm_bytes >= mem.client_rss_bytes,
                "{mem:?}"
            );
            assert!(mem.client_threads.unwrap_or(0) >= 1, "{adapter} {s}: {mem:?}");
            // The quiet window runs on the smallest count only, with every role counted.
            match (&mem.idle, n) {
                (Some(idle), 10) => {
                    assert!(idle.notes.is_empty() && idle.window_s >= 0.2, "{adapter}: {idle:?}");
                    for role in ["client", "server", "bus"] {
                        let p = idle
                            .process(role)
                            .unwrap_or_else(|| panic!("{adapter}: no {role}: {idle:?}"));
                        assert!(p.threads >= 1 && p.cpu_ns_per_s >= 0.0, "{adapter} {role}: {p:?}");
                    }
                    assert_eq!(idle.process("client").unwrap().threads, mem.client_threads.unwrap());
                }
                (None, 100) => {}
                (idle, _) => panic!("{adapter} {s}: idle {idle:?}"),
            }
            // Peer to peer there is no daemon: the harness's reason, whatever the library.
            match &cell(&r, adapter, s, "p2p").outcome {
                Outcome::Unsupported { reason } => assert!(reason.contains("bus daemon"), "{reason}"),
                other => panic!("{adapter} {s} p2p: {other:?}"),
            }
        }
    }

    let report = |format: &str| {
        let o = dbus_matrix(&["report", "--format", format, file.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "report --format {format}: {}", text(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let md = report("markdown");
    assert!(md.contains("### idle connections: what one costs"), "{md}");
    assert!(md.contains("| zbus-6 | dbus-daemon | 100 |"), "{md}");
    assert!(md.contains("### threads and idle cost"), "{md}");
    assert!(md.contains("| rustbus-0.19 | dbus-daemon | 10 | "), "{md}");
    // Larger counts show the client's threads alone: rustbus holds 100 connections on its one thread.
    assert!(md.contains("| rustbus-0.19 | dbus-daemon | 100 | — | 1 | — |"), "{md}");
    // The daemon's own memory with 0, 10 and 100 idle peers, one row per bus.
    assert!(
        md.contains("| bus | 0 peers | 10 idle peers | 100 idle peers |"),
        "{md}"
    );
    assert!(md.contains("| dbus-daemon | "), "{md}");
    let csv = report("csv");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for col in [
        "bus_rss_bytes_per_connection",
        "client_rss_bytes",
        "client_hwm_bytes",
        "connect_ns_per_connection",
    ] {
        assert!(header.contains(&col), "CSV header lacks {col}: {header:?}");
    }
    let col = header.iter().position(|h| *h == "client_hwm_bytes").unwrap();
    let row = csv
        .lines()
        .find(|l| l.starts_with("dbus-0.9,") && l.contains(",dbus-daemon,connect/idle-connections/10,"))
        .expect("the dbus-0.9 row");
    assert!(row.split(',').nth(col).unwrap().parse::<f64>().unwrap() > 0.0, "{row}");
    let bmf: serde_json::Value = serde_json::from_str(&report("bmf")).unwrap();
    let b = &bmf["rustbus-0.19/connect/idle-connections/100@dbus-daemon"];
    assert!(b["bus-bytes-per-connection"]["value"].is_number(), "{b}");
    assert!(b["client-hwm-bytes"]["value"].as_f64().unwrap() > 0.0, "{b}");
    let html = report("html");
    assert!(html.contains("id=\"idle-connections\""));
    assert!(html.contains("<td>rustbus-0.19</td><td>dbus-daemon</td><td>100</td>"));
    assert!(html.contains("id=\"idle-cost\"") && html.contains("id=\"bus-memory\""));
}
