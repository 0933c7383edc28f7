//! The codec payloads (payload.rs) as short descriptions a program expands,
//! derived from the bodies themselves (never spelled twice): a unit's `at` as
//! one value repeated, its `as` and an `a{sv}`'s keys as literal strings or as
//! "the decimal i repeated R times, for i below N" ([`crate::payload::repeated_decimal`]).
//! [`expand`] turns a description back into the body; a test checks both ways.

use serde_json::{json, Value};

use crate::payload::{self, Body, Unit};
use crate::scenario;

/// The repetition of [`payload::repeated_decimal`] (a test checks it).
pub(super) const DECIMAL_REPEAT: usize = 12;

/// Strings as written: `{"strings": [...]}` or `{"decimal_repeated": R, "count": N}`.
fn strings(v: &[String]) -> Value {
    if v.len() > 1 && v.iter().enumerate().all(|(i, s)| *s == payload::repeated_decimal(i)) {
        json!({"decimal_repeated": DECIMAL_REPEAT, "count": v.len()})
    } else {
        json!({"strings": v})
    }
}

fn unit(u: &Unit) -> Value {
    let first = u.at.first().copied().unwrap_or(0);
    assert!(u.at.iter().all(|x| *x == first), "an `at` of one repeated value");
    json!({
        "s": u.s,
        "t": u.t,
        "st": [u.st.0, u.st.1],
        "dict": u.dict.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        "at": {"value": first, "count": u.at.len()},
        "as": strings(&u.as_),
    })
}

/// One payload: its name, its description and its body digest.
fn describe(name: &str, body: &Body) -> Value {
    let shape = match body {
        Body::Units(units) => {
            assert!(units.iter().all(|u| *u == units[0]), "{name}: identical units");
            json!({"count": units.len(), "unit": unit(&units[0])})
        }
        Body::AsvDict(entries) => {
            assert!(entries.iter().all(|(k, v)| k == v), "{name}: values equal to keys");
            let keys: Vec<String> = entries.iter().map(|(k, _)| k.clone()).collect();
            json!({"keys": strings(&keys)})
        }
    };
    let kind = if body.units().is_some() { "units" } else { "asv" };
    json!({"name": name, "kind": kind, kind: shape, "digest": body.digest()})
}

/// Every codec payload, in scenario order (the marshal ids).
pub(super) fn payloads() -> Vec<Value> {
    scenario::all()
        .filter(|s| s.kind == scenario::Kind::Marshal)
        .map(|s| describe(s.id.trim_start_matches("marshal/"), &s.body()))
        .collect()
}

#[cfg(test)]
fn expand_strings(v: &Value) -> Vec<String> {
    if let Some(list) = v.get("strings").and_then(Value::as_array) {
        return list
            .iter()
            .map(|s| s.as_str().unwrap_or_default().to_string())
            .collect();
    }
    let r = v["decimal_repeated"].as_u64().unwrap_or(0) as usize;
    let n = v["count"].as_u64().unwrap_or(0) as usize;
    (0..n).map(|i| i.to_string().repeat(r)).collect()
}

/// The body a description stands for (what every program does in its language).
#[cfg(test)]
pub(super) fn expand(p: &Value) -> Body {
    if p["kind"] == "asv" {
        return Body::AsvDict(
            expand_strings(&p["asv"]["keys"])
                .into_iter()
                .map(|k| (k.clone(), k))
                .collect(),
        );
    }
    let u = &p["units"]["unit"];
    let unit = Unit {
        s: u["s"].as_str().unwrap_or_default().into(),
        t: u["t"].as_u64().unwrap_or_default(),
        st: (
            u["st"][0].as_u64().unwrap_or_default(),
            u["st"][1].as_str().unwrap_or_default().into(),
        ),
        dict: u["dict"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                (
                    e[0].as_str().unwrap_or_default().into(),
                    e[1].as_i64().unwrap_or_default() as i32,
                )
            })
            .collect(),
        at: vec![u["at"]["value"].as_u64().unwrap_or_default(); u["at"]["count"].as_u64().unwrap_or(0) as usize],
        as_: expand_strings(&u["as"]),
    };
    Body::Units(vec![unit; p["units"]["count"].as_u64().unwrap_or(0) as usize])
}
