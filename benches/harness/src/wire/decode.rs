//! The reference decoder: either byte order, every length, padding byte and
//! terminator checked, so that what it accepts is one well-formed message.

use super::{alignment, split_first_type, split_types, Result, Value, WireError, FIELD_SIGNATURE};

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
            let b = *self.buf.get(self.pos).ok_or(WireError::EndsInPadding)?;
            if b != 0 {
                return Err(WireError::NonZeroPadding { offset: self.pos });
            }
            self.pos += 1;
        }
        Ok(())
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(WireError::LengthOverflow)?;
        if end > self.buf.len() {
            return Err(WireError::Truncated {
                len: self.buf.len(),
                needed: n,
                offset: self.pos,
            });
        }
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
        if nul != [0] {
            return Err(WireError::StringNotTerminated { offset: self.pos - 1 });
        }
        String::from_utf8(bytes.to_vec()).map_err(|_| WireError::NotUtf8 { what: "string" })
    }

    fn signature(&mut self) -> Result<String> {
        let len = self.take(1)?[0] as usize;
        let bytes = self.take(len)?;
        if self.take(1)? != [0] {
            return Err(WireError::SignatureNotTerminated);
        }
        String::from_utf8(bytes.to_vec()).map_err(|_| WireError::NotUtf8 { what: "signature" })
    }

    /// Decodes one value of the single complete type `sig`.
    pub fn value(&mut self, sig: &str) -> Result<Value> {
        let code = *sig.as_bytes().first().ok_or(WireError::EmptyType)?;
        Ok(match code {
            b'y' => Value::Byte(self.take(1)?[0]),
            b'b' => match self.u32()? {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                x => return Err(WireError::BadBoolean(x)),
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
                if !rest.is_empty() {
                    return Err(WireError::VariantNotSingle(inner_sig));
                }
                Value::Variant(Box::new(self.value(single)?))
            }
            b'a' => {
                let elem = &sig[1..];
                let len = self.u32()? as usize;
                self.skip_pad(alignment(elem.as_bytes()[0]))?;
                let end = self.pos + len;
                if end > self.buf.len() {
                    return Err(WireError::ArrayPastEnd { len });
                }
                let mut items = Vec::new();
                while self.pos < end {
                    items.push(self.value(elem)?);
                }
                if self.pos != end {
                    return Err(WireError::ArrayOverrun);
                }
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
                if inner.len() != 2 {
                    return Err(WireError::DictEntryArity(sig.into()));
                }
                let k = self.value(inner[0])?;
                let v = self.value(inner[1])?;
                Value::DictEntry(Box::new(k), Box::new(v))
            }
            c => {
                return Err(WireError::UnknownTypeCode {
                    code: c as char,
                    sig: None,
                })
            }
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
    if bytes.len() < 16 {
        return Err(WireError::TooShort(bytes.len()));
    }
    let big_endian = match bytes[0] {
        b'l' => false,
        b'B' => true,
        e => return Err(WireError::BadEndianness(e)),
    };
    let mut d = Decoder::new(bytes, big_endian);
    d.take(4)?;
    let body_len = d.u32()?;
    let serial = d.u32()?;
    let fields_value = d
        .value("a(yv)")
        .map_err(|e| WireError::context("decoding header fields", e))?;
    let mut fields = Vec::new();
    if let Value::Array(_, items) = fields_value {
        for item in items {
            match item {
                Value::Struct(mut f) if f.len() == 2 => {
                    let v = f.pop().unwrap();
                    let code = f.pop().unwrap();
                    match (code, v) {
                        (Value::Byte(c), Value::Variant(inner)) => fields.push((c, *inner)),
                        other => return Err(WireError::MalformedHeaderField(format!("{other:?}"))),
                    }
                }
                other => return Err(WireError::MalformedHeaderField(format!("{other:?}"))),
            }
        }
    }
    d.skip_pad(8)
        .map_err(|e| WireError::context("padding after header", e))?;
    let body_start = d.position();
    let end = body_start + body_len as usize;
    if end != bytes.len() {
        return Err(WireError::LengthMismatch {
            body_len,
            end,
            given: bytes.len(),
        });
    }
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
                .map_err(|e| WireError::context(format!("decoding body value of type {t}"), e))?,
        );
    }
    if bd.position() != body.len() {
        return Err(WireError::TrailingBytes(body.len() - bd.position()));
    }
    Ok(Message { header, body, values })
}
