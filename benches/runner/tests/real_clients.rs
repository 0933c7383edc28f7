//! Every adapter server survives the standard D-Bus tools: on a private
//! dbus-daemon, `gdbus`, `busctl` and `dbus-send` (Debian packages
//! libglib2.0-bin, systemd, dbus-bin) introspect it, call it right and wrong,
//! read its property, and the server still answers afterwards. And a second
//! server never takes over a name the first one owns.

use crate::common::*;

use std::path::PathBuf;
use std::process::Command;

use harness::ipc::{Transport, INTERFACE, OBJECT_PATH};

mod checks;
mod server;

use checks::*;
pub(crate) use server::{serve, tool};

/// Adapters whose `list` says they can serve `call/void`: every transport-capable one.
fn serving_adapters() -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(bin_dir()).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.starts_with("adapter-") || name.ends_with(".d") {
            continue;
        }
        let o = Command::new(e.path()).arg("list").output().unwrap();
        assert!(o.status.success(), "{name} list: {}", text(&o));
        let listing: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let serves = listing["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == "call/void" && s["supported"] == true);
        if serves {
            found.push((listing["id"].as_str().unwrap().to_string(), e.path()));
        }
    }
    // Programs (adapters in other languages) run from their source directory.
    let m: toml::Value = toml::from_str(&std::fs::read_to_string(repo_matrix()).unwrap()).unwrap();
    for a in m["adapter"].as_array().unwrap() {
        if let Some(program) = a.get("program").and_then(|p| p.as_str()) {
            let path = repo_root().join(a["path"].as_str().unwrap()).join(program);
            found.push((a["id"].as_str().unwrap().to_string(), path));
        }
    }
    found.sort();
    let ids: Vec<&str> = found.iter().map(|(id, _)| id.as_str()).collect();
    // Every adapter with a transport, but those whose library cannot serve here.
    // SAFETY: getuid cannot fail.
    let root = unsafe { libc::getuid() } == 0;
    let cannot_serve = |id: &str| id == "dbus-async-2" || (root && id == "tokio-dbus-0.2");
    for expected in adapters_with_a_transport()
        .iter()
        .map(|a| a.id.as_str())
        .filter(|id| !cannot_serve(id))
    {
        assert!(
            ids.contains(&expected),
            "{expected} is not among the serving adapters {ids:?}"
        );
    }
    found
}

fn service_name(tag: &str, adapter: &str) -> String {
    let clean: String = adapter
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("io.killing.spark.Bench.{tag}_{clean}")
}

fn private_bus(names: &[String]) -> bus::RunningBus {
    let opts = bus::BusOptions {
        services: names.to_vec(),
        ..bus::BusOptions::default()
    };
    bus::start(bus::BusKind::DbusDaemon, &opts).expect("dbus-daemon starts (scripts/install-deps-debian.sh)")
}

fn transport(bus: &bus::RunningBus, name: &str) -> Transport {
    Transport::Bus {
        address: bus.address().to_string(),
        socket: bus.socket_path().to_path_buf(),
        service_name: name.to_string(),
    }
}

/// Every check of one running server: `(check, Err(why))` for each that failed.
fn drive(adapter: &str, address: &str, name: &str) -> Vec<(&'static str, String)> {
    let dest = format!("--dest={name}");
    let bus = format!("--bus={address}");
    let busctl_address = format!("--address={address}");
    fn gdbus<'a>(address: &'a str, name: &'a str, args: &[&'a str]) -> Vec<&'a str> {
        let mut a = vec!["--address", address, "--dest", name, "--object-path", OBJECT_PATH];
        a.extend_from_slice(args);
        a
    }
    let gdbus_call = |method: &str, args: &[&str]| {
        let mut a = vec!["call", "--timeout", "10"];
        let m = format!("{INTERFACE}.{method}");
        let mut rest = gdbus(address, name, &["--method", &m]);
        rest.extend_from_slice(args);
        a.extend(rest);
        tool("gdbus", &a)
    };
    let busctl = |args: &[&str]| {
        let mut a = vec![busctl_address.as_str(), "--timeout=10"];
        a.extend_from_slice(args);
        tool("busctl", &a)
    };
    let dbus_send = |member: &str, args: &[&str]| {
        let mut a = vec![
            bus.as_str(),
            "--print-reply",
            "--reply-timeout=10000",
            dest.as_str(),
            OBJECT_PATH,
            member,
        ];
        a.extend_from_slice(args);
        tool("dbus-send", &a)
    };
    let bench = |m: &str| format!("{INTERFACE}.{m}");
    let unknown_member = [
        "org.freedesktop.DBus.Error.UnknownMethod",
        "org.freedesktop.DBus.Error.UnknownInterface",
    ];
    let invalid_args = argument_errors(adapter);
    let checks: Vec<(&'static str, Result<(), String>)> = vec![
        ("gdbus introspect --xml", {
            let mut a = vec!["introspect"];
            a.extend(gdbus(address, name, &["--xml"]));
            succeeded("gdbus introspect", &tool("gdbus", &a)).and_then(|xml| check_introspection(&xml))
        }),
        ("gdbus call Void", {
            succeeded("gdbus call Void", &gdbus_call("Void", &[])).and_then(|out| match out.trim() {
                "()" => Ok(()),
                other => Err(format!("Void returned {other}")),
            })
        }),
        ("gdbus call InOutString", {
            let o = gdbus_call("InOutString", &["'Testtest'"]);
            succeeded("gdbus call InOutString", &o).and_then(|out| match out.trim() {
                "('Testtest',)" => Ok(()),
                other => Err(format!("InOutString returned {other}")),
            })
        }),
        ("busctl introspect", {
            succeeded("busctl introspect", &busctl(&["introspect", name, OBJECT_PATH])).and_then(|out| {
                let has = |member: &str, words: &[&str]| {
                    out.lines().any(|l| {
                        let f: Vec<&str> = l.split_whitespace().collect();
                        f.first() == Some(&member) && words.iter().all(|w| f.contains(w))
                    })
                };
                match has(".InOutInt", &["method", "i"]) && has(".Items", &["property", "a(ss)"]) {
                    true => Ok(()),
                    false => Err(format!("busctl introspect lacks .InOutInt or .Items:\n{out}")),
                }
            })
        }),
        ("busctl call InOutInt", {
            let o = busctl(&["call", name, OBJECT_PATH, INTERFACE, "InOutInt", "i", "7"]);
            succeeded("busctl call", &o).and_then(|out| match out.trim() {
                "i 8" => Ok(()),
                other => Err(format!("InOutInt 7 returned {other}")),
            })
        }),
        ("busctl get-property Items", {
            let o = busctl(&["get-property", name, OBJECT_PATH, INTERFACE, "Items"]);
            succeeded("busctl get-property", &o).and_then(|out| {
                match out.starts_with("a(ss) 10 \"id0\" \"Item number 0\"") && out.contains("\"Item number 9\"") {
                    true => Ok(()),
                    false => Err(format!("Items is {out}")),
                }
            })
        }),
        ("busctl tree", {
            succeeded("busctl tree", &busctl(&["tree", name])).and_then(|out| match out.contains(OBJECT_PATH) {
                true => Ok(()),
                false => Err(format!("the tree lacks {OBJECT_PATH}:\n{out}")),
            })
        }),
        (
            "dbus-send Peer.Ping",
            succeeded("Peer.Ping", &dbus_send("org.freedesktop.DBus.Peer.Ping", &[])).map(drop),
        ),
        ("dbus-send Properties.GetAll", {
            let o = dbus_send(
                "org.freedesktop.DBus.Properties.GetAll",
                &[&format!("string:{INTERFACE}")],
            );
            succeeded("GetAll", &o).and_then(|out| {
                match out.contains("\"Items\"") && out.contains("\"Item number 9\"") {
                    true => Ok(()),
                    false => Err(format!("GetAll returned {out}")),
                }
            })
        }),
        ("dbus-send Properties.Get of an unknown property", {
            let o = dbus_send(
                "org.freedesktop.DBus.Properties.Get",
                &[&format!("string:{INTERFACE}"), "string:NoSuchProperty"],
            );
            failed_with(
                "Get NoSuchProperty",
                &o,
                &[
                    "org.freedesktop.DBus.Error.UnknownProperty",
                    "org.freedesktop.DBus.Error.InvalidArgs",
                ],
            )
        }),
        ("dbus-send an unknown method", {
            failed_with(
                "NoSuchMethod",
                &dbus_send(&bench("NoSuchMethod"), &[]),
                &["org.freedesktop.DBus.Error.UnknownMethod"],
            )
        }),
        ("dbus-send an unknown interface", {
            failed_with(
                "org.example.Nope.Void",
                &dbus_send("org.example.Nope.Void", &[]),
                &unknown_member,
            )
        }),
        ("dbus-send InOutInt with a string", {
            failed_with(
                "InOutInt string:seven",
                &dbus_send(&bench("InOutInt"), &["string:seven"]),
                &invalid_args,
            )
        }),
        ("dbus-send InOutString with an int32", {
            failed_with(
                "InOutString int32:5",
                &dbus_send(&bench("InOutString"), &["int32:5"]),
                &invalid_args,
            )
        }),
        ("dbus-send EchoBytes with a string", {
            failed_with(
                "EchoBytes string:x",
                &dbus_send(&bench("EchoBytes"), &["string:x"]),
                &invalid_args,
            )
        }),
        ("jeepney ReadFd of a sparse 1 TiB file", {
            // A client may pass any fd: the server reads at most the largest
            // scenario size and answers an error beyond it (four Rust servers
            // once tried to allocate the whole terabyte and aborted).
            let o = read_fd_of_a_terabyte(address, name);
            match (o.status.code(), text(&o)) {
                (Some(0), _) => Ok(()),
                (_, out) => Err(format!("ReadFd of a 1 TiB file: no error reply: {}", out.trim())),
            }
        }),
        ("dbus-send InOutInt after all that", {
            let o = dbus_send(&bench("InOutInt"), &["int32:7"]);
            succeeded("InOutInt int32:7", &o).and_then(|out| match out.contains("int32 8") {
                true => Ok(()),
                false => Err(format!("InOutInt 7 returned {out}")),
            })
        }),
    ];
    checks
        .into_iter()
        .filter_map(|(what, r)| r.err().map(|e| (what, e)))
        .collect()
}

#[test]
fn every_server_survives_gdbus_busctl_and_dbus_send() {
    let dir = TempDir::new("real-clients");
    let adapters = serving_adapters();
    let names: Vec<String> = adapters.iter().map(|(id, _)| service_name("real", id)).collect();
    let bus = private_bus(&names);
    let mut failures = Vec::new();
    for ((id, bin), name) in adapters.iter().zip(&names) {
        let t = transport(&bus, name);
        let mut server = match serve(bin, &t, dir.path().join(format!("{id}.stderr"))) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{id}: the server did not start: {e}"));
                continue;
            }
        };
        for (check, why) in drive(id, bus.address(), name) {
            failures.push(format!("{id}: {check}: {why}"));
        }
        if !server.alive() {
            failures.push(format!("{id}: the server died: {}", server.stderr().trim()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `GetNameOwner(name)`: the unique name of its owner (or the error).
fn owner(address: &str, name: &str) -> String {
    let o = tool(
        "dbus-send",
        &[
            &format!("--bus={address}"),
            "--print-reply=literal",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.GetNameOwner",
            &format!("string:{name}"),
        ],
    );
    succeeded("GetNameOwner", &o).unwrap_or_else(|e| e).trim().to_string()
}

#[test]
fn a_second_server_does_not_take_over_an_owned_name() {
    let dir = TempDir::new("name-takeover");
    let adapters = serving_adapters();
    let names: Vec<String> = adapters.iter().map(|(id, _)| service_name("owned", id)).collect();
    let bus = private_bus(&names);
    let mut failures = Vec::new();
    for ((id, bin), name) in adapters.iter().zip(&names) {
        let t = transport(&bus, name);
        let mut first = serve(bin, &t, dir.path().join(format!("{id}.1.stderr")))
            .unwrap_or_else(|e| panic!("{id}: the first server did not start: {e}"));
        let before = owner(bus.address(), name);
        // Kept until the owner is asked again: a server that took over still holds the name.
        let second = serve(bin, &t, dir.path().join(format!("{id}.2.stderr")));
        match &second {
            Ok(_) => failures.push(format!("{id}: a second server became READY for {name}")),
            Err(e) if !e.contains(name.as_str()) => {
                failures.push(format!("{id}: the second server's error does not name {name}: {e}"))
            }
            Err(_) => {}
        }
        let after = owner(bus.address(), name);
        if before != after {
            failures.push(format!("{id}: {name} moved from {before} to {after}"));
        }
        drop(second);
        if !first.alive() {
            failures.push(format!("{id}: the first server died: {}", first.stderr().trim()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
