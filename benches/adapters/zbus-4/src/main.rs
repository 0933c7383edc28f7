//! zbus 4.x through its documented serde path: `Builder::build(&body)` with
//! `Serialize + zvariant::Type` bodies, and `Message::from_bytes` +
//! `Body::deserialize` into borrowed typed values. Building and parsing
//! messages is synchronous; no connection or runtime is involved.

use std::fmt;
use std::num::NonZeroU32;

use anyhow::{ensure, Result};
use harness::payload::{self, Body, Unit};
use harness::{Codec, Digest, Shape};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeTuple};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zbus::message::{Builder, Message};
use zbus::zvariant::serialized::{Context, Data};
use zbus::zvariant::{
    self, DeserializeValue, DynamicDeserialize, DynamicType, Endian, SerializeValue, Signature, Type,
};

// zbus 4 and 5 have the same fd-passing API (`Fd`, `OwnedFd`, `#[proxy]`, `#[interface]`).
#[path = "../../zbus-5/src/fds.rs"]
mod fds;
mod ipc;
mod props;

harness::adapter_main!(
    id: "zbus-4",
    library: "zbus",
    runtime: "zbus::blocking over async_io::block_on; one internal executor thread per connection (async-io)",
    codec: Zbus::new().expect("building the signal header"),
    ipc: ipc::ZbusIpc
);

/// zbus 4 takes serials from a global counter when a builder is created and
/// has no serial setter: serial 1 is set on a header, which `Builder::from`
/// accepts. The header comes from a message built once with no body.
struct Zbus {
    template: Message,
}

impl Zbus {
    fn new() -> zbus::Result<Self> {
        let template = Message::signal(payload::PATH, payload::INTERFACE, payload::MEMBER)?
            .endian(Endian::Little)
            .build(&())?;
        Ok(Zbus { template })
    }
}

const SERIAL: NonZeroU32 = NonZeroU32::new(payload::SERIAL).unwrap();

/// The complete message; its bytes are the wire form (no copy).
struct Wire(Message);

impl AsRef<[u8]> for Wire {
    fn as_ref(&self) -> &[u8] {
        self.0.data()
    }
}

// ---- marshal: borrowed views of the plain values ----

/// `a{si}` in insertion order: zvariant maps (HashMap/BTreeMap) would reorder it.
#[derive(Type)]
#[zvariant(signature = "a{si}")]
struct DictRef<'a>(&'a [(String, i32)]);

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
            map.serialize_entry(k, &SerializeValue(v))?;
        }
        map.end()
    }
}

/// The six top-level arguments of one unit.
const UNIT_FIELDS: usize = 6;

/// N units as one structure signature; zbus drops the outer parentheses when
/// it writes the body signature into the header (and zvariant 4 needs them to
/// read a multi-argument body as one value).
fn units_signature(count: usize) -> Signature<'static> {
    Signature::from_string_unchecked(format!("({})", payload::UNIT_SIGNATURE.repeat(count)))
}

/// A body of N units: their fields are top-level message arguments one after
/// another (not N structs), so the signature is only known at run time.
struct UnitsRef<'a>(&'a [Unit]);

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

#[derive(Type)]
#[zvariant(signature = "a{sv}")]
struct AsvBody<'a>(Entries<&'a str, StrVariant<'a>>);

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
    type Wire = Wire;

    fn marshal(&mut self, body: &Body) -> Result<Wire> {
        let mut header = self.template.header();
        header.primary_mut().set_serial_num(SERIAL);
        let builder = Builder::from(header);
        let msg = match body {
            Body::Units(units) => builder.build(&UnitsRef(units))?,
            Body::AsvDict(entries) => builder.build(&AsvRef(entries))?,
        };
        Ok(Wire(msg))
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, d: &mut Digest) -> Result<()> {
        // A Message owns its bytes ('static), as when zbus reads one off a socket.
        let data = Data::new(bytes.to_vec(), Context::new_dbus(Endian::Little, 0));
        // SAFETY: zbus checks the header here and the body while deserializing it; the
        // message carries no file descriptors.
        let msg = unsafe { Message::from_bytes(data) }?;
        let body = msg.body();
        match shape {
            Shape::Units { count } => {
                let UnitsBody(units) = body.deserialize()?;
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
                let AsvBody(Entries(entries)) = body.deserialize()?;
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
