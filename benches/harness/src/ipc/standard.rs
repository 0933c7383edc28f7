//! What a hand-built server answers to any method call, as data: the adapters
//! whose library has no object server (rustbus, dbus-bytestream) ask
//! [`answer`] first and let their library answer only the benchmark methods
//! whose arguments have the right signature. Everything else (Introspect,
//! Peer, Properties, unknown members, wrong arguments) is answered the same
//! way by every such adapter, so standard tools (gdbus, busctl, dbus-send)
//! get a proper reply or a proper error, never a dead server.

use super::introspect::{introspection_xml_of, INTROSPECTABLE, PEER, PROPERTIES};
use super::{interface_methods, items, INTERFACE, OBJECT_PATH, PROPERTY};
use crate::wire::{Decoder, Encoder, Value};

pub const UNKNOWN_METHOD: &str = "org.freedesktop.DBus.Error.UnknownMethod";
pub const UNKNOWN_INTERFACE: &str = "org.freedesktop.DBus.Error.UnknownInterface";
pub const UNKNOWN_OBJECT: &str = "org.freedesktop.DBus.Error.UnknownObject";
pub const UNKNOWN_PROPERTY: &str = "org.freedesktop.DBus.Error.UnknownProperty";
pub const PROPERTY_READ_ONLY: &str = "org.freedesktop.DBus.Error.PropertyReadOnly";
pub const INVALID_ARGS: &str = "org.freedesktop.DBus.Error.InvalidArgs";
pub const FAILED: &str = "org.freedesktop.DBus.Error.Failed";

/// A method call as received: header fields and the raw body.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    pub path: &'a str,
    pub interface: Option<&'a str>,
    pub member: &'a str,
    /// The SIGNATURE header field ("" when absent).
    pub signature: &'a str,
    pub body: &'a [u8],
    pub big_endian: bool,
}

/// What to send back.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// A method of the benchmark interface called with the right argument
    /// signature: the adapter's library decodes the arguments and answers.
    Bench(&'static str),
    /// A method return whose body the harness encoded (little-endian).
    Reply { signature: String, body: Vec<u8> },
    /// An error reply: its ERROR_NAME and a one-string body.
    Error { name: &'static str, message: String },
}

impl Answer {
    fn error(name: &'static str, message: impl Into<String>) -> Answer {
        Answer::Error {
            name,
            message: message.into(),
        }
    }

    fn reply(values: &[Value]) -> Answer {
        let mut e = Encoder::new();
        for v in values {
            e.value(v);
        }
        Answer::Reply {
            signature: values.iter().map(Value::signature).collect(),
            body: e.buf,
        }
    }
}

/// The `Items` value as a reference value (`a(ss)`).
fn items_value() -> Value {
    Value::Array(
        "(ss)".into(),
        items()
            .into_iter()
            .map(|(a, b)| Value::Struct(vec![Value::Str(a), Value::Str(b)]))
            .collect(),
    )
}

/// The machine id the bus daemon also reads (`Peer.GetMachineId`).
fn machine_id() -> Option<String> {
    ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The string arguments of a call whose signature is all `s` (checked by the caller).
fn strings(call: &Call) -> Result<Vec<String>, String> {
    let mut d = Decoder::new(call.body, call.big_endian);
    (0..call.signature.len())
        .map(|_| match d.value("s") {
            Ok(Value::Str(s)) => Ok(s),
            Ok(other) => Err(format!("expected a string, got {other:?}")),
            Err(e) => Err(format!("malformed arguments: {e}")),
        })
        .collect()
}

/// The interface a call without an INTERFACE field means: the first that has the member.
fn interface_of(member: &str) -> Option<&'static str> {
    if interface_methods().iter().any(|(m, _, _)| *m == member) {
        return Some(INTERFACE);
    }
    match member {
        "Introspect" => Some(INTROSPECTABLE),
        "Ping" | "GetMachineId" => Some(PEER),
        "Get" | "GetAll" | "Set" => Some(PROPERTIES),
        _ => None,
    }
}

fn expect_signature(call: &Call, expected: &str) -> Result<(), Answer> {
    if call.signature == expected {
        return Ok(());
    }
    Err(Answer::error(
        INVALID_ARGS,
        format!(
            "{} takes arguments of signature \"{expected}\", not \"{}\"",
            call.member, call.signature
        ),
    ))
}

/// The answer to `call` (see the module documentation).
pub fn answer(call: &Call) -> Answer {
    route(call).unwrap_or_else(|error| error)
}

fn route(call: &Call) -> Result<Answer, Answer> {
    let Some(interface) = call.interface.or_else(|| interface_of(call.member)) else {
        return Err(Answer::error(UNKNOWN_METHOD, format!("no method {}", call.member)));
    };
    if interface == PEER {
        return peer(call);
    }
    if interface == INTROSPECTABLE {
        if call.member != "Introspect" {
            return Err(Answer::error(
                UNKNOWN_METHOD,
                format!("no method {interface}.{}", call.member),
            ));
        }
        expect_signature(call, "")?;
        let xml = introspection_xml_of(call.path)
            .ok_or_else(|| Answer::error(UNKNOWN_OBJECT, format!("no object at {}", call.path)))?;
        return Ok(Answer::reply(&[Value::Str(xml)]));
    }
    if call.path != OBJECT_PATH {
        return Err(Answer::error(UNKNOWN_OBJECT, format!("no object at {}", call.path)));
    }
    if interface == PROPERTIES {
        return properties(call);
    }
    if interface != INTERFACE {
        return Err(Answer::error(
            UNKNOWN_INTERFACE,
            format!("no interface {interface} at {OBJECT_PATH}"),
        ));
    }
    let Some(&(member, args_in, _)) = interface_methods().iter().find(|(m, _, _)| *m == call.member) else {
        return Err(Answer::error(
            UNKNOWN_METHOD,
            format!("no method {INTERFACE}.{}", call.member),
        ));
    };
    expect_signature(call, args_in)?;
    Ok(Answer::Bench(member))
}

fn peer(call: &Call) -> Result<Answer, Answer> {
    match call.member {
        "Ping" => {
            expect_signature(call, "")?;
            Ok(Answer::reply(&[]))
        }
        "GetMachineId" => {
            expect_signature(call, "")?;
            let id = machine_id().ok_or_else(|| Answer::error(FAILED, "this machine has no machine id"))?;
            Ok(Answer::reply(&[Value::Str(id)]))
        }
        other => Err(Answer::error(UNKNOWN_METHOD, format!("no method {PEER}.{other}"))),
    }
}

fn properties(call: &Call) -> Result<Answer, Answer> {
    let expected = match call.member {
        "Get" => "ss",
        "GetAll" => "s",
        "Set" => "ssv",
        other => return Err(Answer::error(UNKNOWN_METHOD, format!("no method {PROPERTIES}.{other}"))),
    };
    expect_signature(call, expected)?;
    // Set's trailing variant is not needed: the interface and property names come first.
    let names_only = Call {
        signature: if call.member == "Set" { "ss" } else { expected },
        ..*call
    };
    let args = strings(&names_only).map_err(|e| Answer::error(INVALID_ARGS, e))?;
    if args[0] != INTERFACE {
        return Err(Answer::error(
            UNKNOWN_INTERFACE,
            format!("no interface {} at {OBJECT_PATH}", args[0]),
        ));
    }
    if call.member == "GetAll" {
        let all = Value::Array(
            "{sv}".into(),
            vec![Value::DictEntry(
                Box::new(Value::Str(PROPERTY.into())),
                Box::new(Value::Variant(Box::new(items_value()))),
            )],
        );
        return Ok(Answer::reply(&[all]));
    }
    if args[1] != PROPERTY {
        return Err(Answer::error(
            UNKNOWN_PROPERTY,
            format!("no property {INTERFACE}.{}", args[1]),
        ));
    }
    if call.member == "Set" {
        return Err(Answer::error(
            PROPERTY_READ_ONLY,
            format!("{INTERFACE}.{PROPERTY} is read-only"),
        ));
    }
    Ok(Answer::reply(&[Value::Variant(Box::new(items_value()))]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Encoder;

    fn call<'a>(interface: Option<&'a str>, member: &'a str, signature: &'a str, body: &'a [u8]) -> Call<'a> {
        Call {
            path: OBJECT_PATH,
            interface,
            member,
            signature,
            body,
            big_endian: false,
        }
    }

    fn body(values: &[Value]) -> Vec<u8> {
        let mut e = Encoder::new();
        values.iter().for_each(|v| e.value(v));
        e.buf
    }

    fn error_name(a: Answer) -> &'static str {
        match a {
            Answer::Error { name, .. } => name,
            other => panic!("not an error: {other:?}"),
        }
    }

    #[test]
    fn benchmark_methods_are_left_to_the_library_only_with_the_right_arguments() {
        let seven = body(&[Value::I32(7)]);
        assert_eq!(
            answer(&call(Some(INTERFACE), "InOutInt", "i", &seven)),
            Answer::Bench("InOutInt")
        );
        assert_eq!(answer(&call(None, "EchoBytes", "ay", &[])), Answer::Bench("EchoBytes"));
        assert_eq!(
            error_name(answer(&call(Some(INTERFACE), "InOutInt", "s", &[]))),
            INVALID_ARGS
        );
        assert_eq!(
            error_name(answer(&call(Some(INTERFACE), "Void", "i", &seven))),
            INVALID_ARGS
        );
        assert_eq!(
            error_name(answer(&call(Some(INTERFACE), "Nope", "", &[]))),
            UNKNOWN_METHOD
        );
        assert_eq!(
            error_name(answer(&call(Some("org.example.X"), "Void", "", &[]))),
            UNKNOWN_INTERFACE
        );
        assert_eq!(error_name(answer(&call(None, "Nope", "", &[]))), UNKNOWN_METHOD);
    }

    #[test]
    fn standard_interfaces_are_answered() {
        let Answer::Reply { signature, .. } = answer(&call(Some(INTROSPECTABLE), "Introspect", "", &[])) else {
            panic!()
        };
        assert_eq!(signature, "s");
        assert_eq!(
            answer(&call(Some(PEER), "Ping", "", &[])),
            Answer::Reply {
                signature: String::new(),
                body: Vec::new()
            }
        );
        let get = body(&[Value::Str(INTERFACE.into()), Value::Str(PROPERTY.into())]);
        let Answer::Reply { signature, body: b } = answer(&call(Some(PROPERTIES), "Get", "ss", &get)) else {
            panic!()
        };
        assert_eq!(signature, "v");
        assert_eq!(
            Decoder::new(&b, false).value("v").unwrap(),
            Value::Variant(Box::new(items_value()))
        );
        let all = body(&[Value::Str(INTERFACE.into())]);
        let Answer::Reply { signature, .. } = answer(&call(Some(PROPERTIES), "GetAll", "s", &all)) else {
            panic!()
        };
        assert_eq!(signature, "a{sv}");
        let other = body(&[Value::Str(INTERFACE.into()), Value::Str("Nope".into())]);
        assert_eq!(
            error_name(answer(&call(Some(PROPERTIES), "Get", "ss", &other))),
            UNKNOWN_PROPERTY
        );
        let iface = body(&[Value::Str("org.example.X".into())]);
        assert_eq!(
            error_name(answer(&call(Some(PROPERTIES), "GetAll", "s", &iface))),
            UNKNOWN_INTERFACE
        );
        assert_eq!(
            error_name(answer(&call(Some(PROPERTIES), "Get", "s", &iface))),
            INVALID_ARGS
        );
        // A truncated body is an error reply, not a panic.
        assert_eq!(
            error_name(answer(&call(Some(PROPERTIES), "GetAll", "s", &[9, 0]))),
            INVALID_ARGS
        );
    }

    #[test]
    fn other_paths_have_only_introspection_and_peer() {
        let root = Call {
            path: "/",
            ..call(None, "Introspect", "", &[])
        };
        assert!(matches!(answer(&root), Answer::Reply { .. }));
        let elsewhere = Call {
            path: "/org",
            ..call(Some(INTERFACE), "Void", "", &[])
        };
        assert_eq!(error_name(answer(&elsewhere)), UNKNOWN_OBJECT);
        let ping = Call {
            path: "/org",
            ..call(Some(PEER), "Ping", "", &[])
        };
        assert!(matches!(answer(&ping), Answer::Reply { .. }));
    }
}
