//! The reference D-Bus wire codec: written for clarity, not speed, and used to
//! produce the canonical bytes of each scenario and to check what adapters emit.
//! It follows the D-Bus specification's marshalling rules (alignment relative
//! to the start of the message; the body starts 8-aligned, so offsets relative
//! to the body start have the same alignment).

use crate::payload::{self, Body};

mod decode;
mod encode;
mod error;

pub use decode::{decode_message, Decoder, Header, Message};
pub use encode::{encode_message, Encoder};
pub use error::WireError;

/// What the reference codec's decoding and signature parsing return.
pub type Result<T, E = WireError> = std::result::Result<T, E>;

pub const MESSAGE_METHOD_CALL: u8 = 1;
pub const MESSAGE_METHOD_RETURN: u8 = 2;
pub const MESSAGE_ERROR: u8 = 3;
pub const MESSAGE_SIGNAL: u8 = 4;

pub const FLAG_NO_REPLY_EXPECTED: u8 = 0x1;

pub const FIELD_PATH: u8 = 1;
pub const FIELD_INTERFACE: u8 = 2;
pub const FIELD_MEMBER: u8 = 3;
pub const FIELD_ERROR_NAME: u8 = 4;
pub const FIELD_REPLY_SERIAL: u8 = 5;
pub const FIELD_DESTINATION: u8 = 6;
pub const FIELD_SENDER: u8 = 7;
pub const FIELD_SIGNATURE: u8 = 8;
pub const FIELD_UNIX_FDS: u8 = 9;

/// A decoded D-Bus value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Byte(u8),
    Bool(bool),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F64(f64),
    Str(String),
    ObjectPath(String),
    Signature(String),
    UnixFd(u32),
    /// Element signature and elements (the signature is needed for empty arrays).
    Array(String, Vec<Value>),
    Struct(Vec<Value>),
    DictEntry(Box<Value>, Box<Value>),
    Variant(Box<Value>),
}

impl Value {
    /// The single complete type signature of this value.
    pub fn signature(&self) -> String {
        match self {
            Value::Byte(_) => "y".into(),
            Value::Bool(_) => "b".into(),
            Value::I16(_) => "n".into(),
            Value::U16(_) => "q".into(),
            Value::I32(_) => "i".into(),
            Value::U32(_) => "u".into(),
            Value::I64(_) => "x".into(),
            Value::U64(_) => "t".into(),
            Value::F64(_) => "d".into(),
            Value::Str(_) => "s".into(),
            Value::ObjectPath(_) => "o".into(),
            Value::Signature(_) => "g".into(),
            Value::UnixFd(_) => "h".into(),
            Value::Array(elem, _) => format!("a{elem}"),
            Value::Struct(fields) => {
                format!("({})", fields.iter().map(Value::signature).collect::<String>())
            }
            Value::DictEntry(k, v) => format!("{{{}{}}}", k.signature(), v.signature()),
            Value::Variant(_) => "v".into(),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) | Value::ObjectPath(s) | Value::Signature(s) => Some(s),
            _ => None,
        }
    }
}

/// Alignment of the first character of a single complete type.
pub(crate) fn alignment(sig_char: u8) -> usize {
    match sig_char {
        b'y' | b'g' | b'v' => 1,
        b'n' | b'q' => 2,
        b'b' | b'i' | b'u' | b's' | b'o' | b'a' | b'h' => 4,
        b'x' | b't' | b'd' | b'(' | b'{' => 8,
        _ => 1,
    }
}

/// Splits the first single complete type off a signature.
pub fn split_first_type(sig: &str) -> Result<(&str, &str)> {
    let b = sig.as_bytes();
    let Some(&first) = b.first() else {
        return Err(WireError::EmptySignature);
    };
    let end = match first {
        b'a' => {
            let (elem, _) =
                split_first_type(&sig[1..]).map_err(|e| WireError::context("array without element type", e))?;
            1 + elem.len()
        }
        open @ (b'(' | b'{') => {
            let close = if open == b'(' { b')' } else { b'}' };
            let mut depth = 0usize;
            let mut end = None;
            for (i, &c) in b.iter().enumerate() {
                if c == b'(' || c == b'{' {
                    depth += 1;
                } else if c == b')' || c == b'}' {
                    depth -= 1;
                    if depth == 0 {
                        if c != close {
                            return Err(WireError::MismatchedBrackets(sig.into()));
                        }
                        end = Some(i + 1);
                        break;
                    }
                }
            }
            end.ok_or_else(|| WireError::UnclosedContainer(sig.into()))?
        }
        b'y' | b'b' | b'n' | b'q' | b'i' | b'u' | b'x' | b't' | b'd' | b's' | b'o' | b'g' | b'v' | b'h' => 1,
        c => {
            return Err(WireError::UnknownTypeCode {
                code: c as char,
                sig: Some(sig.into()),
            })
        }
    };
    Ok(sig.split_at(end))
}

/// All single complete types of a signature.
pub fn split_types(mut sig: &str) -> Result<Vec<&str>> {
    let mut out = Vec::new();
    while !sig.is_empty() {
        let (first, rest) = split_first_type(sig)?;
        out.push(first);
        sig = rest;
    }
    Ok(out)
}

/// The body of a scenario as reference values.
pub fn body_values(body: &Body) -> Vec<Value> {
    match body {
        Body::Units(units) => units
            .iter()
            .flat_map(|u| {
                [
                    Value::Str(u.s.clone()),
                    Value::U64(u.t),
                    Value::Struct(vec![Value::U64(u.st.0), Value::Str(u.st.1.clone())]),
                    Value::Array(
                        "{si}".into(),
                        u.dict
                            .iter()
                            .map(|(k, v)| Value::DictEntry(Box::new(Value::Str(k.clone())), Box::new(Value::I32(*v))))
                            .collect(),
                    ),
                    Value::Array("t".into(), u.at.iter().map(|x| Value::U64(*x)).collect()),
                    Value::Array("s".into(), u.as_.iter().map(|s| Value::Str(s.clone())).collect()),
                ]
            })
            .collect(),
        Body::AsvDict(entries) => vec![Value::Array(
            "{sv}".into(),
            entries
                .iter()
                .map(|(k, v)| {
                    Value::DictEntry(
                        Box::new(Value::Str(k.clone())),
                        Box::new(Value::Variant(Box::new(Value::Str(v.clone())))),
                    )
                })
                .collect(),
        )],
    }
}

/// The canonical header fields of the test signal, in canonical order.
pub fn signal_fields(signature: &str) -> Vec<(u8, Value)> {
    vec![
        (FIELD_PATH, Value::ObjectPath(payload::PATH.into())),
        (FIELD_INTERFACE, Value::Str(payload::INTERFACE.into())),
        (FIELD_MEMBER, Value::Str(payload::MEMBER.into())),
        (FIELD_SIGNATURE, Value::Signature(signature.into())),
    ]
}

/// The canonical wire bytes of the test signal carrying `body`.
pub fn canonical_signal(body: &Body) -> Vec<u8> {
    encode_message(
        MESSAGE_SIGNAL,
        0,
        payload::SERIAL,
        &signal_fields(&body.signature()),
        &body_values(body),
    )
}

#[cfg(test)]
mod tests;
