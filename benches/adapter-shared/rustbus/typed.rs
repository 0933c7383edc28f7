//! rustbus's trait path extended for the test bodies: dicts in insertion
//! order (rustbus maps dicts only to `HashMap`, which would lose it) and
//! string variants, as small types implementing `Signature`/`Marshal`/
//! `Unmarshal` (the documented way to extend them; the derive macros cover
//! structs only). The same source serves rustbus 0.19 and async-rustbus 0.2,
//! which builds on rustbus 0.17: the traits have the same shape in both, and
//! the including crate names their error types `MarshalError` and
//! `UnmarshalError` at its root (0.19 has `wire::errors`; 0.17 uses
//! `rustbus::Error` and `wire::unmarshal::Error`).

use rustbus::signature::{Container, Type};
use rustbus::wire::marshal::traits::SignatureBuffer;
use rustbus::wire::marshal::MarshalContext;
use rustbus::wire::unmarshal::{UnmarshalContext, UnmarshalResult};
use rustbus::{Marshal, Signature, Unmarshal};

use crate::{MarshalError, UnmarshalError};

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
pub struct DictRef<'a, V, W>(pub &'a [(String, V)], pub fn(&'a V) -> W);

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
pub struct StrVariant<'a>(pub &'a str);

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

// ---- demarshal: typed values borrowing the body ----

/// A dict's entries in wire order.
pub struct Entries<K, V>(pub Vec<(K, V)>);

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

// ---- the test bodies, for both crates ----
//
// rustbus's and async-rustbus's `MessageBuilder`, `MarshalledMessage` and
// `MessageBodyParser` are different types with the same inherent methods, so
// the code that builds and reads the test signal is a macro, expanded in each
// crate.

/// An upper bound of the test signal's header size: fixed part, four fields
/// (code, signature, padding, length, NUL) and their strings.
pub fn header_capacity(signature_len: usize) -> usize {
    use harness::payload;
    16 + 4 * 16 + payload::PATH.len() + payload::INTERFACE.len() + payload::MEMBER.len() + signature_len
}

/// The test signal carrying the `Body` `$body`, built with the crate's
/// `MessageBuilder` (in scope where it expands); evaluates to
/// `Result<MarshalledMessage, MarshalError>`.
macro_rules! test_signal {
    ($body:expr) => {
        (|| -> Result<_, $crate::MarshalError> {
            use harness::payload;
            let mut msg = MessageBuilder::with_byteorder(ByteOrder::LittleEndian)
                .signal(payload::INTERFACE, payload::MEMBER, payload::PATH)
                .build();
            match $body {
                payload::Body::Units(units) => {
                    for u in units {
                        msg.body.push_param3(&u.s, u.t, &u.st)?;
                        msg.body.push_param3(
                            $crate::typed::DictRef(&u.dict, |v: &i32| *v),
                            u.at.as_slice(),
                            u.as_.as_slice(),
                        )?;
                    }
                }
                payload::Body::AsvDict(entries) => {
                    msg.body.push_param($crate::typed::DictRef(entries, |v: &String| {
                        $crate::typed::StrVariant(v)
                    }))?;
                }
            }
            Ok(msg)
        })()
    };
}
pub(crate) use test_signal;

/// Reads a test body of `$shape` with `$parser` (a `MessageBodyParser`) into
/// typed values borrowing the body and feeds every field, in wire order, into
/// the digest `$d`; evaluates to `Result<(), UnmarshalError>`.
macro_rules! digest_test_body {
    ($parser:expr, $shape:expr, $d:expr) => {
        (|| -> Result<(), $crate::UnmarshalError> {
            let p = &mut $parser;
            let d: &mut harness::Digest = $d;
            match $shape {
                harness::Shape::Units { count } => {
                    for _ in 0..count {
                        // Single `get`s: `get2`..`get5` count the remaining signature on every call.
                        let s: &str = p.get()?;
                        let t: u64 = p.get()?;
                        let st: (u64, &str) = p.get()?;
                        let dict: $crate::typed::Entries<&str, i32> = p.get()?;
                        // Borrows the body (rustbus's zero-copy slice path for fixed-size elements).
                        let at: std::borrow::Cow<[u64]> = p.get()?;
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
                harness::Shape::AsvDict => {
                    let $crate::typed::Entries(entries): $crate::typed::Entries<
                        &str,
                        rustbus::wire::unmarshal::traits::Variant,
                    > = p.get()?;
                    for (k, v) in &entries {
                        d.str(k);
                        // `get` checks that the variant holds a string.
                        d.str(v.get::<&str>()?);
                    }
                    d.len(entries.len());
                }
            }
            Ok(())
        })()
    };
}
pub(crate) use digest_test_body;
