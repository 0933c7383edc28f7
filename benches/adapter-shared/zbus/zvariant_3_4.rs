//! What zvariant 3 (zbus 3) and zvariant 4 (zbus 4) share and zvariant 5/6 spell
//! otherwise (adapter-shared/zbus/zvariant_5_6.rs): signatures are strings,
//! `DynamicType::dynamic_signature`, and a string variant read through
//! `DeserializeValue`. Compiled as `crate::zv` by adapter-zbus-3 and -4; the paths
//! come from their `crate::compat`.

use harness::payload;
use serde::{Deserialize, Deserializer};

use crate::codec::{Entries, UnitsBody, UnitsRef, UnitsSeed};
use crate::compat::{DeserializeValue, DynamicDeserialize, DynamicType, Signature, Type, WireError, WireResult};

/// N units as one structure signature; zbus drops the outer parentheses when
/// it writes the body signature into the header (and zvariant 4 needs them to
/// read a multi-argument body as one value).
fn units_signature(count: usize) -> Signature<'static> {
    Signature::from_string_unchecked(format!("({})", payload::UNIT_SIGNATURE.repeat(count)))
}

impl DynamicType for UnitsRef<'_> {
    fn dynamic_signature(&self) -> Signature<'_> {
        units_signature(self.0.len())
    }
}

#[derive(Type)]
#[zvariant(signature = "a{sv}")]
pub struct AsvBody<'a>(pub Entries<&'a str, StrVariant<'a>>);

// By hand: `DeserializeValue` ties the borrowed string to the input lifetime,
// which derive(Deserialize) with `borrow` cannot express.
impl<'de> Deserialize<'de> for AsvBody<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Entries::deserialize(d).map(AsvBody)
    }
}

/// A variant that must hold a string (`DeserializeValue` checks its signature).
pub struct StrVariant<'a>(pub &'a str);

impl<'de> Deserialize<'de> for StrVariant<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        DeserializeValue::<&str>::deserialize(d).map(|v| StrVariant(v.0))
    }
}

// Required by `DynamicDeserialize`.
impl DynamicType for UnitsBody<'_> {
    fn dynamic_signature(&self) -> Signature<'_> {
        units_signature(self.count())
    }
}

impl DynamicType for UnitsSeed {
    fn dynamic_signature(&self) -> Signature<'_> {
        units_signature(self.0)
    }
}

impl<'de> DynamicDeserialize<'de> for UnitsBody<'de> {
    type Deserializer = UnitsSeed;

    fn deserializer_for_signature<S>(signature: S) -> WireResult<UnitsSeed>
    where
        S: TryInto<Signature<'de>>,
        S::Error: Into<WireError>,
    {
        let signature = signature.try_into().map_err(Into::into)?;
        let unit = payload::UNIT_SIGNATURE.as_bytes();
        let got = signature.as_bytes();
        if got.is_empty() || got.len() % unit.len() != 0 || !got.chunks(unit.len()).all(|c| c == unit) {
            return Err(WireError::SignatureMismatch(
                signature.to_owned(),
                "`st(ts)a{si}atas` repeated".into(),
            ));
        }
        Ok(UnitsSeed(got.len() / unit.len()))
    }
}
