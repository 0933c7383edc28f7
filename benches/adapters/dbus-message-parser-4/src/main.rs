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

#[path = "../../../adapter-shared/dbus-message-parser/value_tree.rs"]
mod value_tree;

use value_tree::dict_entry;

struct Parser;

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

fn struct_fields(v: &Value) -> Result<&[Value]> {
    match v {
        Value::Struct(s) => Ok(s.as_ref()),
        other => bail!("expected a struct, got {other:?}"),
    }
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
            Shape::Units { count } => value_tree::digest_units(body, count, d),
            Shape::AsvDict => value_tree::digest_asv_dict(body, d),
        }
    }
}
