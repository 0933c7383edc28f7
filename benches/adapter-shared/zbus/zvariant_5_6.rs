//! What zvariant 5 (zbus 5) and zbus 6's `zbus::wire` (zvariant merged in) share and
//! zvariant 3/4 spell otherwise (adapter-shared/zbus/zvariant_3_4.rs): signatures
//! are trees (`Signature::Structure`), `DynamicType::signature`, and a string
//! variant read through `as_value`/`as_variant`. Compiled as `crate::zv` by
//! adapter-zbus-5, -6 and -6-tokio; the paths come from their `crate::compat`.

use serde::Deserialize;

use crate::codec::{DictRef, Entries, UnitsBody, UnitsRef, UnitsSeed, UNIT_ARGS};
use crate::compat::{as_variant, DynamicDeserialize, DynamicType, Signature, Type, WireError, WireResult};

/// The signatures of one unit's six top-level arguments, `s t (ts) a{si} at as`.
const UNIT_FIELDS: [&Signature; UNIT_ARGS] = [
    String::SIGNATURE,
    u64::SIGNATURE,
    <(u64, String)>::SIGNATURE,
    DictRef::SIGNATURE,
    <Vec<u64>>::SIGNATURE,
    <Vec<String>>::SIGNATURE,
];

fn units_signature(count: usize) -> Signature {
    let fields = UNIT_FIELDS.iter().cycle().take(count * UNIT_FIELDS.len());
    Signature::structure(fields.map(|s| (*s).clone()).collect::<Vec<_>>())
}

impl DynamicType for UnitsRef<'_> {
    fn signature(&self) -> Signature {
        units_signature(self.0.len())
    }
}

#[derive(Deserialize, Type)]
#[zvariant(signature = "a{sv}")]
pub struct AsvBody<'a>(#[serde(borrow)] pub Entries<&'a str, StrVariant<'a>>);

/// A variant that must hold a string (`as_variant` checks its signature).
#[derive(Deserialize)]
pub struct StrVariant<'a>(#[serde(with = "as_variant", borrow)] pub &'a str);

// Required by `DynamicDeserialize`.
impl DynamicType for UnitsBody<'_> {
    fn signature(&self) -> Signature {
        units_signature(self.count())
    }
}

impl DynamicType for UnitsSeed {
    fn signature(&self) -> Signature {
        units_signature(self.0)
    }
}

impl<'de> DynamicDeserialize<'de> for UnitsBody<'de> {
    type Deserializer = UnitsSeed;

    fn deserializer_for_signature(signature: &Signature) -> WireResult<UnitsSeed> {
        match signature {
            Signature::Structure(fields)
                if fields.len() % UNIT_FIELDS.len() == 0
                    && fields
                        .iter()
                        .zip(UNIT_FIELDS.iter().cycle())
                        .all(|(got, want)| got == *want) =>
            {
                Ok(UnitsSeed(fields.len() / UNIT_FIELDS.len()))
            }
            _ => Err(WireError::SignatureMismatch(
                signature.clone(),
                "`st(ts)a{si}atas` repeated".into(),
            )),
        }
    }
}
