//! The zbus codec of zbus 3, 4, 5 and 6 (one text, compiled by adapter-zbus-3, -4, -5,
//! -6 and -6-tokio through `#[path]`): the documented serde path, a builder's
//! `build(&body)` with `Serialize + Type` bodies, and `Message::from_bytes` plus the
//! body's typed deserialization into values borrowing the message bytes. Building and
//! parsing messages is synchronous; no connection or runtime is involved.
//!
//! What the majors spell differently comes from the including crate: `crate::compat`
//! (how the signal header is made, a message's bytes, parsing, reading the body) and
//! `crate::zv` (zvariant 3/4 string signatures or zvariant 5/6 signature trees:
//! adapter-shared/zbus/zvariant_3_4.rs or zvariant_5_6.rs).

use std::fmt;

use anyhow::{ensure, Result};
use harness::payload::{Body, Unit};
use harness::scenario::Scenario;
use harness::{Codec, Digest, Shape};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeTuple};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::compat::{self, Message, SerializeVariant, Type, Zbus};
use crate::zv::AsvBody;

/// The six top-level arguments of one unit, `s t (ts) a{si} at as`.
pub const UNIT_ARGS: usize = 6;

/// The complete message; its bytes are the wire form (no copy).
pub struct Wire(Message);

impl AsRef<[u8]> for Wire {
    fn as_ref(&self) -> &[u8] {
        compat::message_bytes(&self.0)
    }
}

// ---- marshal: borrowed views of the plain values ----

/// `a{si}` in insertion order: zvariant maps (HashMap/BTreeMap) would reorder it.
#[derive(Type)]
#[zvariant(signature = "a{si}")]
pub struct DictRef<'a>(&'a [(String, i32)]);

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
#[derive(Type)]
#[zvariant(signature = "a{sv}")]
struct AsvRef<'a>(&'a [(String, String)]);

impl Serialize for AsvRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            map.serialize_entry(k, &SerializeVariant(v))?;
        }
        map.end()
    }
}

/// A body of N units: their fields are top-level message arguments one after
/// another (not N structs), so the signature is only known at run time
/// (`DynamicType`, implemented in `crate::zv`).
pub struct UnitsRef<'a>(pub &'a [Unit]);

impl Serialize for UnitsRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut args = s.serialize_tuple(self.0.len() * UNIT_ARGS)?;
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
pub struct Entries<K, V>(pub Vec<(K, V)>);

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

struct UnitView<'a> {
    s: &'a str,
    t: u64,
    st: (u64, &'a str),
    dict: Entries<&'a str, i32>,
    at: Vec<u64>,
    as_: Vec<&'a str>,
}

/// The units of a body (`DynamicType` and `DynamicDeserialize` in `crate::zv`).
pub struct UnitsBody<'a>(Vec<UnitView<'a>>);

impl UnitsBody<'_> {
    pub fn count(&self) -> usize {
        self.0.len()
    }
}

/// Reads the N units a `st(ts)a{si}atas` x N body signature announces.
pub struct UnitsSeed(pub usize);

impl<'de> DeserializeSeed<'de> for UnitsSeed {
    type Value = UnitsBody<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_tuple(self.0 * UNIT_ARGS, UnitsVisitor(self.0))
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
    type Wire = Wire;

    fn unsupported(&self, _: &Scenario) -> Option<String> {
        compat::codec_unsupported()
    }

    fn marshal(&mut self, body: &Body) -> Result<Wire> {
        let builder = self.signal_builder()?;
        let msg = match body {
            Body::Units(units) => builder.build(&UnitsRef(units))?,
            Body::AsvDict(entries) => builder.build(&AsvRef(entries))?,
        };
        Ok(Wire(msg))
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, d: &mut Digest) -> Result<()> {
        // A Message owns its bytes, as when zbus reads one off a socket.
        let msg = compat::message_from_bytes(bytes)?;
        let body = compat::body(&msg);
        match shape {
            Shape::Units { count } => {
                let UnitsBody(units) = compat::deserialize(&body)?;
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
                let AsvBody(Entries(entries)) = compat::deserialize(&body)?;
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
