//! Every IPC cell of the smoke and quick profiles, planned from the
//! repository's matrix.toml as `run` plans them (every adapter, every bus of
//! the matrix and the system bus, the profile's roles), goes through
//! [`decide`], the decision `run --instructions` makes: each is counted or
//! gets a named reason, and a cell decided "count" must be one the counting
//! path can run (a client `repeat` of the adapter scenario, every process on
//! a bus the runner starts under callgrind, or peer to peer).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use harness::ipc::IpcOp;
use harness::scenario::Driver;

use super::{decide, Reason};
use crate::matrix::{BusEntry, Matrix};
use crate::measure::instructions;
use crate::roles::RoleSelection;
use crate::run::bus_session::SYSTEM_BUS;
use crate::run::plan::{self, Planned};

fn matrix() -> Matrix {
    // CARGO_MANIFEST_DIR of run time first (nextest sets it), as matrix/mod.rs's tests.
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
    let text = std::fs::read_to_string(Path::new(&dir).join("../../matrix.toml")).unwrap();
    Matrix::parse(&text, Path::new("matrix.toml")).unwrap()
}

/// What the counting path needs of a cell to count it, from how it counts
/// (`ipc_instructions::counted`): `Err` says what it lacks.
fn countable(c: &Planned) -> Result<(), String> {
    if !matches!(c.scenario.driver, Driver::Adapter) {
        return Err(format!(
            "its driver is {:?}: the runner drives it, no client `repeat` to count",
            c.scenario.driver
        ));
    }
    if matches!(c.scenario.ipc_op(), Some(IpcOp::PropertyColdStart)) {
        return Err("it runs the `cold-start` command, not `repeat`".into());
    }
    match c.bus.map(|b| b.id.as_str()) {
        None | Some("p2p") => Ok(()),
        Some(id) => match id.parse::<bus::BusKind>() {
            Ok(kind) => match kind.wrapper_unsupported() {
                None => Ok(()),
                Some(why) => Err(format!("bus::start refuses a wrapper for {kind}: {why}")),
            },
            Err(_) => Err(format!("the runner cannot start bus {id:?} under callgrind")),
        },
    }
}

/// Every (counted or not) decision over the IPC cells of `profile`'s plan:
/// counted cells per bus, and cells per reason.
fn decisions(m: &Matrix, profile: &str) -> (BTreeMap<String, usize>, BTreeMap<String, usize>) {
    let p = m.profile(profile).unwrap();
    let roles = RoleSelection::resolve(m, p, &[], None).unwrap();
    let adapters: Vec<_> = m.adapters.iter().collect();
    let entries: Vec<_> = m.scenarios.iter().filter(|s| s.in_profile(profile)).collect();
    let scenarios = plan::resolve(&entries).unwrap();
    let system = BusEntry {
        id: SYSTEM_BUS.into(),
        debian: None,
        cargo: None,
        crate_sha256: None,
        nix: None,
        nixos_implementation: None,
    };
    let buses: Vec<&BusEntry> = m.buses.iter().chain(std::iter::once(&system)).collect();
    let cells = plan::plan(&adapters, &scenarios, &buses, &roles, &HashSet::new());
    let (mut counted, mut reasons) = (BTreeMap::new(), BTreeMap::new());
    for c in cells.iter().filter(|c| c.scenario.ipc_op().is_some()) {
        let what = format!(
            "{profile}: {} {} on {}{}",
            c.adapter.id,
            c.scenario.id,
            c.bus.map_or("no bus", |b| b.id.as_str()),
            c.role.label_suffix()
        );
        match decide(c, 0.0) {
            Ok(()) => {
                if let Err(why) = countable(c) {
                    panic!("{what} would be counted, but {why}");
                }
                // Too slow an operation is the one thing only the run knows.
                let slow = instructions::MAX_NATIVE_NS * 2.0;
                assert!(
                    matches!(decide(c, slow), Err(Reason::TooSlow { .. })),
                    "{what}: not refused at {slow} ns per operation"
                );
                *counted
                    .entry(c.bus.map_or("none".into(), |b| b.id.clone()))
                    .or_insert(0) += 1;
            }
            Err(reason) => {
                let text = reason.to_string();
                assert!(text.len() > 20, "{what}: a reason that names nothing: {text:?}");
                assert!(
                    countable(c).is_err(),
                    "{what} is not counted ({text}), yet the counting path could run it"
                );
                *reasons.entry(text).or_insert(0) += 1;
            }
        }
    }
    (counted, reasons)
}

#[test]
fn every_ipc_cell_of_smoke_and_quick_is_counted_or_has_a_named_reason() {
    let m = matrix();
    for profile in ["smoke", "quick"] {
        let (counted, reasons) = decisions(&m, profile);
        // Every bus the runner starts under callgrind, and peer to peer, has counted cells; the floor too.
        for bus in ["dbus-daemon", "dbus-broker", "busd", "p2p", "none"] {
            assert!(
                counted.get(bus).copied().unwrap_or(0) > 0,
                "{profile}: no counted cell on {bus}"
            );
        }
        assert!(counted.contains_key("dbus-broker") && !counted.contains_key(SYSTEM_BUS));
        assert!(
            reasons.keys().any(|r| r.contains("parallel clients")),
            "{profile}: {reasons:?}"
        );
    }
}
