//! rustbus 0.19.x through its trait path (`Marshal` / `Unmarshal` / `Signature`),
//! which the crate recommends over its older `params` enums: arguments are pushed
//! with `body.push_param*`, `wire::marshal::marshal` writes the header (the
//! connection writes header and body separately, here they are concatenated), and
//! a received message is parsed with `unmarshal_header` +
//! `unmarshal_dynamic_header` + `unmarshal_next_message`, then read with
//! `body.parser().get::<T>()` into typed values borrowing the body.
//!
//! rustbus maps dicts only to `HashMap`, which would lose insertion order, so
//! the two dicts are small user types implementing the traits (the documented
//! way to extend them); the derive macros only cover structs, not dicts.

use std::borrow::Cow;

use anyhow::{ensure, Result};
use harness::payload::{self, Body};
use harness::{Codec, Digest, Shape};
use rustbus::message_builder::MarshalledMessage;
use rustbus::signature::{Container, Type};
use rustbus::wire::errors::{MarshalError, UnmarshalError};
use rustbus::wire::marshal::traits::SignatureBuffer;
use rustbus::wire::marshal::{self, MarshalContext};
use rustbus::wire::unmarshal::traits::Variant;
use rustbus::wire::unmarshal::{self as unmarshal, UnmarshalContext, UnmarshalResult};
use rustbus::{ByteOrder, Marshal, MessageBuilder, Signature, Unmarshal};

mod ipc;

harness::adapter_main!(
    id: "rustbus-0.19",
    library: "rustbus",
    runtime: "blocking: the calling thread",
    codec: Rustbus,
    ipc: ipc::RustbusIpc
);

struct Rustbus;

fn dict_signature<K: Signature, V: Signature>() -> Type {
    match K::signature() {
        Type::Base(key) => Type::Container(Container::Dict(key, Box::new(V::signature()))),
        _ => unreachable!("dict keys are basic types"),
    }
}

fn dict_sig_str<K: Signature, V: Signature>(buf: &mut SignatureBuffer) {
    buf.push_str("a{");
    K::sig_str(buf);
    V::sig_str(buf);
    buf.push_str("}");
}

fn dict_has_sig<K: Signature, V: Signature>(sig: &str) -> bool {
    let mut want = SignatureBuffer::new();
    dict_sig_str::<K, V>(&mut want);
    sig == want.as_str()
}

// ---- marshal: borrowed views of the plain values ----

/// `a{sX}` in slice order; each plain value is turned into its wire type `W`
/// by the function (`i32` as is, a `String` into a string variant).
struct DictRef<'a, V, W>(&'a [(String, V)], fn(&'a V) -> W);

impl<V, W: Signature> Signature for DictRef<'_, V, W> {
    fn signature() -> Type {
        dict_signature::<String, W>()
    }
    fn alignment() -> usize {
        4
    }
    fn sig_str(buf: &mut SignatureBuffer) {
        dict_sig_str::<String, W>(buf)
    }
    fn has_sig(sig: &str) -> bool {
        dict_has_sig::<String, W>(sig)
    }
}

impl<'a, V, W: Marshal> Marshal for DictRef<'a, V, W> {
    // As rustbus's HashMap impl: length placeholder, entries aligned to 8, length patched.
    fn marshal(&self, ctx: &mut MarshalContext) -> Result<(), MarshalError> {
        ctx.align_to(4);
        let len_at = ctx.buf.len();
        ctx.buf.extend_from_slice(&[0; 4]);
        ctx.align_to(8);
        let start = ctx.buf.len();
        for (k, v) in self.0 {
            ctx.align_to(8);
            k.marshal(ctx)?;
            (self.1)(v).marshal(ctx)?;
        }
        let len = (ctx.buf.len() - start) as u32;
        rustbus::wire::util::insert_u32(ctx.byteorder, len, &mut ctx.buf[len_at..len_at + 4]);
        Ok(())
    }
}

/// A string written as a variant (`v` holding `s`).
struct StrVariant<'a>(&'a str);

impl Signature for StrVariant<'_> {
    fn signature() -> Type {
        Type::Container(Container::Variant)
    }
    fn alignment() -> usize {
        1
    }
    fn sig_str(buf: &mut SignatureBuffer) {
        buf.push_static("v")
    }
    fn has_sig(sig: &str) -> bool {
        sig.starts_with('v')
    }
}

impl Marshal for StrVariant<'_> {
    fn marshal(&self, ctx: &mut MarshalContext) -> Result<(), MarshalError> {
        self.0.marshal_as_variant(ctx)
    }
}

/// An upper bound of the header's size: fixed part, four fields (code,
/// signature, padding, length, NUL) and their strings.
fn header_capacity(signature_len: usize) -> usize {
    16 + 4 * 16 + payload::PATH.len() + payload::INTERFACE.len() + payload::MEMBER.len() + signature_len
}

// ---- demarshal: typed values borrowing the body ----

/// A dict's entries in wire order.
struct Entries<K, V>(Vec<(K, V)>);

impl<K: Signature, V: Signature> Signature for Entries<K, V> {
    fn signature() -> Type {
        dict_signature::<K, V>()
    }
    fn alignment() -> usize {
        4
    }
    fn sig_str(buf: &mut SignatureBuffer) {
        dict_sig_str::<K, V>(buf)
    }
    fn has_sig(sig: &str) -> bool {
        dict_has_sig::<K, V>(sig)
    }
}

impl<'buf, 'fds, K: Unmarshal<'buf, 'fds>, V: Unmarshal<'buf, 'fds>> Unmarshal<'buf, 'fds> for Entries<K, V> {
    // As rustbus's HashMap impl, keeping the entries in a Vec.
    fn unmarshal(ctx: &mut UnmarshalContext<'fds, 'buf>) -> UnmarshalResult<Self> {
        let start = ctx.offset;
        ctx.align_to(4)?;
        let (_, len) = u32::unmarshal(ctx)?;
        ctx.align_to(8)?;
        let end = ctx.offset + len as usize;
        if end > ctx.buf.len() {
            return Err(UnmarshalError::NotEnoughBytes);
        }
        let mut entries = Vec::new();
        while ctx.offset < end {
            ctx.align_to(8)?;
            let (_, k) = K::unmarshal(ctx)?;
            ctx.align_to(V::alignment())?;
            let (_, v) = V::unmarshal(ctx)?;
            entries.push((k, v));
        }
        if ctx.offset != end {
            return Err(UnmarshalError::NotAllBytesUsed);
        }
        Ok((ctx.offset - start, Entries(entries)))
    }
}

/// The signal of a marshal scenario (also sent by `connect/marshal-send`).
fn build_signal(body: &Body) -> Result<MarshalledMessage> {
    let mut msg = MessageBuilder::with_byteorder(ByteOrder::LittleEndian)
        .signal(payload::INTERFACE, payload::MEMBER, payload::PATH)
        .build();
    match body {
        Body::Units(units) => {
            for u in units {
                msg.body.push_param3(&u.s, u.t, &u.st)?;
                msg.body
                    .push_param3(DictRef(&u.dict, |v: &i32| *v), u.at.as_slice(), u.as_.as_slice())?;
            }
        }
        Body::AsvDict(entries) => {
            msg.body.push_param(DictRef(entries, |v: &String| StrVariant(v)))?;
        }
    }
    Ok(msg)
}

fn parse(bytes: &[u8]) -> Result<MarshalledMessage> {
    let (header_len, header) = unmarshal::unmarshal_header(bytes, 0)?;
    let (fields_len, dynheader) = unmarshal::unmarshal_dynamic_header(&header, bytes, header_len)?;
    let (_, msg) = unmarshal::unmarshal_next_message(&header, dynheader, bytes, header_len + fields_len)?;
    Ok(msg)
}

impl Codec for Rustbus {
    type Wire = Vec<u8>;

    fn marshal(&mut self, body: &Body) -> Result<Vec<u8>> {
        let msg = build_signal(body)?;
        let mut wire = Vec::with_capacity(header_capacity(msg.get_sig().len()) + msg.get_buf().len());
        marshal::marshal(&msg, payload::SERIAL, &mut wire)?;
        wire.extend_from_slice(msg.get_buf());
        Ok(wire)
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, d: &mut Digest) -> Result<()> {
        // The body is copied out of `bytes`, as rustbus does from its read buffer.
        let msg = parse(bytes)?;
        let mut p = msg.body.parser();
        match shape {
            Shape::Units { count } => {
                for _ in 0..count {
                    // Single `get`s: `get2`..`get5` count the remaining signature on every call.
                    let s: &str = p.get()?;
                    let t: u64 = p.get()?;
                    let st: (u64, &str) = p.get()?;
                    let dict: Entries<&str, i32> = p.get()?;
                    // Borrows the body (rustbus's zero-copy slice path for fixed-size elements).
                    let at: Cow<[u64]> = p.get()?;
                    let as_: Vec<&str> = p.get()?;
                    d.str(s);
                    d.u64(t);
                    d.u64(st.0);
                    d.str(st.1);
                    for (k, v) in &dict.0 {
                        d.str(k);
                        d.i32(*v);
                    }
                    d.len(dict.0.len());
                    for x in at.iter() {
                        d.u64(*x);
                    }
                    d.len(at.len());
                    for s in &as_ {
                        d.str(s);
                    }
                    d.len(as_.len());
                }
            }
            Shape::AsvDict => {
                let Entries(entries): Entries<&str, Variant> = p.get()?;
                for (k, v) in &entries {
                    d.str(k);
                    // `get` checks that the variant holds a string.
                    d.str(v.get::<&str>()?);
                }
                d.len(entries.len());
            }
        }
        ensure!(p.get_next_sig().is_none(), "the body has more arguments than expected");
        Ok(())
    }
}
