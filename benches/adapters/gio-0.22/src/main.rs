//! gio 0.22 (GDBus, the D-Bus implementation of GLib's GIO) through its typed
//! GVariant conversions: each argument becomes a `glib::Variant` with
//! `ToVariant` (`a{si}` and `a{sv}` as arrays of `DictEntry`, which keep
//! insertion order where `HashMap`/`VariantDict` would not; `at` through the
//! fixed-array fast path), the body is their tuple, and
//! `DBusMessage::set_body` + `to_blob` write the D-Bus wire bytes.
//! `DBusMessage::from_blob` parses them back into a `Variant` tree that is read
//! with typed accessors (strings and fixed arrays borrowed). IPC: see `ipc`.

use anyhow::{ensure, Context, Result};
use gio::{DBusCapabilityFlags, DBusMessage, DBusMessageByteOrder};
use glib::variant::DictEntry;
use glib::variant::ToVariant;
use glib::Variant;
use harness::payload::{self, Body, Unit};
use harness::{Codec, Digest, Shape};

mod ipc;
mod variant;

harness::adapter_main!(
    id: "gio-0.22",
    library: "gio",
    runtime: "blocking: call_sync blocks the calling thread while GDBus's own worker thread (one per process, \
              shared by every connection) does the socket I/O; the server's handlers, signal callbacks and \
              DBusServer connections are dispatched on GLib's global default main context, iterated on the \
              calling thread",
    codec: Gio,
    ipc: ipc::GioIpc
);

struct Gio;

/// The six top-level arguments of one unit, `s t (ts) a{si} at as`.
fn push_unit(u: &Unit, args: &mut Vec<Variant>) {
    args.push(u.s.to_variant());
    args.push(u.t.to_variant());
    args.push((u.st.0, u.st.1.as_str()).to_variant());
    args.push(Variant::array_from_iter::<DictEntry<&str, i32>>(
        u.dict.iter().map(|(k, v)| DictEntry::new(k.as_str(), *v).to_variant()),
    ));
    args.push(Variant::array_from_fixed_array(&u.at));
    args.push(u.as_.to_variant());
}

/// The body as one tuple of every argument.
pub(crate) fn body_variant(body: &Body) -> Variant {
    match body {
        Body::Units(units) => {
            let mut args = Vec::with_capacity(units.len() * 6);
            units.iter().for_each(|u| push_unit(u, &mut args));
            Variant::tuple_from_iter(args)
        }
        Body::AsvDict(entries) => {
            let dict = Variant::array_from_iter::<DictEntry<&str, Variant>>(
                entries
                    .iter()
                    .map(|(k, v)| DictEntry::new(k.as_str(), v.to_variant()).to_variant()),
            );
            Variant::tuple_from_iter([dict])
        }
    }
}

/// The test signal carrying `body`, as GDBus builds it.
pub(crate) fn test_signal(body: &Body) -> DBusMessage {
    let msg = DBusMessage::new_signal(payload::PATH, payload::INTERFACE, payload::MEMBER);
    msg.set_body(&body_variant(body));
    msg
}

fn digest_unit(body: &Variant, first: usize, d: &mut Digest) -> Result<()> {
    let arg = |i: usize| {
        body.try_child_value(first + i)
            .context("the body has too few arguments")
    };
    d.str(variant::str(&arg(0)?)?);
    d.u64(variant::get::<u64>(&arg(1)?)?);
    let st = arg(2)?;
    d.u64(variant::get::<u64>(&st.child_value(0))?);
    d.str(variant::str(&st.child_value(1))?);
    let dict = arg(3)?;
    for entry in dict.iter() {
        d.str(variant::str(&entry.child_value(0))?);
        d.i32(variant::get::<i32>(&entry.child_value(1))?);
    }
    d.len(dict.n_children());
    let at = arg(4)?;
    let at = at.fixed_array::<u64>()?;
    at.iter().for_each(|x| d.u64(*x));
    d.len(at.len());
    let as_ = arg(5)?;
    let mut n = 0;
    for s in as_.array_iter_str()? {
        d.str(s);
        n += 1;
    }
    d.len(n);
    Ok(())
}

impl Codec for Gio {
    type Wire = Vec<u8>;

    fn marshal(&mut self, body: &Body) -> Result<Vec<u8>> {
        let msg = test_signal(body);
        msg.set_serial(payload::SERIAL);
        msg.set_byte_order(DBusMessageByteOrder::LittleEndian);
        // GLib returns a buffer of its own; the binding copies it into a Vec.
        Ok(msg.to_blob(DBusCapabilityFlags::NONE)?)
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, d: &mut Digest) -> Result<()> {
        let msg = DBusMessage::from_blob(bytes, DBusCapabilityFlags::NONE)?;
        let body = msg.body().context("the message has no body")?;
        // One check of the whole tree's type: the typed reads below (child_value
        // panics on a non-container) then only meet the types they expect.
        let expected = match shape {
            Shape::Units { count } => payload::UNIT_SIGNATURE.repeat(count),
            Shape::AsvDict => payload::ASV_SIGNATURE.to_owned(),
        };
        ensure!(
            body.type_()
                .as_str()
                .strip_prefix('(')
                .and_then(|t| t.strip_suffix(')'))
                == Some(expected.as_str()),
            "body of type {}, expected ({expected})",
            body.type_()
        );
        match shape {
            Shape::Units { count } => {
                for i in 0..count {
                    digest_unit(&body, i * 6, d)?;
                }
            }
            Shape::AsvDict => {
                let dict = body.try_child_value(0).context("the body is empty")?;
                for entry in dict.iter() {
                    d.str(variant::str(&entry.child_value(0))?);
                    let value = entry
                        .child_value(1)
                        .as_variant()
                        .context("a{sv} value is not a variant")?;
                    d.str(variant::str(&value)?);
                }
                d.len(dict.n_children());
            }
        }
        Ok(())
    }
}
