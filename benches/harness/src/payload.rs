//! The canonical values of every scenario, as plain Rust values (std types only).
//!
//! Adapters receive these prebuilt and must turn them into wire bytes (marshal),
//! or turn the canonical wire bytes back into values and feed every field into
//! a [`Digest`] (demarshal). docs/scenarios.md describes the same values in prose.

use crate::digest::Digest;

/// Path, interface and member of the test signal, the same in every scenario.
pub const PATH: &str = "/io/killing/spark";
pub const INTERFACE: &str = "io.killing.spark";
pub const MEMBER: &str = "TestSignal";
pub const SERIAL: u32 = 1;

/// The signature of one [`Unit`].
pub const UNIT_SIGNATURE: &str = "st(ts)a{si}atas";
/// The signature of an [`Body::AsvDict`] body.
pub const ASV_SIGNATURE: &str = "a{sv}";

/// One unit of body: `s t (ts) a{si} at as`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    pub s: String,
    pub t: u64,
    pub st: (u64, String),
    /// A dict, in insertion order (which is also the wire order).
    pub dict: Vec<(String, i32)>,
    pub at: Vec<u64>,
    pub as_: Vec<String>,
}

/// A whole message body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// Units one after another; the signature is [`UNIT_SIGNATURE`] repeated.
    Units(Vec<Unit>),
    /// `a{sv}` where every value is a string variant, in insertion order.
    AsvDict(Vec<(String, String)>),
}

impl Body {
    /// The D-Bus signature of this body.
    pub fn signature(&self) -> String {
        match self {
            Body::Units(units) => UNIT_SIGNATURE.repeat(units.len()),
            Body::AsvDict(_) => ASV_SIGNATURE.to_string(),
        }
    }

    /// The digest of every field, in wire order (see [`Body::digest_into`]).
    pub fn digest(&self) -> u64 {
        let mut d = Digest::new();
        self.digest_into(&mut d);
        d.finish()
    }

    /// Feeds every field, in wire order, into a digest (for `a{sv}`: key, string
    /// value, ..., then the entry count). The digest an adapter computes from
    /// decoded bytes must equal this one.
    pub fn digest_into(&self, d: &mut Digest) {
        match self {
            Body::Units(units) => {
                for u in units {
                    u.digest_into(d);
                }
            }
            Body::AsvDict(entries) => {
                for (k, v) in entries {
                    d.str(k);
                    d.str(v);
                }
                d.len(entries.len());
            }
        }
    }

    pub fn units(&self) -> Option<&[Unit]> {
        match self {
            Body::Units(u) => Some(u),
            Body::AsvDict(_) => None,
        }
    }

    pub fn asv(&self) -> Option<&[(String, String)]> {
        match self {
            Body::AsvDict(e) => Some(e),
            Body::Units(_) => None,
        }
    }
}

impl Unit {
    /// The order every demarshal adapter must follow: s, t, st.0, st.1, then
    /// each container's elements followed by its element count (count last, so
    /// streaming decoders need not know it in advance): dict (key, value)
    /// pairs, `len`; at items, `len`; as items, `len`.
    pub fn digest_into(&self, d: &mut Digest) {
        d.str(&self.s);
        d.u64(self.t);
        d.u64(self.st.0);
        d.str(&self.st.1);
        for (k, v) in &self.dict {
            d.str(k);
            d.i32(*v);
        }
        d.len(self.dict.len());
        for x in &self.at {
            d.u64(*x);
        }
        d.len(self.at.len());
        for s in &self.as_ {
            d.str(s);
        }
        d.len(self.as_.len());
    }
}

/// String `i` of the big string scenarios: the decimal `i` repeated 12 times.
pub fn repeated_decimal(i: usize) -> String {
    i.to_string().repeat(12)
}

fn base_unit(dict: Vec<(String, i32)>, at: Vec<u64>, as_: Vec<String>) -> Unit {
    Unit {
        s: "Testtest".to_string(),
        t: u64::MAX,
        st: (u64::MAX, "TesttestTestest".to_string()),
        dict,
        at,
        as_,
    }
}

/// `marshal/mixed`: 10 units; dict "A".."E" -> 1234567; 15 x u64::MAX; [""].
pub fn mixed() -> Body {
    let dict: Vec<(String, i32)> = ["A", "B", "C", "D", "E"]
        .iter()
        .map(|k| (k.to_string(), 1234567))
        .collect();
    Body::Units(
        (0..10)
            .map(|_| base_unit(dict.clone(), vec![u64::MAX; 15], vec![String::new()]))
            .collect(),
    )
}

/// `marshal/big-array`: 1 unit; {"A": 1234567}; 10240 zeros; [""].
pub fn big_array() -> Body {
    Body::Units(vec![base_unit(
        vec![("A".to_string(), 1234567)],
        vec![0; 10240],
        vec![String::new()],
    )])
}

/// `marshal/str-array`: 1 unit; {"A": 1234567}; [0]; 10240 repeated decimals.
pub fn str_array() -> Body {
    Body::Units(vec![base_unit(
        vec![("A".to_string(), 1234567)],
        vec![0],
        (0..10240).map(repeated_decimal).collect(),
    )])
}

/// `marshal/asv-dict`: 10240 entries, key = repeated decimal, value = the key as a string variant.
pub fn asv_dict() -> Body {
    Body::AsvDict(
        (0..10240)
            .map(|i| {
                let k = repeated_decimal(i);
                (k.clone(), k)
            })
            .collect(),
    )
}

/// A body of the same shape as `body` with different values, used by the
/// verification tests to prove that a demarshal adapter really reads the
/// bytes it is given (its digest must follow the change).
pub fn perturbed(body: &Body) -> Body {
    match body {
        Body::Units(units) => Body::Units(
            units
                .iter()
                .enumerate()
                .map(|(i, u)| {
                    let mut u = u.clone();
                    u.s = format!("Perturbed{i}");
                    u.t = i as u64;
                    u.st.0 ^= 0x55;
                    if let Some(first) = u.dict.first_mut() {
                        first.1 = -7;
                    }
                    if let Some(last) = u.at.last_mut() {
                        *last = 42;
                    }
                    if let Some(last) = u.as_.last_mut() {
                        last.push('x');
                    }
                    u
                })
                .collect(),
        ),
        Body::AsvDict(entries) => {
            let mut entries = entries.clone();
            if let Some(last) = entries.last_mut() {
                last.1 = "changed".to_string();
            }
            Body::AsvDict(entries)
        }
    }
}
