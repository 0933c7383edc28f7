//! A tiny results file the report formats' tests render (test builds only):
//! two libraries and a baseline, codec and IPC cells, a failure with markup
//! in its reason, and an unsupported cell.

use harness::results::ResultsFile;

fn ok(adapter: &str, scenario: &str, bus: Option<&str>, ns: f64) -> serde_json::Value {
    let size = scenario
        .rsplit('/')
        .next()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(100);
    serde_json::json!({
        "adapter": adapter, "scenario": scenario, "bus": bus, "status": "ok", "elapsed_s": 0.1,
        "measurement": {
            "wall": {
                "median_ns": {"point": ns, "lower": ns * 0.9, "upper": ns * 1.1},
                "mean_ns": {"point": ns, "lower": ns * 0.9, "upper": ns * 1.1},
                "std_dev_ns": 1.0, "samples": 10, "iterations": 100, "sample_ns": [ns]
            },
            "throughput_bytes": size, "alloc": null, "verification_notes": []
        }
    })
}

/// Built from JSON so that it does not depend on every optional field.
pub fn tiny() -> ResultsFile {
    let mut cells = vec![
        ok("a-1", "marshal/mixed", None, 5_000.0),
        ok("b-2", "marshal/mixed", None, 12_000.0),
        ok("raw", "marshal/mixed", None, 900.0),
        serde_json::json!({"adapter": "b-2", "scenario": "demarshal/mixed", "status": "failed",
            "reason": "boom <&> \"quoted\"", "elapsed_s": 0.1}),
        ok("a-1", "demarshal/mixed", None, 7_000.0),
        ok("raw", "baseline/raw-socket/1", None, 60_000.0),
        ok("raw", "baseline/raw-socket/1024", None, 62_000.0),
    ];
    for bus in ["dbus-daemon", "p2p"] {
        for (s, ns) in [
            ("call/void", 140_000.0),
            ("call/echo-bytes/1", 145_000.0),
            ("call/echo-bytes/1024", 150_000.0),
        ] {
            cells.push(ok("a-1", s, Some(bus), ns));
            cells.push(if bus == "p2p" {
                serde_json::json!({"adapter": "b-2", "scenario": s, "bus": bus, "status": "unsupported",
                    "reason": "no <server> side", "elapsed_s": 0.0})
            } else {
                ok("b-2", s, Some(bus), ns * 2.0)
            });
        }
    }
    serde_json::from_value(serde_json::json!({
        "format": "dbus-matrix-results", "schema_version": 1,
        "run": {"started_at": "2026-11-23T11:00:00Z", "profile": "smoke", "revision": "abc<d>",
            "tool_version": "0.1.0", "command": ["dbus-matrix", "run"], "complete": false},
        "environment": {"rustc": "rustc 1.95", "cpu_model": "Some CPU", "cpus": 2, "memory_bytes": 8u64 << 30,
            "kernel": "6.1", "os": "Debian", "hostname_hash": "00", "mode": "host",
            "valgrind": "valgrind-3.19.0"},
        "adapters": [
            {"id": "a-1", "library": "a", "version": "1.0.0", "loaded_bytes": 2_500_000,
                "build": {"seconds": 42.14, "crates_compiled": 12, "jobs": 2}},
            {"id": "b-2", "library": "b", "version": "2.0.0"},
            {"id": "raw", "library": "raw", "version": "0.1.0", "baseline": true}
        ],
        "buses": [{"id": "dbus-daemon", "description": "D-Bus Message Bus Daemon 1.14"},
            {"id": "p2p", "description": "peer to peer: no bus"}],
        "cells": cells
    }))
    .unwrap()
}
