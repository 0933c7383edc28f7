//! The object of `proxy/create-call/<server>` as the Python and Ruby programs
//! serve it themselves (benches/programs/python/dbus_matrix_py/proxied.py,
//! benches/programs/ruby/dbus_matrix/proxied.rb: the harness's raw server is
//! Rust, inside the Rust adapters): for every call a
//! proxy may make (Introspect, Peer.Ping, Properties.Get/GetAll/Set of ours
//! and of other interfaces, the counted `Void`, unknown objects and methods,
//! calls without INTERFACE) it answers what the harness's
//! `harness::ipc::proxied::answer` answers, on both servers.

use std::process::{Command, Stdio};

use harness::ipc::proxied::{self as p, ProxyServer, Reply};
use harness::wire::Value as W;
use serde_json::{json, Value};

use crate::common::*;

/// A reply value as the Python side writes it: strings, `["u", 7]` for a
/// variant, `{name: ["u", 7]}` for an `a{sv}`.
fn neutral(v: &W) -> Value {
    match v {
        W::Str(s) => json!(s),
        W::U32(n) => json!(n),
        W::Variant(inner) => json!([inner.signature(), neutral(inner)]),
        W::Array(_, items) => {
            let mut m = serde_json::Map::new();
            for item in items {
                let W::DictEntry(k, v) = item else {
                    panic!("not a dict entry: {item:?}")
                };
                let W::Str(k) = &**k else {
                    panic!("not a string key: {k:?}")
                };
                m.insert(k.clone(), neutral(v));
            }
            Value::Object(m)
        }
        other => panic!("proxied answers no {other:?}"),
    }
}

fn harness_answer(server: ProxyServer, c: &Value) -> Value {
    let args: Vec<W> = c[4]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| W::Str(a.as_str().unwrap().into()))
        .collect();
    match p::answer(
        server,
        c[1].as_str().unwrap(),
        c[2].as_str(),
        c[3].as_str().unwrap(),
        &args,
    ) {
        Reply::Return { values, counted } => {
            let sig: String = values.iter().map(W::signature).collect();
            json!(["return", sig, values.iter().map(neutral).collect::<Vec<_>>(), counted])
        }
        Reply::Error { name, message } => json!(["error", name, message]),
    }
}

const PYTHON: &str = r#"
import json, sys
from dbus_matrix_py import proxied
out = [list(proxied.answer(c[0], c[1], c[2], c[3], c[4])) for c in json.load(sys.stdin)]
print(json.dumps({"answers": out, "xml": {s: proxied.xml(s) for s in ("props", "no-props")},
                  "name": proxied.proxied_name("io.killing.spark.Bench.x")}))
"#;

const RUBY: &str = r#"
require "json"
require "dbus_matrix/proxied"
PX = DbusMatrix::Proxied
out = JSON.parse($stdin.read).map { |c| PX.answer(*c) }
puts JSON.generate({ "answers" => out, "xml" => %w[props no-props].to_h { |s| [s, PX.xml(s)] },
                     "name" => PX.proxied_name("io.killing.spark.Bench.x") })
"#;

#[test]
fn the_python_and_ruby_proxied_objects_answer_as_the_harness() {
    let (path, iface, props) = (p::PROXIED_PATH, p::PROXIED_INTERFACE, "org.freedesktop.DBus.Properties");
    let calls = [
        json!([path, iface, p::PROXIED_METHOD, []]),
        json!([path, null, p::PROXIED_METHOD, []]),
        json!([path, "org.freedesktop.DBus.Introspectable", "Introspect", []]),
        json!([path, null, "Introspect", []]),
        json!([path, "org.freedesktop.DBus.Peer", "Ping", []]),
        json!([path, props, "GetAll", [iface]]),
        json!([path, props, "GetAll", ["org.example.Other"]]),
        json!([path, props, "Get", [iface, p::PROXIED_PROPERTY]]),
        json!([path, props, "Get", [iface, "Nope"]]),
        json!([path, null, "Get", [iface, p::PROXIED_PROPERTY]]),
        json!([path, props, "Set", [iface, p::PROXIED_PROPERTY]]),
        json!([path, props, "Frobnicate", []]),
        json!([path, iface, "Nope", []]),
        json!(["/elsewhere", iface, p::PROXIED_METHOD, []]),
    ];
    let mut cases = vec![];
    for server in ProxyServer::ALL {
        for c in &calls {
            let mut c = c.as_array().unwrap().clone();
            c.insert(0, json!(server.slug()));
            cases.push(Value::Array(c));
        }
    }
    let programs = workspace().join("programs");
    let mut python = Command::new(interpreter_of("jeepney-0.8/adapter.py"));
    python.args(["-c", PYTHON]).env("PYTHONPATH", programs.join("python"));
    let mut ruby = Command::new(interpreter_of("ruby-dbus-0.16/adapter.rb"));
    ruby.arg("-I").arg(programs.join("ruby")).args(["-e", RUBY]);
    for (language, command) in [("Python", python), ("Ruby", ruby)] {
        check_answers(language, command, &cases);
    }
}

/// Runs one language's answers of `cases` and compares each with the harness's.
fn check_answers(language: &str, mut command: Command, cases: &[Value]) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(Value::Array(cases.to_vec()).to_string().as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let got: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    let answers = got["answers"].as_array().unwrap();
    assert_eq!(answers.len(), cases.len());
    for (c, a) in cases.iter().zip(answers) {
        let server = if c[0] == "props" {
            ProxyServer::Props
        } else {
            ProxyServer::NoProps
        };
        let want = harness_answer(server, c);
        assert_eq!(*a, want, "{language}: {c}");
    }
    for server in ProxyServer::ALL {
        assert_eq!(got["xml"][server.slug()], json!(p::proxied_xml(server)), "{language}");
    }
    assert_eq!(
        got["name"],
        json!(p::proxied_name("io.killing.spark.Bench.x")),
        "{language}"
    );
    // Both kinds of answer occur, and exactly the Void calls are counted.
    let counted = answers
        .iter()
        .filter(|a| a[0] == "return" && a[3] == json!(true))
        .count();
    assert_eq!(
        counted, 4,
        "{language}: Void with and without INTERFACE, on both servers"
    );
    assert!(answers
        .iter()
        .any(|a| a[1] == "org.freedesktop.DBus.Error.UnknownInterface"));
}
