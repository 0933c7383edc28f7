//! The reference D-Bus wire codec: written for clarity, not speed, and used to
//! produce the canonical bytes of each scenario and to check what adapters emit.
//! It follows the D-Bus specification's marshalling rules (alignment relative
//! to the start of the message; the body starts 8-aligned, so offsets relative
//! to the body start have the same alignment).

use anyhow::{bail, ensure, Context, Result};

use crate::payload::{self, Body};

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
fn alignment(sig_char: u8) -> usize {
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
    ensure!(!b.is_empty(), "empty signature");
    let end = match b[0] {
        b'a' => {
            let (elem, _) = split_first_type(&sig[1..]).context("array without element type")?;
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
                        ensure!(c == close, "mismatched brackets in {sig:?}");
                        end = Some(i + 1);
                        break;
                    }
                }
            }
            end.with_context(|| format!("unclosed container in {sig:?}"))?
        }
        b'y' | b'b' | b'n' | b'q' | b'i' | b'u' | b'x' | b't' | b'd' | b's' | b'o' | b'g' | b'v' | b'h' => 1,
        c => bail!("unknown type code {:?} in signature {sig:?}", c as char),
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

/// Little-endian writer; `base` is the stream offset of `buf[0]` for alignment.
#[derive(Default)]
pub struct Encoder {
    pub buf: Vec<u8>,
}

impl Encoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn pad(&mut self, align: usize) {
        while !self.buf.len().is_multiple_of(align) {
            self.buf.push(0);
        }
    }

    fn put_u32(&mut self, v: u32) {
        self.pad(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    fn put_string(&mut self, s: &str) {
        self.put_u32(s.len() as u32);
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
    }

    fn put_signature(&mut self, s: &str) {
        self.buf.push(s.len() as u8);
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
    }

    pub fn value(&mut self, v: &Value) {
        match v {
            Value::Byte(x) => self.buf.push(*x),
            Value::Bool(x) => self.put_u32(*x as u32),
            Value::I16(x) => {
                self.pad(2);
                self.buf.extend_from_slice(&x.to_le_bytes())
            }
            Value::U16(x) => {
                self.pad(2);
                self.buf.extend_from_slice(&x.to_le_bytes())
            }
            Value::I32(x) => self.put_u32(*x as u32),
            Value::U32(x) | Value::UnixFd(x) => self.put_u32(*x),
            Value::I64(x) => {
                self.pad(8);
                self.buf.extend_from_slice(&x.to_le_bytes())
            }
            Value::U64(x) => {
                self.pad(8);
                self.buf.extend_from_slice(&x.to_le_bytes())
            }
            Value::F64(x) => {
                self.pad(8);
                self.buf.extend_from_slice(&x.to_le_bytes())
            }
            Value::Str(s) | Value::ObjectPath(s) => self.put_string(s),
            Value::Signature(s) => self.put_signature(s),
            Value::Array(elem, items) => {
                self.put_u32(0);
                let len_at = self.buf.len() - 4;
                // Padding to the element alignment is not part of the array length.
                self.pad(alignment(elem.as_bytes()[0]));
                let start = self.buf.len();
                for item in items {
                    self.value(item);
                }
                let len = (self.buf.len() - start) as u32;
                self.buf[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
            }
            Value::Struct(fields) => {
                self.pad(8);
                for f in fields {
                    self.value(f);
                }
            }
            Value::DictEntry(k, v) => {
                self.pad(8);
                self.value(k);
                self.value(v);
            }
            Value::Variant(inner) => {
                self.put_signature(&inner.signature());
                self.value(inner);
            }
        }
    }
}

/// Reader over a whole message or a body (both start 8-aligned).
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
    big_endian: bool,
}

impl<'a> Decoder<'a> {
    pub fn new(buf: &'a [u8], big_endian: bool) -> Self {
        Decoder {
            buf,
            pos: 0,
            big_endian,
        }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    fn skip_pad(&mut self, align: usize) -> Result<()> {
        while !self.pos.is_multiple_of(align) {
            let b = *self.buf.get(self.pos).context("message ends inside padding")?;
            ensure!(b == 0, "non-zero padding byte at offset {}", self.pos);
            self.pos += 1;
        }
        Ok(())
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).context("length overflow")?;
        ensure!(
            end <= self.buf.len(),
            "message ends at {} but {} more bytes were needed at offset {}",
            self.buf.len(),
            n,
            self.pos
        );
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N]> {
        self.skip_pad(N)?;
        let mut a: [u8; N] = self.take(N)?.try_into().unwrap();
        if self.big_endian {
            a.reverse();
        }
        Ok(a)
    }

    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.fixed::<4>()?))
    }

    fn string(&mut self) -> Result<String> {
        let len = self.u32()? as usize;
        let bytes = self.take(len)?;
        let nul = self.take(1)?;
        ensure!(nul == [0], "string at offset {} is not NUL-terminated", self.pos - 1);
        String::from_utf8(bytes.to_vec()).context("string is not UTF-8")
    }

    fn signature(&mut self) -> Result<String> {
        let len = self.take(1)?[0] as usize;
        let bytes = self.take(len)?;
        ensure!(self.take(1)? == [0], "signature not NUL-terminated");
        String::from_utf8(bytes.to_vec()).context("signature is not ASCII")
    }

    /// Decodes one value of the single complete type `sig`.
    pub fn value(&mut self, sig: &str) -> Result<Value> {
        let code = *sig.as_bytes().first().context("empty type")?;
        Ok(match code {
            b'y' => Value::Byte(self.take(1)?[0]),
            b'b' => match self.u32()? {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                x => bail!("boolean with value {x}"),
            },
            b'n' => Value::I16(i16::from_le_bytes(self.fixed::<2>()?)),
            b'q' => Value::U16(u16::from_le_bytes(self.fixed::<2>()?)),
            b'i' => Value::I32(self.u32()? as i32),
            b'u' => Value::U32(self.u32()?),
            b'h' => Value::UnixFd(self.u32()?),
            b'x' => Value::I64(i64::from_le_bytes(self.fixed::<8>()?)),
            b't' => Value::U64(u64::from_le_bytes(self.fixed::<8>()?)),
            b'd' => Value::F64(f64::from_le_bytes(self.fixed::<8>()?)),
            b's' => Value::Str(self.string()?),
            b'o' => Value::ObjectPath(self.string()?),
            b'g' => Value::Signature(self.signature()?),
            b'v' => {
                let inner_sig = self.signature()?;
                let (single, rest) = split_first_type(&inner_sig)?;
                ensure!(rest.is_empty(), "variant signature {inner_sig:?} is not a single type");
                Value::Variant(Box::new(self.value(single)?))
            }
            b'a' => {
                let elem = &sig[1..];
                let len = self.u32()? as usize;
                self.skip_pad(alignment(elem.as_bytes()[0]))?;
                let end = self.pos + len;
                ensure!(end <= self.buf.len(), "array of {len} bytes runs past the message end");
                let mut items = Vec::new();
                while self.pos < end {
                    items.push(self.value(elem)?);
                }
                ensure!(self.pos == end, "array elements overrun the array length");
                Value::Array(elem.to_string(), items)
            }
            b'(' => {
                self.skip_pad(8)?;
                let inner = &sig[1..sig.len() - 1];
                let mut fields = Vec::new();
                for t in split_types(inner)? {
                    fields.push(self.value(t)?);
                }
                Value::Struct(fields)
            }
            b'{' => {
                self.skip_pad(8)?;
                let inner = split_types(&sig[1..sig.len() - 1])?;
                ensure!(inner.len() == 2, "dict entry {sig:?} must have two types");
                let k = self.value(inner[0])?;
                let v = self.value(inner[1])?;
                Value::DictEntry(Box::new(k), Box::new(v))
            }
            c => bail!("unknown type code {:?}", c as char),
        })
    }
}

/// The fixed part and the fields of a message header.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub endian: u8,
    pub message_type: u8,
    pub flags: u8,
    pub version: u8,
    pub body_len: u32,
    pub serial: u32,
    /// Fields in wire order: (code, value inside the variant).
    pub fields: Vec<(u8, Value)>,
}

impl Header {
    pub fn field(&self, code: u8) -> Option<&Value> {
        self.fields.iter().find(|(c, _)| *c == code).map(|(_, v)| v)
    }

    pub fn field_str(&self, code: u8) -> Option<&str> {
        self.field(code).and_then(Value::as_str)
    }
}

/// A parsed message: header, raw body bytes and decoded body values.
#[derive(Clone, Debug)]
pub struct Message {
    pub header: Header,
    pub body: Vec<u8>,
    pub values: Vec<Value>,
}

/// Parses one complete message; errors if `bytes` holds more or less than one message.
pub fn decode_message(bytes: &[u8]) -> Result<Message> {
    ensure!(
        bytes.len() >= 16,
        "{} bytes is too short for a D-Bus header",
        bytes.len()
    );
    let big_endian = match bytes[0] {
        b'l' => false,
        b'B' => true,
        e => bail!("endianness byte is {e:#04x}, expected 'l' or 'B'"),
    };
    let mut d = Decoder::new(bytes, big_endian);
    d.take(4)?;
    let body_len = d.u32()?;
    let serial = d.u32()?;
    let fields_value = d.value("a(yv)").context("decoding header fields")?;
    let mut fields = Vec::new();
    if let Value::Array(_, items) = fields_value {
        for item in items {
            match item {
                Value::Struct(mut f) if f.len() == 2 => {
                    let v = f.pop().unwrap();
                    let code = f.pop().unwrap();
                    match (code, v) {
                        (Value::Byte(c), Value::Variant(inner)) => fields.push((c, *inner)),
                        other => bail!("malformed header field {other:?}"),
                    }
                }
                other => bail!("malformed header field {other:?}"),
            }
        }
    }
    d.skip_pad(8).context("padding after header")?;
    let body_start = d.position();
    let end = body_start + body_len as usize;
    ensure!(
        end == bytes.len(),
        "header says the body is {body_len} bytes, so the message is {end} bytes, but {} bytes were given",
        bytes.len()
    );
    let header = Header {
        endian: bytes[0],
        message_type: bytes[1],
        flags: bytes[2],
        version: bytes[3],
        body_len,
        serial,
        fields,
    };
    let sig = header.field_str(FIELD_SIGNATURE).unwrap_or("").to_string();
    let body = bytes[body_start..].to_vec();
    let mut bd = Decoder::new(&body, big_endian);
    let mut values = Vec::new();
    for t in split_types(&sig)? {
        values.push(
            bd.value(t)
                .with_context(|| format!("decoding body value of type {t}"))?,
        );
    }
    ensure!(
        bd.position() == body.len(),
        "body has {} trailing bytes",
        body.len() - bd.position()
    );
    Ok(Message { header, body, values })
}

/// Encodes a whole little-endian message from its parts.
pub fn encode_message(message_type: u8, flags: u8, serial: u32, fields: &[(u8, Value)], body: &[Value]) -> Vec<u8> {
    let mut b = Encoder::new();
    for v in body {
        b.value(v);
    }
    let mut h = Encoder::new();
    h.buf.extend_from_slice(&[b'l', message_type, flags, 1]);
    h.buf.extend_from_slice(&(b.buf.len() as u32).to_le_bytes());
    h.buf.extend_from_slice(&serial.to_le_bytes());
    let field_values: Vec<Value> = fields
        .iter()
        .map(|(c, v)| Value::Struct(vec![Value::Byte(*c), Value::Variant(Box::new(v.clone()))]))
        .collect();
    h.value(&Value::Array("(yv)".into(), field_values));
    h.pad(8);
    h.buf.extend_from_slice(&b.buf);
    h.buf
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
mod tests {
    use super::*;
    use crate::payload;

    #[test]
    fn round_trips_every_scenario_body() {
        for body in [
            payload::mixed(),
            payload::big_array(),
            payload::str_array(),
            payload::asv_dict(),
        ] {
            let bytes = canonical_signal(&body);
            let msg = decode_message(&bytes).unwrap();
            assert_eq!(msg.values, body_values(&body));
            assert_eq!(msg.header.fields, signal_fields(&body.signature()));
        }
    }

    #[test]
    fn known_small_message_bytes() {
        // A signal with body "s" = "hi", checked by hand against the specification.
        let bytes = encode_message(
            MESSAGE_SIGNAL,
            0,
            1,
            &[(FIELD_SIGNATURE, Value::Signature("s".into()))],
            &[Value::Str("hi".into())],
        );
        let expected: Vec<u8> = [
            &b"l\x04\x00\x01"[..],
            &7u32.to_le_bytes(),             // body: u32 len + "hi" + NUL
            &1u32.to_le_bytes(),             // serial
            &7u32.to_le_bytes(),             // fields array: one (yv) of 7 bytes (padding not counted)
            &[8, 1, b'g', 0, 1, b's', 0, 0], // code 8, variant "g", value "s", pad to 8
            &[2, 0, 0, 0, b'h', b'i', 0],
        ]
        .concat();
        assert_eq!(bytes, expected);
    }

    #[test]
    fn body_sizes_match_the_independent_figures() {
        // Figures from ../shared/crate-notes.md, computed by hand elsewhere.
        let len = |b: &Body| canonical_signal(b).len() - decode_header_len(b);
        fn decode_header_len(b: &Body) -> usize {
            let bytes = canonical_signal(b);
            bytes.len() - decode_message(&bytes).unwrap().body.len()
        }
        assert_eq!(len(&payload::mixed()), 2713);
        assert_eq!(len(&payload::big_array()), 82001);
        assert_eq!(len(&payload::str_array()), 563081);
    }

    #[test]
    fn rejects_truncated_and_trailing_bytes() {
        let bytes = canonical_signal(&payload::mixed());
        assert!(decode_message(&bytes[..bytes.len() - 1]).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_message(&longer).is_err());
    }
}
