//! The codec of zbus 1 (the same text also builds against zbus 2 and
//! zvariant 3, whose header API is the same, for a zbus-2 row).
//!
//! Their serde path is `MessageBuilder::build(&body)`: it serializes a
//! `MessageHeader` and then the `Serialize + Type` body with zvariant; and
//! `Message::body` reads a body with `zvariant::from_slice_for_dynamic_signature`.
//! Neither lets a caller set the serial (the connection sets it; there is no
//! setter, and `MessageBuilder` cannot start from a header of ours as zbus 3's
//! can) nor make a `Message` from bytes (`from_bytes`/`from_raw_parts` are
//! crate-private), so this file does those same steps with their public header
//! types and zvariant: header and body bytes are zbus/zvariant's own. Building
//! and parsing messages is synchronous; no connection or runtime is involved.

use std::fmt;
use std::io::Cursor;

use anyhow::{ensure, Context, Result};
use byteorder::LE;
use harness::payload::{self, Body, Unit};
use harness::scenario::Scenario;
use harness::{Codec, Digest, Shape};
use serde::de::value::SeqDeserializer;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeTuple};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zbus::zvariant::{
    self, DeserializeValue, DynamicDeserialize, DynamicType, EncodingContext, ObjectPath, SerializeValue, Signature,
    Type,
};
use zbus::{EndianSig, MessageField, MessageFields, MessageHeader, MessagePrimaryHeader, MessageType};

pub struct Zbus;

/// The test signal's header, made per message as `MessageBuilder::signal` makes
/// one, but with serial 1: zbus 1 and 2 leave serials to the connection that
/// sends a message and have no setter (and zbus 1's header is not `Clone`).
// `try_into` is infallible on zbus 1 (zvariant's `Str`), fallible on zbus 2 (`InterfaceName`).
#[allow(clippy::unnecessary_fallible_conversions)]
fn signal_header() -> Result<MessageHeader<'static>> {
    // The primary header is `Deserialize`: read it from its six values
    // (endianness, type, flags, version, body length, serial).
    let values = [
        EndianSig::Little as u32,
        MessageType::Signal as u32,
        0,
        1,
        0,
        payload::SERIAL,
    ];
    let primary = MessagePrimaryHeader::deserialize(SeqDeserializer::<_, de::value::Error>::new(values.into_iter()))?;
    let mut fields = MessageFields::new();
    fields.add(MessageField::Path(ObjectPath::try_from(payload::PATH)?));
    // zbus 2 takes zbus_names' InterfaceName/MemberName here, zbus 1 zvariant's Str.
    fields.add(MessageField::Interface(payload::INTERFACE.try_into()?));
    fields.add(MessageField::Member(payload::MEMBER.try_into()?));
    Ok(MessageHeader::new(primary, fields))
}

/// The encoding zbus 1 and 2 use for messages: D-Bus format, offsets from the
/// start of the header (and of the body, which starts 8-aligned).
fn dbus_context() -> EncodingContext<LE> {
    EncodingContext::new_dbus(0)
}

/// What zbus 1's and 2's `MessageBuilder::build` do: the body's size and signature
/// (without the outer parentheses of a multi-argument body) into the header,
/// then the header and the body, both written by zvariant, into one buffer.
fn build_message<B: Serialize + DynamicType>(body: &B) -> Result<Vec<u8>> {
    let ctxt = dbus_context();
    let body_len = zvariant::serialized_size(ctxt, body)?;
    let mut signature = body.dynamic_signature();
    if signature.starts_with(zvariant::STRUCT_SIG_START_STR) {
        signature = signature.slice(1..signature.len() - 1);
    }
    let mut header = signal_header()?;
    header.fields_mut().add(MessageField::Signature(signature));
    header.primary_mut().set_body_len(u32::try_from(body_len)?);
    let header_len = zvariant::serialized_size(ctxt, &header)?;
    let mut bytes = Vec::with_capacity(header_len + body_len);
    let mut cursor = Cursor::new(&mut bytes);
    zvariant::to_writer(&mut cursor, ctxt, &header)?;
    zvariant::to_writer(&mut cursor, ctxt, body)?;
    Ok(bytes)
}

/// Where the body starts, as zbus 1 and 2 find it in a message it reads: after the
/// 16 fixed bytes and the header fields, padded to 8.
fn body_offset(bytes: &[u8]) -> Result<usize> {
    ensure!(
        bytes.len() >= 16,
        "{} bytes are shorter than a message header",
        bytes.len()
    );
    let fields_len: u32 = zvariant::from_slice(&bytes[12..], dbus_context())?;
    let header_len = 16 + usize::try_from(fields_len)?;
    Ok(header_len.next_multiple_of(8))
}

// ---- marshal: borrowed views of the plain values ----

/// `a{si}` in insertion order: zvariant maps (HashMap/BTreeMap) would reorder it.
struct DictRef<'a>(&'a [(String, i32)]);

// By hand, here and below: zvariant 2's derive(Type) takes no `signature` attribute.
impl Type for DictRef<'_> {
    fn signature() -> Signature<'static> {
        Signature::from_static_str_unchecked("a{si}")
    }
}

impl Serialize for DictRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// `a{sv}` in insertion order, every value a string variant.
struct AsvRef<'a>(&'a [(String, String)]);

impl Type for AsvRef<'_> {
    fn signature() -> Signature<'static> {
        Signature::from_static_str_unchecked(payload::ASV_SIGNATURE)
    }
}

impl Serialize for AsvRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            map.serialize_entry(k, &SerializeValue(v))?;
        }
        map.end()
    }
}

/// The six top-level arguments of one unit.
const UNIT_FIELDS: usize = 6;

/// N units as one structure signature, as zbus writes a multi-argument body;
/// the outer parentheses are dropped when the signature goes into the header.
pub(crate) fn units_signature(count: usize) -> Signature<'static> {
    Signature::from_string_unchecked(format!("({})", payload::UNIT_SIGNATURE.repeat(count)))
}

/// A body of N units: their fields are top-level message arguments one after
/// another (not N structs), so the signature is only known at run time.
pub struct UnitsRef<'a>(pub &'a [Unit]);

impl DynamicType for UnitsRef<'_> {
    fn dynamic_signature(&self) -> Signature<'_> {
        units_signature(self.0.len())
    }
}

impl Serialize for UnitsRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut args = s.serialize_tuple(self.0.len() * UNIT_FIELDS)?;
        for u in self.0 {
            args.serialize_element(&u.s)?;
            args.serialize_element(&u.t)?;
            args.serialize_element(&u.st)?;
            args.serialize_element(&DictRef(&u.dict))?;
            args.serialize_element(&u.at)?;
            args.serialize_element(&u.as_)?;
        }
        args.end()
    }
}

// ---- demarshal: typed values borrowing the message bytes ----

/// A dict's entries in wire order.
struct Entries<K, V>(Vec<(K, V)>);

impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Deserialize<'de> for Entries<K, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<K, V>(std::marker::PhantomData<(K, V)>);
        impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for EntriesVisitor<K, V> {
            type Value = Entries<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a dict")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        d.deserialize_map(EntriesVisitor(std::marker::PhantomData))
    }
}

struct AsvBody<'a>(Entries<&'a str, StrVariant<'a>>);

impl Type for AsvBody<'_> {
    fn signature() -> Signature<'static> {
        Signature::from_static_str_unchecked(payload::ASV_SIGNATURE)
    }
}

// By hand: `DeserializeValue` ties the borrowed string to the input lifetime,
// which derive(Deserialize) with `borrow` cannot express.
impl<'de> Deserialize<'de> for AsvBody<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Entries::deserialize(d).map(AsvBody)
    }
}

/// A variant that must hold a string (`DeserializeValue` checks its signature).
struct StrVariant<'a>(&'a str);

impl<'de> Deserialize<'de> for StrVariant<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        DeserializeValue::<&str>::deserialize(d).map(|v| StrVariant(v.0))
    }
}

struct UnitView<'a> {
    s: &'a str,
    t: u64,
    st: (u64, &'a str),
    dict: Entries<&'a str, i32>,
    at: Vec<u64>,
    as_: Vec<&'a str>,
}

struct UnitsBody<'a>(Vec<UnitView<'a>>);

/// Reads the N units a `st(ts)a{si}atas` x N body signature announces.
struct UnitsSeed(usize);

// Required by `DynamicDeserialize`.
impl DynamicType for UnitsBody<'_> {
    fn dynamic_signature(&self) -> Signature<'_> {
        units_signature(self.0.len())
    }
}

impl DynamicType for UnitsSeed {
    fn dynamic_signature(&self) -> Signature<'_> {
        units_signature(self.0)
    }
}

impl<'de> DynamicDeserialize<'de> for UnitsBody<'de> {
    type Deserializer = UnitsSeed;

    fn deserializer_for_signature<S>(signature: S) -> zvariant::Result<UnitsSeed>
    where
        S: TryInto<Signature<'de>>,
        S::Error: Into<zvariant::Error>,
    {
        let signature = signature.try_into().map_err(Into::into)?;
        let unit = payload::UNIT_SIGNATURE.as_bytes();
        let got = signature.as_bytes();
        if got.is_empty() || got.len() % unit.len() != 0 || !got.chunks(unit.len()).all(|c| c == unit) {
            return Err(zvariant::Error::SignatureMismatch(
                signature.to_owned(),
                "`st(ts)a{si}atas` repeated".into(),
            ));
        }
        Ok(UnitsSeed(got.len() / unit.len()))
    }
}

impl<'de> DeserializeSeed<'de> for UnitsSeed {
    type Value = UnitsBody<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_tuple(self.0 * UNIT_FIELDS, UnitsVisitor(self.0))
    }
}

struct UnitsVisitor(usize);

fn next<'de, A: SeqAccess<'de>, T: Deserialize<'de>>(seq: &mut A) -> Result<T, A::Error> {
    seq.next_element()?
        .ok_or_else(|| de::Error::custom("body ends inside a unit"))
}

impl<'de> Visitor<'de> for UnitsVisitor {
    type Value = UnitsBody<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} units", self.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut units = Vec::with_capacity(self.0);
        for _ in 0..self.0 {
            units.push(UnitView {
                s: next(&mut seq)?,
                t: next(&mut seq)?,
                st: next(&mut seq)?,
                dict: next(&mut seq)?,
                at: next(&mut seq)?,
                as_: next(&mut seq)?,
            });
        }
        Ok(UnitsBody(units))
    }
}

impl Codec for Zbus {
    type Wire = Vec<u8>;

    fn unsupported(&self, _: &Scenario) -> Option<String> {
        cfg!(target_endian = "big")
            .then(|| "zbus 1 and 2 always encode in the host's byte order, not little endian".into())
    }

    fn marshal(&mut self, body: &Body) -> Result<Vec<u8>> {
        match body {
            Body::Units(units) => build_message(&UnitsRef(units)),
            Body::AsvDict(entries) => build_message(&AsvRef(entries)),
        }
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, d: &mut Digest) -> Result<()> {
        // A message owns its bytes, as when zbus reads one off a socket (and as the
        // other zbus rows' `Message`s do).
        let bytes = bytes.to_vec();
        let ctxt = dbus_context();
        // What zbus 1 and 2 do with a message they read: the header, then the body by
        // the header's signature.
        let header: MessageHeader<'_> = zvariant::from_slice(&bytes, ctxt)?;
        ensure!(
            header.primary().endian_sig() == EndianSig::Little,
            "not a little-endian message"
        );
        let signature = header.signature()?.context("the message has no body signature")?;
        let body = &bytes[body_offset(&bytes)?..];
        match shape {
            Shape::Units { count } => {
                let UnitsBody(units) = zvariant::from_slice_for_dynamic_signature(body, ctxt, signature)?;
                ensure!(units.len() == count, "{} units, expected {count}", units.len());
                for u in &units {
                    d.str(u.s);
                    d.u64(u.t);
                    d.u64(u.st.0);
                    d.str(u.st.1);
                    for (k, v) in &u.dict.0 {
                        d.str(k);
                        d.i32(*v);
                    }
                    d.len(u.dict.0.len());
                    for x in &u.at {
                        d.u64(*x);
                    }
                    d.len(u.at.len());
                    for s in &u.as_ {
                        d.str(s);
                    }
                    d.len(u.as_.len());
                }
            }
            Shape::AsvDict => {
                let AsvBody(Entries(entries)) = zvariant::from_slice_for_dynamic_signature(body, ctxt, signature)?;
                for (k, v) in &entries {
                    d.str(k);
                    d.str(v.0);
                }
                d.len(entries.len());
            }
        }
        Ok(())
    }
}
