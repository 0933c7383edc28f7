//! dbus-async 2.0: a pure-Rust async connection (Tokio 0.3) that carries
//! dbus-message-parser messages. dbus-async 2.0.0 depends on dbus-message-parser
//! 3.x (^3.1), not on the 4.x of the dbus-message-parser-4 row, so the codec
//! cells use dbus-message-parser 3.1.0's API: a dynamic `Value` tree (arrays are
//! `Value::Array(values, element signature)`), `Encoder::message` into a
//! `BytesMut` and `Decoder::message` from a borrowed slice. Reading the tree is
//! adapter-shared/dbus-message-parser/value_tree.rs, which dbus-message-parser-4
//! compiles too (the variants it reads are the same in both majors). IPC: see `ipc`.

use std::convert::TryFrom;

use anyhow::{anyhow, bail, Context, Result};
use bytes::BytesMut;
use dbus_message_parser::{Decoder, Encoder, Interface, Member, Message, ObjectPath, Value};
use harness::payload::{self, Body, Unit};
use harness::{Codec, Digest, Shape};

harness::adapter_main!(
    id: "dbus-async-2",
    library: "dbus-async",
    runtime: ipc::RUNTIME,
    codec: Parser,
    ipc: ipc::DbusAsyncIpc::default()
);

mod ipc;
#[path = "../../../adapter-shared/dbus-message-parser/value_tree.rs"]
mod value_tree;

use value_tree::dict_entry;

struct Parser;

fn array(v: &Value) -> Result<&[Value]> {
    match v {
        Value::Array(a, _) => Ok(a),
        other => bail!("expected an array, got {other:?}"),
    }
}

fn struct_fields(v: &Value) -> Result<&[Value]> {
    match v {
        Value::Struct(s) => Ok(s),
        other => bail!("expected a struct, got {other:?}"),
    }
}

/// The six values of a unit (`s`, `t`, `(ts)`, `a{si}`, `at`, `as`).
pub(crate) fn push_unit(u: &Unit, out: &mut Vec<Value>) {
    out.push(Value::String(u.s.clone()));
    out.push(Value::Uint64(u.t));
    out.push(Value::Struct(vec![
        Value::Uint64(u.st.0),
        Value::String(u.st.1.clone()),
    ]));
    let dict = u.dict.iter().map(|(k, v)| dict_entry(k, Value::Int32(*v)));
    out.push(Value::Array(dict.collect(), "{si}".into()));
    out.push(Value::Array(
        u.at.iter().map(|x| Value::Uint64(*x)).collect(),
        "t".into(),
    ));
    out.push(Value::Array(
        u.as_.iter().map(|s| Value::String(s.clone())).collect(),
        "s".into(),
    ));
}

/// A name of dbus-message-parser 3 (`ObjectPath`, `Interface`, `Member`, `Bus`,
/// `Error`); its errors implement `Debug` only.
pub(crate) fn dbus_name<'a, T>(s: &'a str) -> Result<T>
where
    T: TryFrom<&'a str>,
    T::Error: std::fmt::Debug,
{
    T::try_from(s).map_err(|e| anyhow!("{s}: {e:?}"))
}

/// The test signal carrying `body` (serial not set).
pub(crate) fn signal(body: &Body) -> Result<Message> {
    let mut msg = Message::signal(
        dbus_name::<ObjectPath>(payload::PATH)?,
        dbus_name::<Interface>(payload::INTERFACE)?,
        dbus_name::<Member>(payload::MEMBER)?,
    );
    let mut values = Vec::new();
    match body {
        Body::Units(units) => units.iter().for_each(|u| push_unit(u, &mut values)),
        Body::AsvDict(entries) => {
            let dict = entries
                .iter()
                .map(|(k, v)| dict_entry(k, Value::Variant(Box::new(Value::String(v.clone())))));
            values.push(Value::Array(dict.collect(), "{sv}".into()));
        }
    }
    for v in values {
        msg.add_value(v);
    }
    Ok(msg)
}

impl Codec for Parser {
    type Wire = BytesMut;

    fn marshal(&mut self, body: &Body) -> Result<BytesMut> {
        let mut msg = signal(body)?;
        msg.set_serial(payload::SERIAL);
        let mut buf = BytesMut::new();
        // Unix fds the message carries (none here).
        let mut fds = Vec::new();
        Encoder::new(&mut buf, &mut fds)
            .message(&msg)
            .map_err(|e| anyhow!("encoding: {e:?}"))?;
        Ok(buf)
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, d: &mut Digest) -> Result<()> {
        // 3.x decodes from a borrowed slice (4.x takes an owned `Bytes`).
        let msg = Decoder::new(&bytes)
            .message()
            .map_err(|e| anyhow!("{e:?}"))
            .context("decoding")?;
        let body = msg.get_body();
        match shape {
            Shape::Units { count } => value_tree::digest_units(body, count, d),
            Shape::AsvDict => value_tree::digest_asv_dict(body, d),
        }
    }
}
