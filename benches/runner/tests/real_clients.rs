//! Every adapter server survives the standard D-Bus tools: on a private
//! dbus-daemon, `gdbus`, `busctl` and `dbus-send` (Debian packages
//! libglib2.0-bin, systemd, dbus-bin) introspect it, call it right and wrong,
//! read its property, and the server still answers afterwards. And a second
//! server never takes over a name the first one owns.

use crate::common::*;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use harness::contract::{self, READY};
use harness::ipc::{interface_methods, Transport, INTERFACE, OBJECT_PATH};

const READY_TIMEOUT: Duration = Duration::from_secs(30);

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

/// A server process, killed when dropped (also used by `sdbus_row`).
pub(crate) struct Server {
    child: Child,
    stderr: PathBuf,
}

impl Server {
    pub(crate) fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `bin serve` and waits for READY; `Err` says how it ended instead.
pub(crate) fn serve(bin: &Path, t: &Transport, stderr: PathBuf) -> Result<Server, String> {
    let args = contract::Command::Serve { transport: t.clone() }.to_args();
    let mut child = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut server = Server { child, stderr };
    let deadline = Instant::now() + READY_TIMEOUT;
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(50)) {
            if line == READY {
                return Ok(server);
            }
        }
        if let Ok(Some(status)) = server.child.try_wait() {
            return Err(format!("exited ({status}) before READY: {}", server.stderr().trim()));
        }
    }
    Err(format!(
        "not READY within {READY_TIMEOUT:?}: {}",
        server.stderr().trim()
    ))
}

/// Runs a tool; its own timeout options keep it from hanging on a silent server.
pub(crate) fn tool(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{program}: {e}; install it (Debian packages libglib2.0-bin for gdbus, systemd for busctl, \
                 dbus-bin for dbus-send: scripts/install-deps-debian.sh)"
            )
        })
}

/// `ReadFd` of a sparse 1 TiB memfd, sent by jeepney (Debian's
/// python3-jeepney: busctl, gdbus and dbus-send cannot pass an fd). Prints
/// the reply's error name and exits 0 on an error reply; 1 on a return; a
/// traceback (no reply, a closed connection) otherwise.
fn read_fd_of_a_terabyte(address: &str, name: &str) -> Output {
    const CLIENT: &str = r#"
import os, sys
from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection
address, name, path, interface, member = sys.argv[1:]
fd = os.memfd_create("dbus-matrix-terabyte")
os.ftruncate(fd, 1 << 40)
conn = open_dbus_connection(bus=address, enable_fds=True)
reply = conn.send_and_get_reply(new_method_call(DBusAddress(path, name, interface), member, "h", (fd,)), timeout=10)
if reply.header.message_type == MessageType.error:
    print("error reply:", reply.header.fields.get(HeaderFields.error_name), reply.body)
    sys.exit(0)
print("returned:", reply.body)
sys.exit(1)
"#;
    Command::new("/usr/bin/python3")
        .args(["-c", CLIENT, address, name, OBJECT_PATH])
        .args([
            harness::ipc::fd_passing::FD_INTERFACE,
            harness::ipc::fd_passing::READ_FD,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn succeeded(what: &str, o: &Output) -> Result<String, String> {
    if o.status.success() {
        Ok(stdout(o))
    } else {
        Err(format!("{what} failed ({}): {}", o.status, text(o).trim()))
    }
}

/// The call must fail with one of `names` as its error name (dbus-send prints it on stderr).
fn failed_with(what: &str, o: &Output, names: &[&str]) -> Result<(), String> {
    let all = text(o);
    if o.status.success() {
        return Err(format!(
            "{what} succeeded, expected the error {names:?}: {}",
            all.trim()
        ));
    }
    // dbus-send prints "Error NAME: MESSAGE".
    let message = names
        .iter()
        .find_map(|n| all.split_once(&format!("Error {n}: ")).map(|(_, m)| m.trim()));
    if message.is_some_and(|m| !m.is_empty()) {
        Ok(())
    } else {
        Err(format!(
            "{what}: expected the error {names:?} with a message, got: {}",
            all.trim()
        ))
    }
}

/// The XML must describe the benchmark interface exactly as the harness's
/// table does, and name the standard interfaces answered.
fn check_introspection(xml: &str) -> Result<(), String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let (mut interface, mut member, mut kind) = (String::new(), String::new(), String::new());
    let mut interfaces = Vec::new();
    // (member, in types, out types) of the benchmark interface; property and signal seen.
    let mut methods: Vec<(String, String, String)> = Vec::new();
    let (mut property, mut signal) = (None, String::new());
    loop {
        let event = reader.read_event().map_err(|e| format!("invalid XML: {e}"))?;
        let (start, empty) = match &event {
            Event::Start(e) => (Some(e.clone()), false),
            Event::Empty(e) => (Some(e.clone()), true),
            Event::End(e) => {
                if e.name().into_inner() == "interface" {
                    interface.clear();
                }
                (None, false)
            }
            Event::Eof => break,
            _ => (None, false),
        };
        let Some(e) = start else { continue };
        let attr = |key: &str| -> String {
            e.try_get_attribute(key)
                .ok()
                .flatten()
                .and_then(|a| {
                    a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .ok()
                        .map(|v| v.to_string())
                })
                .unwrap_or_default()
        };
        let tag = e.name().into_inner().to_string();
        match tag.as_str() {
            "interface" => {
                interface = attr("name");
                interfaces.push(interface.clone());
                if empty {
                    interface.clear();
                }
            }
            "method" | "signal" if interface == INTERFACE => {
                member = attr("name");
                kind = tag.clone();
                if kind == "method" {
                    methods.push((member.clone(), String::new(), String::new()));
                }
            }
            "arg" if interface == INTERFACE => {
                let t = attr("type");
                if kind == "signal" && member == "Ping" {
                    signal.push_str(&t);
                } else if let Some(m) = methods.last_mut().filter(|m| m.0 == member) {
                    match attr("direction").as_str() {
                        "out" => m.2.push_str(&t),
                        _ => m.1.push_str(&t),
                    }
                }
            }
            "property" if interface == INTERFACE && attr("name") == "Items" => {
                property = Some((attr("type"), attr("access")));
            }
            _ => {}
        }
    }
    let mut problems = Vec::new();
    for needed in [
        INTERFACE,
        "org.freedesktop.DBus.Introspectable",
        "org.freedesktop.DBus.Properties",
    ] {
        if !interfaces.iter().any(|i| i == needed) {
            problems.push(format!("no interface {needed}"));
        }
    }
    for (name, args_in, args_out) in interface_methods() {
        match methods.iter().find(|m| m.0 == name) {
            None => problems.push(format!("no method {name}")),
            Some(m) if (m.1.as_str(), m.2.as_str()) != (args_in, args_out) => problems.push(format!(
                "{name} is ({}) -> ({}), expected ({args_in}) -> ({args_out})",
                m.1, m.2
            )),
            Some(_) => {}
        }
    }
    if property != Some(("a(ss)".into(), "read".into())) {
        problems.push(format!("property Items is {property:?}, expected a(ss) read"));
    }
    if signal != "s" {
        problems.push(format!("signal Ping carries \"{signal}\", expected \"s\""));
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(format!("introspection XML: {}\n{xml}", problems.join("; "))),
    }
}

/// The error names a server may answer a call with wrong argument types with:
/// InvalidArgs, or the name an object server library documents for it (its
/// own code decodes the arguments; docs/scenarios.md lists these).
fn argument_errors(adapter: &str) -> Vec<&'static str> {
    let mut names = vec!["org.freedesktop.DBus.Error.InvalidArgs"];
    match adapter {
        // zbus 2 to 5: zbus::Error::SignatureMismatch becomes this (zbus 6 and 1 say InvalidArgs).
        "zbus-2" | "zbus-3" | "zbus-4" | "zbus-5" => names.push("org.freedesktop.zbus.Error"),
        // dbus-crossroads 0.5 (dbus-tokio serves the same Crossroads): a TypeMismatchError becomes MethodErr::failed.
        "dbus-0.9" | "dbus-tokio-0.7" => names.push("org.freedesktop.DBus.Error.Failed"),
        _ => {}
    }
    names
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
