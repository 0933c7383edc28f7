//! The reference encoder: little-endian, every value aligned as the
//! specification says, arrays with their length patched in afterwards.

use super::{alignment, Value};

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
