//! dbus-bytestream 0.1.x (2015): messages are built with `message::create_signal`
//! and `add_arg` (its `Marshal` trait covers strings, integers and `Vec`s; structs
//! and dict entries exist only as dbus-serialize `Value`s), `dbus_encode` writes
//! the header and the body is appended, as `Connection::send` does. Parsing
//! follows `Connection::read_msg`, with the crate's public `demarshal` decoder
//! producing a `Value` tree that is walked.
//!
//! Dicts: dbus-serialize's `Dictionary` is a `HashMap`, which would lose the
//! wire order both ways. Dict entries have the same wire layout as structs, so
//! they are built as, and decoded into, `Struct`s (signature `{..}` when
//! encoding; `(..)` when decoding, as the decoder turns `{..}` into a map).

use anyhow::{bail, ensure, Context, Result};
use dbus_bytestream::demarshal::demarshal;
use dbus_bytestream::marshal::Marshal;
use dbus_bytestream::message::{self, HeaderField, Message, HEADER_FIELD_SIGNATURE};
use dbus_serialize::types::{Array, BasicValue, Signature, Struct, Value};
use harness::payload::{self, Body, Unit};
use harness::scenario::{Kind, Scenario};
use harness::{Codec, Digest, Shape};

mod apps;
mod ipc;
mod storm;
mod subscriptions;

harness::adapter_main!(
    id: "dbus-bytestream-0.1",
    library: "dbus-bytestream",
    runtime: "blocking: the calling thread",
    codec: Bytestream,
    ipc: ipc::BytestreamIpc
);

struct Bytestream;

/// Checked with this adapter: the encoder writes `0x112e71` where the body needs `0x112e6d`.
const ASV_ENCODING: &str = "dbus-bytestream 0.1.4's array encoder (`impl Marshal for Vec<T>`) counts the padding \
     before the first element in the array length; an a{sv} at body offset 0 gets a length 4 bytes too long \
     (invalid D-Bus). The other bodies happen to start their 8-aligned arrays at 8-aligned offsets.";

fn string(s: &str) -> Value {
    Value::BasicValue(BasicValue::String(s.to_owned()))
}

fn structure(objects: Vec<Value>, signature: &str) -> Value {
    Value::Struct(Struct {
        objects,
        signature: Signature(signature.to_owned()),
    })
}

pub(crate) fn add_unit(msg: Message, u: &Unit) -> Message {
    let st = structure(
        vec![Value::BasicValue(BasicValue::Uint64(u.st.0)), string(&u.st.1)],
        "(ts)",
    );
    let entries = u
        .dict
        .iter()
        .map(|(k, v)| structure(vec![string(k), Value::BasicValue(BasicValue::Int32(*v))], "{si}"))
        .collect();
    let dict = Value::Array(Array::new_with_sig(entries, "a{si}".to_owned()));
    msg.add_arg(&u.s)
        .add_arg(&u.t)
        .add_arg(&st)
        .add_arg(&dict)
        .add_arg(&u.at)
        .add_arg(&u.as_)
}

// ---- demarshal ----

/// As `Message::get_body`, except that dict entries are read as structs: the library's
/// `demarshal` sends `{` to `demarshal_struct`, which reads members until `)` and fails
/// on `}` with BadSignature. The body as one struct of its arguments.
pub(crate) fn body_with_dicts(msg: &Message) -> Result<Value> {
    body_as(msg, header_signature(&msg.headers)?)
}

/// The body's leading arguments `signature` (a prefix of the message's), dict entries
/// read as structs ([`body_with_dicts`]), as one struct.
pub(crate) fn body_as(msg: &Message, signature: &str) -> Result<Value> {
    let mut sig = format!("({})", signature.replace('{', "(").replace('}', ")"));
    let mut body = msg.body.clone();
    let mut offset = 0;
    demarshal(&mut body, &mut offset, &mut sig).map_err(|e| anyhow::anyhow!("body: {e}"))
}

pub(crate) fn header_signature(headers: &[HeaderField]) -> Result<&str> {
    let field = headers
        .iter()
        .find(|f| f.0 == HEADER_FIELD_SIGNATURE)
        .context("no signature header field")?;
    match &*field.1.object {
        Value::BasicValue(BasicValue::Signature(s)) => Ok(&s.0),
        other => bail!("signature field holds {other:?}"),
    }
}

/// The fixed header and the header fields, decoded as `Connection::read_msg` does.
fn parse(bytes: &[u8]) -> Result<Message> {
    ensure!(bytes.len() >= 16, "message too short");
    let mut offset = 0;
    let fixed = demarshal(&mut bytes[..12].to_vec(), &mut offset, &mut "(yyyyuu)".to_owned())
        .map_err(|e| anyhow::anyhow!("fixed header: {e}"))?;
    let Value::Struct(fixed) = fixed else {
        bail!("fixed header is not a struct")
    };
    let [endian, typ, flags, version, body_len, serial] = &fixed.objects[..] else {
        bail!("fixed header has {} fields", fixed.objects.len())
    };
    let byte = |v: &Value| match v {
        Value::BasicValue(BasicValue::Byte(b)) => Ok(*b),
        other => bail!("expected a byte, got {other:?}"),
    };
    let u32_of = |v: &Value| match v {
        Value::BasicValue(BasicValue::Uint32(x)) => Ok(*x as usize),
        other => bail!("expected a u32, got {other:?}"),
    };
    ensure!(byte(endian)? == b'l', "only little endian is decoded");
    let fields_len = u32::from_le_bytes(bytes[12..16].try_into()?) as usize;
    let fields_end = 16 + fields_len;
    ensure!(bytes.len() >= fields_end, "message too short");
    // The decoder continues from `offset` 12 over a buffer starting at the fields.
    let fields = demarshal(
        &mut bytes[12..fields_end].to_vec(),
        &mut offset,
        &mut "a(yv)".to_owned(),
    )
    .map_err(|e| anyhow::anyhow!("header fields: {e}"))?;
    let Value::Array(fields) = fields else {
        bail!("header fields are not an array")
    };
    let mut headers = Vec::with_capacity(fields.objects.len());
    for f in fields.objects {
        let Value::Struct(mut f) = f else {
            bail!("header field is not a struct")
        };
        let (Value::Variant(v), Value::BasicValue(BasicValue::Byte(code))) = (f.objects.remove(1), f.objects.remove(0))
        else {
            bail!("header field is not (yv)")
        };
        headers.push(HeaderField(code, v));
    }
    let body_start = fields_end.next_multiple_of(8);
    let body = bytes
        .get(body_start..body_start + u32_of(body_len)?)
        .context("message shorter than its body length")?;
    // `Message` has a private cache field: fill a default one.
    let mut msg = Message::default();
    msg.message_type = message::MessageType(byte(typ)?);
    msg.flags = byte(flags)?;
    msg.version = byte(version)?;
    msg.serial = u32_of(serial)? as u32;
    msg.headers = headers;
    msg.body = body.to_vec();
    Ok(msg)
}

fn array(v: &Value) -> Result<&[Value]> {
    match v {
        Value::Array(a) => Ok(&a.objects),
        other => bail!("expected an array, got {other:?}"),
    }
}

fn fields(v: &Value) -> Result<&[Value]> {
    match v {
        Value::Struct(s) => Ok(&s.objects),
        other => bail!("expected a struct, got {other:?}"),
    }
}

fn string_of(v: &Value) -> Result<&str> {
    match v {
        Value::BasicValue(BasicValue::String(s)) => Ok(s),
        other => bail!("expected a string, got {other:?}"),
    }
}

fn u64_of(v: &Value) -> Result<u64> {
    match v {
        Value::BasicValue(BasicValue::Uint64(x)) => Ok(*x),
        other => bail!("expected a u64, got {other:?}"),
    }
}

fn digest_unit(unit: &[Value], d: &mut Digest) -> Result<()> {
    let [s, t, st, dict, at, as_] = unit else {
        bail!("a unit has six fields")
    };
    d.str(string_of(s)?);
    d.u64(u64_of(t)?);
    let [st0, st1] = fields(st)? else {
        bail!("expected (ts)")
    };
    d.u64(u64_of(st0)?);
    d.str(string_of(st1)?);
    let dict = array(dict)?;
    for e in dict {
        let [k, v] = fields(e)? else {
            bail!("expected a dict entry")
        };
        d.str(string_of(k)?);
        let Value::BasicValue(BasicValue::Int32(v)) = v else {
            bail!("expected an i32, got {v:?}")
        };
        d.i32(*v);
    }
    d.len(dict.len());
    let at = array(at)?;
    for x in at {
        d.u64(u64_of(x)?);
    }
    d.len(at.len());
    let as_ = array(as_)?;
    for s in as_ {
        d.str(string_of(s)?);
    }
    d.len(as_.len());
    Ok(())
}

impl Codec for Bytestream {
    type Wire = Vec<u8>;

    fn marshal(&mut self, body: &Body) -> Result<Vec<u8>> {
        let mut msg = message::create_signal(payload::PATH, payload::INTERFACE, payload::MEMBER);
        msg.serial = payload::SERIAL;
        match body {
            Body::Units(units) => {
                for u in units {
                    msg = add_unit(msg, u);
                }
            }
            Body::AsvDict(_) => bail!(ASV_ENCODING),
        }
        let mut wire = Vec::new();
        msg.dbus_encode(&mut wire);
        wire.extend_from_slice(&msg.body);
        Ok(wire)
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, d: &mut Digest) -> Result<()> {
        let msg = parse(bytes)?;
        let body = body_with_dicts(&msg)?;
        let body = fields(&body)?;
        match shape {
            Shape::Units { count } => {
                ensure!(
                    body.len() == count * 6,
                    "expected {} values, got {}",
                    count * 6,
                    body.len()
                );
                for unit in body.chunks(6) {
                    digest_unit(unit, d)?;
                }
            }
            Shape::AsvDict => {
                let [dict] = body else { bail!("expected one a{{sv}}") };
                let dict = array(dict)?;
                for e in dict {
                    let [k, v] = fields(e)? else {
                        bail!("expected a dict entry")
                    };
                    d.str(string_of(k)?);
                    let Value::Variant(v) = v else {
                        bail!("expected a variant, got {v:?}")
                    };
                    d.str(string_of(&v.object)?);
                }
                d.len(dict.len());
            }
        }
        Ok(())
    }

    fn unsupported(&self, scenario: &Scenario) -> Option<String> {
        (scenario.kind == Kind::Marshal && scenario.body().asv().is_some()).then(|| ASV_ENCODING.to_string())
    }
}
