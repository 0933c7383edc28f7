//! What a hand-built server answers to any method call, as data: the adapters
//! whose library has no object server (rustbus, dbus-bytestream) ask
//! [`answer`] first and let their library answer only the benchmark methods
//! whose arguments have the right signature. Everything else (Introspect,
//! Peer, Properties, unknown members, wrong arguments) is answered the same
//! way by every such adapter, so standard tools (gdbus, busctl, dbus-send)
//! get a proper reply or a proper error, never a dead server.

use super::introspect::{introspection_xml_of, INTROSPECTABLE, PEER, PROPERTIES};
use super::{interface_methods, items, INTERFACE, OBJECT_PATH, PROPERTY};
use crate::wire::{Encoder, Value};

pub const UNKNOWN_METHOD: &str = "org.freedesktop.DBus.Error.UnknownMethod";
pub const UNKNOWN_INTERFACE: &str = "org.freedesktop.DBus.Error.UnknownInterface";
pub const UNKNOWN_OBJECT: &str = "org.freedesktop.DBus.Error.UnknownObject";
pub const UNKNOWN_PROPERTY: &str = "org.freedesktop.DBus.Error.UnknownProperty";
pub const PROPERTY_READ_ONLY: &str = "org.freedesktop.DBus.Error.PropertyReadOnly";
pub const INVALID_ARGS: &str = "org.freedesktop.DBus.Error.InvalidArgs";
pub const FAILED: &str = "org.freedesktop.DBus.Error.Failed";

/// A method call as received: its header fields.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    pub path: &'a str,
    pub interface: Option<&'a str>,
    pub member: &'a str,
    /// The SIGNATURE header field ("" when absent).
    pub signature: &'a str,
}

/// Decodes the leading string arguments of the call with the adapter's
/// library (asked only for `Properties` calls, whose signature is then checked).
pub type StringArgs<'a> = &'a mut dyn FnMut() -> Result<Vec<String>, String>;

/// What to send back.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// A method of the benchmark interface called with the right argument
    /// signature: the adapter's library decodes the arguments and answers.
    Bench(&'static str),
    /// `Properties.Get` of `Items`: the library sends the value (a variant
    /// holding `a(ss)`), as in the property scenarios; [`items_reply`] is the
    /// harness's encoding of it, for a library that cannot.
    ItemsProperty,
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

/// The reply to `Properties.Get(INTERFACE, Items)`, encoded by the harness.
pub fn items_reply() -> Answer {
    Answer::reply(&[Value::Variant(Box::new(items_value()))])
}

/// The machine id the bus daemon also reads (`Peer.GetMachineId`).
fn machine_id() -> Option<String> {
    ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit()))
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
pub fn answer(call: &Call, string_args: StringArgs) -> Answer {
    route(call, string_args).unwrap_or_else(|error| error)
}

fn route(call: &Call, string_args: StringArgs) -> Result<Answer, Answer> {
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
        return properties(call, string_args);
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

fn properties(call: &Call, string_args: StringArgs) -> Result<Answer, Answer> {
    let expected = match call.member {
        "Get" => "ss",
        "GetAll" => "s",
        "Set" => "ssv",
        other => return Err(Answer::error(UNKNOWN_METHOD, format!("no method {PROPERTIES}.{other}"))),
    };
    expect_signature(call, expected)?;
    // Set's trailing variant is not needed: the interface and property names come first.
    let args = string_args().map_err(|e| Answer::error(INVALID_ARGS, e))?;
    let wanted = if call.member == "GetAll" { 1 } else { 2 };
    if args.len() < wanted {
        return Err(Answer::error(
            INVALID_ARGS,
            format!("{} needs {wanted} string arguments", call.member),
        ));
    }
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
    Ok(Answer::ItemsProperty)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Decoder;

    fn call<'a>(interface: Option<&'a str>, member: &'a str, signature: &'a str) -> Call<'a> {
        Call {
            path: OBJECT_PATH,
            interface,
            member,
            signature,
        }
    }

    /// The answer when the string arguments decode to `args`.
    fn answer_with(c: &Call, args: &[&str]) -> Answer {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        answer(c, &mut || Ok(args.clone()))
    }

    fn no_args(c: &Call) -> Answer {
        answer(c, &mut || panic!("no string arguments expected"))
    }

    fn error_name(a: Answer) -> &'static str {
        match a {
            Answer::Error { name, .. } => name,
            other => panic!("not an error: {other:?}"),
        }
    }

    #[test]
    fn benchmark_methods_are_left_to_the_library_only_with_the_right_arguments() {
        assert_eq!(
            no_args(&call(Some(INTERFACE), "InOutInt", "i")),
            Answer::Bench("InOutInt")
        );
        assert_eq!(no_args(&call(None, "EchoBytes", "ay")), Answer::Bench("EchoBytes"));
        assert_eq!(
            error_name(no_args(&call(Some(INTERFACE), "InOutInt", "s"))),
            INVALID_ARGS
        );
        assert_eq!(error_name(no_args(&call(Some(INTERFACE), "Void", "i"))), INVALID_ARGS);
        assert_eq!(error_name(no_args(&call(Some(INTERFACE), "Nope", ""))), UNKNOWN_METHOD);
        assert_eq!(
            error_name(no_args(&call(Some("org.example.X"), "Void", ""))),
            UNKNOWN_INTERFACE
        );
        assert_eq!(error_name(no_args(&call(None, "Nope", ""))), UNKNOWN_METHOD);
    }

    #[test]
    fn standard_interfaces_are_answered() {
        let Answer::Reply { signature, .. } = no_args(&call(Some(INTROSPECTABLE), "Introspect", "")) else {
            panic!()
        };
        assert_eq!(signature, "s");
        assert_eq!(
            no_args(&call(Some(PEER), "Ping", "")),
            Answer::Reply {
                signature: String::new(),
                body: Vec::new()
            }
        );
        let get = call(Some(PROPERTIES), "Get", "ss");
        assert_eq!(answer_with(&get, &[INTERFACE, PROPERTY]), Answer::ItemsProperty);
        let Answer::Reply { signature, body } = items_reply() else {
            panic!()
        };
        assert_eq!(signature, "v");
        assert_eq!(
            Decoder::new(&body, false).value("v").unwrap(),
            Value::Variant(Box::new(items_value()))
        );
        let get_all = call(Some(PROPERTIES), "GetAll", "s");
        let Answer::Reply { signature, .. } = answer_with(&get_all, &[INTERFACE]) else {
            panic!()
        };
        assert_eq!(signature, "a{sv}");
        assert_eq!(error_name(answer_with(&get, &[INTERFACE, "Nope"])), UNKNOWN_PROPERTY);
        assert_eq!(error_name(answer_with(&get_all, &["org.example.X"])), UNKNOWN_INTERFACE);
        assert_eq!(error_name(no_args(&call(Some(PROPERTIES), "Get", "s"))), INVALID_ARGS);
        let set = call(Some(PROPERTIES), "Set", "ssv");
        assert_eq!(
            error_name(answer_with(&set, &[INTERFACE, PROPERTY])),
            PROPERTY_READ_ONLY
        );
        // Arguments the library could not decode are an error reply, not a panic.
        assert_eq!(
            error_name(answer(&get_all, &mut || Err("truncated".into()))),
            INVALID_ARGS
        );
        assert_eq!(error_name(answer_with(&get, &[INTERFACE])), INVALID_ARGS);
    }

    #[test]
    fn other_paths_have_only_introspection_and_peer() {
        let root = Call {
            path: "/",
            ..call(None, "Introspect", "")
        };
        assert!(matches!(no_args(&root), Answer::Reply { .. }));
        let elsewhere = Call {
            path: "/org",
            ..call(Some(INTERFACE), "Void", "")
        };
        assert_eq!(error_name(no_args(&elsewhere)), UNKNOWN_OBJECT);
        let ping = Call {
            path: "/org",
            ..call(Some(PEER), "Ping", "")
        };
        assert!(matches!(no_args(&ping), Answer::Reply { .. }));
    }
}
