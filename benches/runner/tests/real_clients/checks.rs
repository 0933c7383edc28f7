//! What `drive` checks of a server's answers to the standard tools: the
//! introspection XML against the harness's table, the error names of wrong
//! calls, and a terabyte-sized fd sent by jeepney.

use crate::common::*;

use std::process::{Command, Output, Stdio};

use harness::ipc::{interface_methods, INTERFACE, OBJECT_PATH};

/// `ReadFd` of a sparse 1 TiB memfd, sent by jeepney (Debian's
/// python3-jeepney: busctl, gdbus and dbus-send cannot pass an fd). Prints
/// the reply's error name and exits 0 on an error reply; 1 on a return; a
/// traceback (no reply, a closed connection) otherwise.
pub(super) fn read_fd_of_a_terabyte(address: &str, name: &str) -> Output {
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
    Command::new(interpreter_of("jeepney-0.8/adapter.py"))
        .args(["-c", CLIENT, address, name, OBJECT_PATH])
        .args([
            harness::ipc::fd_passing::FD_INTERFACE,
            harness::ipc::fd_passing::READ_FD,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

pub(super) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

pub(super) fn succeeded(what: &str, o: &Output) -> Result<String, String> {
    if o.status.success() {
        Ok(stdout(o))
    } else {
        Err(format!("{what} failed ({}): {}", o.status, text(o).trim()))
    }
}

/// The call must fail with one of `names` as its error name (dbus-send prints it on stderr).
pub(super) fn failed_with(what: &str, o: &Output, names: &[&str]) -> Result<(), String> {
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
pub(super) fn check_introspection(xml: &str) -> Result<(), String> {
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
pub(super) fn argument_errors(adapter: &str) -> Vec<&'static str> {
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
