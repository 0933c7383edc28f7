//! Client and server apart (`run --roles`): the client and server roles are
//! cells of their own, against the reference adapter, recorded with their
//! role, shown in views of their own and never mixed with the same-library
//! cells by the reports.

use crate::common::*;
use harness::results::{CellStatus, Role};

#[test]
fn client_and_server_roles_are_cells_of_their_own() {
    let out = TempDir::new("roles");
    let o = smoke_run_of_repo(
        out.path(),
        &[
            "--adapters",
            "zbus-6,rustbus-0.19",
            "--scenarios",
            "call/void,call/relation-set",
            "--buses",
            "dbus-daemon,p2p",
            "--roles",
            "same,client,server",
            "--reference",
            "systemd-0.11",
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let path = results_file(out.path());
    let r = validate(&path);
    let plan = r
        .plan
        .as_ref()
        .and_then(|p| p.roles.as_ref())
        .expect("the roles are recorded");
    assert_eq!(plan.reference, "systemd-0.11");
    assert_eq!(plan.roles, [Role::Same, Role::Client, Role::Server]);
    // The reference is recorded (it took part) but has no cells of its own.
    assert!(r.adapters.iter().any(|a| a.id == "systemd-0.11"));
    assert!(r.cells.iter().all(|c| c.adapter != "systemd-0.11"));
    let cell = |a: &str, s: &str, bus: &str, role: Role| {
        r.cells
            .iter()
            .find(|c| c.adapter == a && c.scenario == s && c.bus.as_deref() == Some(bus) && c.role == role)
            .unwrap_or_else(|| panic!("no cell {a} {s} {bus} {role}"))
    };
    for a in ["zbus-6", "rustbus-0.19"] {
        for s in ["call/void", "call/relation-set"] {
            for role in Role::ALL {
                assert_eq!(
                    cell(a, s, "dbus-daemon", role).status(),
                    CellStatus::Ok,
                    "{a} {s} {role}"
                );
            }
        }
    }
    // Peer to peer: rustbus cannot serve there, and cannot be a client of
    // another server either (its adapter lists p2p unsupported): whose
    // listing decided is named.
    let c = cell("rustbus-0.19", "call/void", "p2p", Role::Server);
    assert_eq!(c.status(), CellStatus::Unsupported);
    assert!(
        c.reason().unwrap().starts_with("the server (rustbus-0.19): "),
        "{:?}",
        c.reason()
    );
    assert_eq!(
        cell("zbus-6", "call/void", "p2p", Role::Client).status(),
        CellStatus::Ok
    );
    assert_eq!(
        cell("zbus-6", "call/void", "p2p", Role::Server).status(),
        CellStatus::Ok
    );
    // Costs of a client-role cell count the reference's server process.
    let costs = cell("zbus-6", "call/void", "dbus-daemon", Role::Client)
        .measurement()
        .and_then(|m| m.costs.as_ref())
        .expect("call/void costs are counted in smoke");
    assert!(costs.process("server").is_some() && costs.process("client").is_some());

    // The file says the role; a same-library cell says nothing (old files load).
    let json = std::fs::read_to_string(&path).unwrap();
    assert!(json.contains("\"role\": \"client\"") && json.contains("\"role\": \"server\""));
    // Views of their own in the reports.
    let report = |format: &str| {
        let o = dbus_matrix(&["report", path.to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let md = report("markdown");
    assert!(md.contains("### client cost (this library calling the reference server) on dbus-daemon"));
    assert!(md.contains("### server cost (the reference client calling this library's server) on dbus-daemon"));
    assert!(md.contains("the systemd-0.11 client calling each library's server"));
    let html = report("html");
    assert!(html.contains("Client cost (this library calling the reference server) on <code>dbus-daemon</code>"));
    assert!(
        html.contains("Server cost (the reference client calling this library&#39;s server)")
            || html.contains("Server cost (the reference client calling this library's server)")
    );
    let csv = report("csv");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let role_col = header
        .iter()
        .position(|c| *c == "cell_role")
        .expect("a cell_role column");
    assert!(csv.lines().any(|l| {
        let f: Vec<&str> = l.split(',').collect();
        l.starts_with("zbus-6,") && l.contains(",call/void,") && f.get(role_col) == Some(&"client")
    }));
    let bmf = report("bmf");
    assert!(bmf.contains("\"zbus-6/call/void@dbus-daemon#client\""));
    assert!(bmf.contains("\"zbus-6/call/void@dbus-daemon#server\""));
    assert!(bmf.contains("\"zbus-6/call/void@dbus-daemon\""));

    // compare keeps the roles apart: a file against itself has three rows per cell, none missing.
    let o = dbus_matrix(&[
        "compare",
        path.to_str().unwrap(),
        path.to_str().unwrap(),
        "--format",
        "json",
    ])
    .output()
    .unwrap();
    let cmp: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", text(&o)));
    let cells = cmp["cells"].as_array().expect("compare lists cells");
    let roles_of_void: Vec<&str> = cells
        .iter()
        .filter(|c| c["adapter"] == "zbus-6" && c["scenario"] == "call/void" && c["bus"] == "dbus-daemon")
        .map(|c| c["role"].as_str().unwrap_or("same"))
        .collect();
    assert_eq!(roles_of_void, ["same", "client", "server"]);
}

#[test]
fn roles_need_a_known_reference() {
    let out = TempDir::new("roles-bad");
    let o = smoke_run_of_repo(
        out.path(),
        &["--scenarios", "call/void", "--roles", "client", "--reference", "nope"],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--reference \"nope\" is not an adapter of the matrix"),
        "{}",
        text(&o)
    );
    let o = smoke_run_of_repo(out.path(), &["--scenarios", "call/void", "--roles", "both"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}
