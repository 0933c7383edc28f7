//! dbus-message-parser 4.x: the library has one representation, a dynamic
//! `Value` tree, so that is the idiomatic (and only) path: plain values are
//! converted into `Value`s, `Message::encode` writes the bytes, and
//! `Message::decode` parses them back into a `Value` tree that is walked.
//! It has no transport: IPC scenarios are unsupported.

use anyhow::{bail, Context, Result};
use bytes::{Bytes, BytesMut};
use dbus_message_parser::message::Message;
use dbus_message_parser::value::{Array, Interface, Member, ObjectPath, Struct, Type, Value};
use harness::payload::{self, Body, Unit};
use harness::{Codec, Digest, Shape};

harness::adapter_main!(
    id: "dbus-message-parser-4",
    library: "dbus-message-parser",
    runtime: "none: codec only, no transport",
    codec: Parser,
    ipc: harness::ipc::NoTransport("dbus-message-parser has no transport: it only encodes and decodes messages")
);

struct Parser;

fn dict_entry(k: &str, v: Value) -> Value {
    Value::DictEntry(Box::new((Value::String(k.to_string()), v)))
}

fn push_unit(u: &Unit, out: &mut Vec<Value>) -> Result<()> {
    out.push(Value::String(u.s.clone()));
    out.push(Value::Uint64(u.t));
    out.push(Value::Struct(Struct::try_from(vec![
        Value::Uint64(u.st.0),
        Value::String(u.st.1.clone()),
    ])?));
    let dict = u.dict.iter().map(|(k, v)| dict_entry(k, Value::Int32(*v))).collect();
    out.push(Value::Array(Array::new(
        dict,
        Type::DictEntry(Box::new((Type::String, Type::Int32))),
    )?));
    out.push(Value::Array(Array::new(
        u.at.iter().map(|x| Value::Uint64(*x)).collect(),
        Type::Uint64,
    )?));
    out.push(Value::Array(Array::new(
        u.as_.iter().map(|s| Value::String(s.clone())).collect(),
        Type::String,
    )?));
    Ok(())
}

fn array(v: &Value) -> Result<&[Value]> {
    match v {
        Value::Array(a) => Ok(a.as_ref()),
        other => bail!("expected an array, got {other:?}"),
    }
}

fn string(v: &Value) -> Result<&str> {
    match v {
        Value::String(s) => Ok(s),
        other => bail!("expected a string, got {other:?}"),
    }
}

fn u64_of(v: &Value) -> Result<u64> {
    match v {
        Value::Uint64(x) => Ok(*x),
        other => bail!("expected a u64, got {other:?}"),
    }
}

fn entry(v: &Value) -> Result<&(Value, Value)> {
    match v {
        Value::DictEntry(e) => Ok(e),
        other => bail!("expected a dict entry, got {other:?}"),
    }
}

fn digest_unit(fields: &[Value], d: &mut Digest) -> Result<()> {
    let [s, t, st, dict, at, as_] = fields else {
        bail!("a unit has six fields")
    };
    d.str(string(s)?);
    d.u64(u64_of(t)?);
    let Value::Struct(st) = st else { bail!("expected (ts)") };
    let [st0, st1] = st.as_ref() else {
        bail!("expected two fields in (ts)")
    };
    d.u64(u64_of(st0)?);
    d.str(string(st1)?);
    let dict = array(dict)?;
    for e in dict {
        let (k, v) = entry(e)?;
        d.str(string(k)?);
        let Value::Int32(v) = v else {
            bail!("expected an i32 value")
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
        d.str(string(s)?);
    }
    d.len(as_.len());
    Ok(())
}

impl Codec for Parser {
    type Wire = BytesMut;

    fn marshal(&mut self, body: &Body) -> Result<BytesMut> {
        let mut msg = Message::signal(
            ObjectPath::try_from(payload::PATH)?,
            Interface::try_from(payload::INTERFACE)?,
            Member::try_from(payload::MEMBER)?,
        );
        msg.set_serial(payload::SERIAL);
        let mut values = Vec::new();
        match body {
            Body::Units(units) => {
                for u in units {
                    push_unit(u, &mut values)?;
                }
            }
            Body::AsvDict(entries) => {
                let dict = entries
                    .iter()
                    .map(|(k, v)| dict_entry(k, Value::Variant(Box::new(Value::String(v.clone())))));
                values.push(Value::Array(Array::new(
                    dict.collect(),
                    Type::DictEntry(Box::new((Type::String, Type::Variant))),
                )?));
            }
        }
        for v in values {
            msg.add_value(v);
        }
        msg.encode().context("encoding")
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, d: &mut Digest) -> Result<()> {
        // The decoder takes ownership of a `Bytes`; building it copies the
        // input once, as a socket read into a buffer would.
        let (msg, _) = Message::decode(Bytes::copy_from_slice(bytes)).context("decoding")?;
        let body = msg.get_body();
        match shape {
            Shape::Units { count } => {
                if body.len() != count * 6 {
                    bail!("expected {} values, got {}", count * 6, body.len());
                }
                for unit in body.chunks(6) {
                    digest_unit(unit, d)?;
                }
            }
            Shape::AsvDict => {
                let [dict] = body else { bail!("expected one a{{sv}}") };
                let dict = array(dict)?;
                for e in dict {
                    let (k, v) = entry(e)?;
                    d.str(string(k)?);
                    let Value::Variant(v) = v else {
                        bail!("expected a variant")
                    };
                    d.str(string(v)?);
                }
                d.len(dict.len());
            }
        }
        Ok(())
    }
}
