//! The object every library builds its proxy for in `proxy/create-call/<server>`
//! (issue 31, item 5): what it is and what it answers, as data. It is served by
//! the harness's own raw connection ([`super::raw_server`]) inside the client
//! process, so every library's proxy meets the same server, and the server can
//! be one without the `org.freedesktop.DBus.Properties` interface, which no
//! object server of the libraries lets one write (zbus and sd-bus answer
//! Properties on every object they serve).

use super::introspect::{DOCTYPE, INTROSPECTABLE, INTROSPECTABLE_XML, PEER, PROPERTIES, PROPERTIES_XML};
use super::standard::{PROPERTY_READ_ONLY, UNKNOWN_INTERFACE, UNKNOWN_METHOD, UNKNOWN_OBJECT, UNKNOWN_PROPERTY};
use crate::wire::Value;

/// The well-known name the server owns and every client calls, under the
/// adapter's service name (`service_name`: `Transport::Bus`'s): the generated
/// bus policy lets method calls through to listed names only, never to a
/// unique name (the runner lists this one: [`super::application::served_names`]).
pub fn proxied_name(service_name: &str) -> String {
    format!("{service_name}.Proxied")
}

/// Where the object is.
pub const PROXIED_PATH: &str = "/io/killing/spark/proxied";
/// Its interface.
pub const PROXIED_INTERFACE: &str = "io.killing.spark.Proxied";
/// Its one method: no arguments, an empty reply (the call each operation makes).
pub const PROXIED_METHOD: &str = "Void";
/// Its one property where it has properties: `u`, read-only.
pub const PROXIED_PROPERTY: &str = "Count";
/// The property's value.
pub const PROXIED_COUNT: u32 = 7;

/// The two servers of `proxy/create-call/<server>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxyServer {
    /// The object has the property and answers `org.freedesktop.DBus.Properties`.
    Props,
    /// No property and no Properties interface: `Get`/`GetAll` get `UnknownInterface`.
    NoProps,
}

impl ProxyServer {
    pub const ALL: [ProxyServer; 2] = [ProxyServer::Props, ProxyServer::NoProps];

    /// The part of the scenario id after `proxy/create-call/`.
    pub fn slug(self) -> &'static str {
        match self {
            ProxyServer::Props => "props",
            ProxyServer::NoProps => "no-props",
        }
    }
}

/// The introspection XML of the object as `server` serves it.
pub fn proxied_xml(server: ProxyServer) -> String {
    let (property, properties) = match server {
        ProxyServer::Props => (
            format!("    <property name=\"{PROXIED_PROPERTY}\" type=\"u\" access=\"read\"/>\n"),
            PROPERTIES_XML,
        ),
        ProxyServer::NoProps => (String::new(), ""),
    };
    format!(
        "{DOCTYPE}<node>\n  <interface name=\"{PROXIED_INTERFACE}\">\n    <method name=\"{PROXIED_METHOD}\"/>\n\
         {property}  </interface>\n{INTROSPECTABLE_XML}{properties}</node>\n"
    )
}

/// What the server sends back to a method call.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// A method return with these values. `counted`: the operation's own call
    /// ([`PROXIED_METHOD`]), which the server tallies.
    Return { values: Vec<Value>, counted: bool },
    /// An error reply: its name and a one-string body.
    Error { name: &'static str, message: String },
}

fn ret(values: Vec<Value>) -> Reply {
    Reply::Return { values, counted: false }
}

fn error(name: &'static str, message: String) -> Reply {
    Reply::Error { name, message }
}

fn count_variant() -> Value {
    Value::Variant(Box::new(Value::U32(PROXIED_COUNT)))
}

/// The answer of `server` to a call of `interface.member` on `path` whose
/// arguments decoded to `args` (a call without INTERFACE means the first
/// interface that has the member).
pub fn answer(server: ProxyServer, path: &str, interface: Option<&str>, member: &str, args: &[Value]) -> Reply {
    if path != PROXIED_PATH {
        return error(UNKNOWN_OBJECT, format!("no object at {path}"));
    }
    let interface = interface.unwrap_or(match member {
        "Introspect" => INTROSPECTABLE,
        "Ping" | "GetMachineId" => PEER,
        "Get" | "GetAll" | "Set" => PROPERTIES,
        _ => PROXIED_INTERFACE,
    });
    match (interface, member) {
        (PROXIED_INTERFACE, PROXIED_METHOD) => Reply::Return {
            values: Vec::new(),
            counted: true,
        },
        (INTROSPECTABLE, "Introspect") => ret(vec![Value::Str(proxied_xml(server))]),
        (PEER, "Ping") => ret(Vec::new()),
        (PROPERTIES, _) if server == ProxyServer::NoProps => error(
            UNKNOWN_INTERFACE,
            format!("no interface {PROPERTIES} at {PROXIED_PATH}"),
        ),
        (PROPERTIES, m) => properties(m, args),
        (i, m) => error(UNKNOWN_METHOD, format!("no method {i}.{m} at {PROXIED_PATH}")),
    }
}

fn properties(member: &str, args: &[Value]) -> Reply {
    let iface = args.first().and_then(Value::as_str).unwrap_or_default();
    let name = args.get(1).and_then(Value::as_str).unwrap_or_default();
    let ours = iface == PROXIED_INTERFACE;
    match member {
        "GetAll" if ours => ret(vec![Value::Array(
            "{sv}".into(),
            vec![Value::DictEntry(
                Box::new(Value::Str(PROXIED_PROPERTY.into())),
                Box::new(count_variant()),
            )],
        )]),
        // Any other interface of the object has no properties.
        "GetAll" => ret(vec![Value::Array("{sv}".into(), Vec::new())]),
        "Get" if ours && name == PROXIED_PROPERTY => ret(vec![count_variant()]),
        "Get" => error(UNKNOWN_PROPERTY, format!("no property {iface}.{name}")),
        "Set" => error(PROPERTY_READ_ONLY, format!("{iface}.{name} is read-only")),
        m => error(UNKNOWN_METHOD, format!("no method {PROPERTIES}.{m}")),
    }
}
