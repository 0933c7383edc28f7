//! The whole repository matrix: every adapter does the same work (verify),
//! and a smoke run covers every adapter x scenario cell with a valid results
//! file whose reports render.

use crate::common::*;
use harness::results::{CellStatus, Role};

#[test]
fn every_adapter_passes_verification() {
    let o = dbus_matrix(&["--matrix", repo_matrix().to_str().unwrap(), "verify"])
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success(), "verify failed:\n{out}");
    let m: toml::Value = toml::from_str(&std::fs::read_to_string(repo_matrix()).unwrap()).unwrap();
    let adapters = m["adapter"].as_array().unwrap().len();
    // verify checks wire bytes: codec scenarios only (IPC cells check replies while running)
    let scenarios = m["scenario"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            let id = s["id"].as_str().unwrap();
            id.starts_with("marshal/") || id.starts_with("demarshal/")
        })
        .count();
    assert!(scenarios >= 8, "codec scenarios in matrix.toml: {scenarios}");
    let lines = out
        .lines()
        .filter(|l| l.contains(" ok") || l.contains("unsupported:"))
        .count();
    assert_eq!(
        lines,
        adapters * scenarios,
        "one verdict per adapter x scenario:\n{out}"
    );
    assert!(out.contains("verify: 0 failed"));
    // A row this build mode cannot have (ruby-dbus in Nix): every verdict
    // unsupported with the matrix's reason.
    for a in m["adapter"].as_array().unwrap() {
        let id = a["id"].as_str().unwrap();
        if let Some(why) = unavailable_here(id) {
            let verdicts: Vec<&str> = out
                .lines()
                .filter(|l| l.split_whitespace().next() == Some(id))
                .collect();
            assert_eq!(verdicts.len(), scenarios, "{id}:\n{out}");
            assert!(
                verdicts.iter().all(|l| l.ends_with(&format!(" unsupported: {why}"))),
                "{id}:\n{out}"
            );
        }
    }
}

#[test]
fn smoke_run_covers_every_cell_and_reports() {
    let out = TempDir::new("smoke");
    let o = smoke_run_of_repo(out.path(), &[]).output().unwrap();
    assert!(o.status.success(), "smoke run failed:\n{}", text(&o));
    let file = results_file(out.path());
    let r = validate(&file);
    assert!(r.run.complete);
    assert_eq!(r.run.profile, "smoke");
    let m: toml::Value = toml::from_str(&std::fs::read_to_string(repo_matrix()).unwrap()).unwrap();
    let buses: Vec<&str> = m["bus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert!(buses.len() >= 4, "dbus-daemon, dbus-broker, busd and p2p: {buses:?}");
    // Which cells must exist (docs/scenarios.md): codec scenarios once per adapter, the
    // raw-socket floor once for the baseline, every other IPC scenario per library and bus.
    let reference = m["roles"]["reference"]
        .as_str()
        .expect("matrix.toml names the reference adapter");
    let smoke_roles: Vec<&str> = m["profile"]["smoke"]["roles"]
        .as_array()
        .expect("the smoke profile measures every role")
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(smoke_roles, ["same", "client", "server"], "smoke covers every role");
    let role_scenarios: Vec<&str> = m["profile"]["smoke"]["role_scenarios"]
        .as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap()).collect())
        .expect("the smoke profile names its role scenarios");
    // Every role scenario of quick is in smoke: every new cell kind is covered.
    for s in m["profile"]["quick"]["role_scenarios"].as_array().into_iter().flatten() {
        assert!(
            role_scenarios.contains(&s.as_str().unwrap()),
            "{s} of quick is not in smoke"
        );
    }
    let mut expected = std::collections::BTreeSet::new();
    // The version-axis rows ([[pinned]]) run where named, never in a run of the
    // whole matrix (tests/pinned_rows.rs runs one in smoke).
    for a in m["adapter"].as_array().unwrap() {
        let id = a["id"].as_str().unwrap();
        let baseline = a.get("baseline").and_then(|b| b.as_bool()).unwrap_or(false);
        let rec = r
            .adapters
            .iter()
            .find(|x| x.id == id)
            .unwrap_or_else(|| panic!("adapter {id} missing"));
        assert!(!rec.version.is_empty());
        assert!(rec.pin.is_none(), "{id}: a pin recorded");
        assert!(
            rec.runtime.as_deref().is_some_and(|rt| !rt.is_empty()),
            "{id}: no runtime recorded"
        );
        if a.get("program").is_some() {
            // A program (a script) has no ELF segments of its own: no size, not a wrong one.
            assert_eq!(rec.loaded_bytes, None, "{id}: a program's loaded_bytes");
        } else {
            // Code and data only: every Cargo adapter links at least its library and criterion.
            assert!(
                rec.loaded_bytes.is_some_and(|n| n > 500_000),
                "{id}: loaded_bytes {:?}",
                rec.loaded_bytes
            );
        }
        for s in m["scenario"].as_array().unwrap() {
            // A scenario with `profiles` runs in those only.
            let in_smoke = s
                .get("profiles")
                .is_none_or(|p| p.as_array().unwrap().iter().any(|n| n.as_str() == Some("smoke")));
            let s = s["id"].as_str().unwrap();
            if !in_smoke {
                continue;
            }
            if s.starts_with("marshal/") || s.starts_with("demarshal/") {
                expected.insert((id.to_string(), s.to_string(), None, Role::Same));
            } else if s.starts_with("baseline/") {
                if baseline {
                    expected.insert((id.to_string(), s.to_string(), None, Role::Same));
                }
            } else if !baseline {
                for b in &buses {
                    expected.insert((id.to_string(), s.to_string(), Some(b.to_string()), Role::Same));
                    // The client and server roles of the profile's role scenarios, against the reference.
                    if role_scenarios.contains(&s) && id != reference {
                        for role in [Role::Client, Role::Server] {
                            expected.insert((id.to_string(), s.to_string(), Some(b.to_string()), role));
                        }
                    }
                }
            }
        }
    }
    let got: std::collections::BTreeSet<_> = r
        .cells
        .iter()
        .map(|c| (c.adapter.clone(), c.scenario.clone(), c.bus.clone(), c.role))
        .collect();
    let missing: Vec<_> = expected.difference(&got).collect();
    let extra: Vec<_> = got.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}\nextra {extra:?}"
    );
    assert_eq!(
        r.cells.len(),
        expected.len(),
        "one cell per adapter x scenario (x bus x role)"
    );
    let failed: Vec<String> = r
        .cells
        .iter()
        .filter(|c| c.status() == CellStatus::Failed)
        .map(|c| {
            format!(
                "{} {} {:?} {}: {}",
                c.adapter,
                c.scenario,
                c.bus,
                c.role,
                c.reason().unwrap_or("")
            )
        })
        .collect();
    assert!(failed.is_empty(), "failed cells:\n{}", failed.join("\n"));
    // Every ok IPC cell (the floor too) of a scenario the smoke profile
    // counts costs for has its per-operation costs, except cold starts (whole
    // processes, timed from outside) and operations slower than the counting
    // limit, which say so; the other IPC cells say the profile skipped them.
    let counted: Vec<&str> = m["profile"]["smoke"]["costs"]
        .as_array()
        .expect("the smoke profile lists the scenarios it counts costs for")
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    for s in &counted {
        assert!(
            r.cells.iter().any(|c| &c.scenario == s && c.status() == CellStatus::Ok),
            "{s}: no ok cell to count costs on"
        );
    }
    for c in r.cells.iter().filter(|c| c.status() == CellStatus::Ok) {
        let is_ipc = c.bus.is_some() || c.scenario.starts_with("baseline/");
        let m = c.measurement().unwrap();
        if !is_ipc {
            assert!(m.costs.is_none(), "{c:?}: costs on a cell that is not counted");
            continue;
        }
        if c.scenario == "property/cold-start" {
            // Whole processes timed from outside: on a bus, the messages of one
            // more monitored cold start (no per-process counts); p2p nothing.
            match (c.bus.as_deref(), &m.costs) {
                (Some("p2p"), costs) => assert!(costs.is_none(), "{c:?}: costs of a p2p cold start"),
                (_, Some(costs)) => {
                    assert_eq!(costs.operations, 1, "{c:?}");
                    assert!(costs.processes.is_empty(), "{c:?}");
                    assert!(
                        costs.bus_messages_per_op.unwrap_or(0.0) >= 4.0,
                        "{c:?}: a cold start without Hello and a read"
                    );
                }
                (_, None) => panic!("{c:?}: a cold start on a bus without its bus messages"),
            }
            continue;
        }
        if !counted.contains(&c.scenario.as_str()) {
            assert!(m.costs.is_none(), "{c:?}: costs outside the profile's selection");
            assert!(
                m.verification_notes
                    .iter()
                    .any(|n| n.starts_with("costs not counted: the profile counts them for other scenarios only")),
                "{c:?}: no note on the skipped costs"
            );
            continue;
        }
        match &m.costs {
            Some(costs) => {
                assert!(costs.operations >= 3, "{c:?}");
                assert!(costs.process("client").is_some_and(|p| p.cpu_ns_per_op > 0.0), "{c:?}");
                let on_bus = c.bus.as_deref().is_some_and(|b| b != "p2p");
                assert_eq!(
                    costs.process("bus").is_some(),
                    on_bus,
                    "{c:?}: a bus role on a bus only"
                );
                // Parallel clients are counted with their timing, without a monitor.
                let monitored = on_bus && !c.scenario.starts_with("call/parallel-clients/");
                assert_eq!(
                    costs.bus_messages_per_op.is_some(),
                    monitored,
                    "{c:?}: bus messages on a bus only"
                );
                if c.bus.is_some() {
                    assert!(costs.process("server").is_some(), "{c:?}: no server counted");
                }
            }
            None => assert!(
                m.verification_notes
                    .iter()
                    .any(|n| n.starts_with("costs not counted: ") && n.contains("per operation")),
                "{c:?}: ok IPC cell without costs"
            ),
        }
    }
    // Every process of a counted call/void cell on a bus has its peak and
    // current resident memory (VmHWM, VmRSS of /proc/PID/status).
    let void_on_bus: Vec<_> = r
        .cells
        .iter()
        .filter(|c| c.scenario == "call/void" && c.bus.as_deref().is_some_and(|b| b != "p2p"))
        .filter_map(|c| Some((c, c.measurement()?.costs.as_ref()?)))
        .collect();
    assert!(!void_on_bus.is_empty(), "no counted call/void cell on a bus");
    for (c, costs) in void_on_bus {
        for role in ["client", "server", "bus"] {
            let p = costs
                .process(role)
                .unwrap_or_else(|| panic!("{} {:?}: no {role}", c.adapter, c.bus));
            let hwm = p.vm_hwm_kib.unwrap_or(0);
            assert!(hwm > 0, "{} {:?}: {role} VmHWM {:?}", c.adapter, c.bus, p.vm_hwm_kib);
            assert!(
                p.vm_rss_kib.is_some_and(|rss| rss > 0 && rss <= hwm),
                "{} {role}: {p:?}",
                c.adapter
            );
        }
    }
    // Every IPC cell says where its processes ran.
    for c in r
        .cells
        .iter()
        .filter(|c| c.bus.is_some() && c.status() == CellStatus::Ok)
    {
        let placement = c.measurement().unwrap().placement.as_deref();
        assert!(placement.is_some_and(|p| !p.is_empty()), "{c:?}: no placement recorded");
    }
    // A cell over the smoke profile's cell budget is one timed operation, and says so.
    for c in r.cells.iter().filter(|c| c.status() == CellStatus::Ok) {
        let m = c.measurement().unwrap();
        if let Some(cut) = &m.cut {
            assert!(cut.contains("cell budget"), "{c:?}");
            assert_eq!(m.wall.samples, 1, "{c:?}: a cut cell is one operation");
        }
    }
    for c in r.cells.iter().filter(|c| c.status() == CellStatus::Unsupported) {
        assert!(
            c.reason().is_some_and(|why| !why.is_empty()),
            "{c:?}: unsupported without a reason"
        );
    }
    for format in ["markdown", "csv", "json"] {
        let o = dbus_matrix(&["report", file.to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        assert!(o.status.success(), "report --format {format}: {}", text(&o));
        assert!(text(&o).contains("marshal/mixed"));
        if format == "markdown" {
            assert!(
                text(&o).contains("Adapter binaries, code and data: zbus 6."),
                "{}",
                text(&o)
            );
        }
        assert!(
            text(&o).contains("call/echo-bytes/4096"),
            "IPC cells in the {format} report"
        );
    }
}
