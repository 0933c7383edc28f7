//! What kind of message the bus routed, for the per-kind counts of a
//! recorded monitor window: the type, the called or emitted
//! `interface.member`, and which way it went relative to the bus.

use harness::wire;

const BUS_NAME: &str = "org.freedesktop.DBus";

/// `"method_call org.freedesktop.DBus.Hello (to the bus)"`,
/// `"method_return (from the bus)"`, `"signal io.killing.spark.Bench.Ping
/// (between connections)"`; `"undecodable"` when the frame is not a message.
pub fn kind(frame: &[u8]) -> String {
    let Ok(m) = wire::decode_message(frame) else {
        return "undecodable".into();
    };
    let h = &m.header;
    let what = match frame.get(1).copied() {
        Some(wire::MESSAGE_METHOD_CALL) => "method_call",
        Some(wire::MESSAGE_METHOD_RETURN) => "method_return",
        Some(wire::MESSAGE_ERROR) => "error",
        Some(wire::MESSAGE_SIGNAL) => "signal",
        _ => "unknown",
    };
    let name = match (h.field_str(wire::FIELD_INTERFACE), h.field_str(wire::FIELD_MEMBER)) {
        (Some(i), Some(m)) => format!(" {i}.{m}"),
        (None, Some(m)) => format!(" {m}"),
        _ => match h.field_str(wire::FIELD_ERROR_NAME) {
            Some(e) => format!(" {e}"),
            None => String::new(),
        },
    };
    let way = if h.field_str(wire::FIELD_DESTINATION) == Some(BUS_NAME) {
        "to the bus"
    } else if h.field_str(wire::FIELD_SENDER) == Some(BUS_NAME) {
        "from the bus"
    } else {
        "between connections"
    };
    format!("{what}{name} ({way})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::wire::Value;

    #[test]
    fn names_type_member_and_direction() {
        let hello = wire::encode_message(
            wire::MESSAGE_METHOD_CALL,
            0,
            1,
            &[
                (wire::FIELD_PATH, Value::ObjectPath("/org/freedesktop/DBus".into())),
                (wire::FIELD_INTERFACE, Value::Str(BUS_NAME.into())),
                (wire::FIELD_MEMBER, Value::Str("Hello".into())),
                (wire::FIELD_DESTINATION, Value::Str(BUS_NAME.into())),
            ],
            &[],
        );
        assert_eq!(kind(&hello), "method_call org.freedesktop.DBus.Hello (to the bus)");
        let reply = wire::encode_message(
            wire::MESSAGE_METHOD_RETURN,
            0,
            2,
            &[
                (wire::FIELD_REPLY_SERIAL, Value::U32(1)),
                (wire::FIELD_SENDER, Value::Str(":1.7".into())),
            ],
            &[],
        );
        assert_eq!(kind(&reply), "method_return (between connections)");
        assert_eq!(kind(b"not a message"), "undecodable");
    }
}
