//! Reading a dbus-message-parser `Value` tree into the digest, and the dict
//! entries the marshal side builds. These variants are the same in
//! dbus-message-parser 4.x (this adapter) and 3.x (dbus-async-2, which
//! includes this file by `#[path]`); what differs between the majors (how an
//! array or a struct holds its values) comes from the including crate's
//! `array` and `struct_fields`.

use anyhow::{bail, Result};
use harness::Digest;

use crate::{array, struct_fields, Value};

pub fn dict_entry(k: &str, v: Value) -> Value {
    Value::DictEntry(Box::new((Value::String(k.to_string()), v)))
}

fn string(v: &Value) -> Result<&str> {
    match v {
        Value::String(s) => Ok(s),
        other => bail!("expected a string, got {other:?}"),
    }
}

fn u64_of(v: &Value) -> Result<u64> {
    match v {
        Value::Uint64(x) => Ok(*x),
        other => bail!("expected a u64, got {other:?}"),
    }
}

fn entry(v: &Value) -> Result<&(Value, Value)> {
    match v {
        Value::DictEntry(e) => Ok(e),
        other => bail!("expected a dict entry, got {other:?}"),
    }
}

fn digest_unit(fields: &[Value], d: &mut Digest) -> Result<()> {
    let [s, t, st, dict, at, as_] = fields else {
        bail!("a unit has six fields")
    };
    d.str(string(s)?);
    d.u64(u64_of(t)?);
    let [st0, st1] = struct_fields(st)? else {
        bail!("expected two fields in (ts)")
    };
    d.u64(u64_of(st0)?);
    d.str(string(st1)?);
    let dict = array(dict)?;
    for e in dict {
        let (k, v) = entry(e)?;
        d.str(string(k)?);
        let Value::Int32(v) = v else {
            bail!("expected an i32 value")
        };
        d.i32(*v);
    }
    d.len(dict.len());
    let at = array(at)?;
    for x in at {
        d.u64(u64_of(x)?);
    }
    d.len(at.len());
    let as_ = array(as_)?;
    for s in as_ {
        d.str(string(s)?);
    }
    d.len(as_.len());
    Ok(())
}

/// A body of `count` units (`marshal/mixed`, `big-array`, `str-array`).
pub fn digest_units(body: &[Value], count: usize, d: &mut Digest) -> Result<()> {
    if body.len() != count * 6 {
        bail!("expected {} values, got {}", count * 6, body.len());
    }
    for unit in body.chunks(6) {
        digest_unit(unit, d)?;
    }
    Ok(())
}

/// A body of one `a{sv}` whose variants hold strings (`marshal/asv-dict`).
pub fn digest_asv_dict(body: &[Value], d: &mut Digest) -> Result<()> {
    let [dict] = body else { bail!("expected one a{{sv}}") };
    let dict = array(dict)?;
    for e in dict {
        let (k, v) = entry(e)?;
        d.str(string(k)?);
        let Value::Variant(v) = v else {
            bail!("expected a variant")
        };
        d.str(string(v)?);
    }
    d.len(dict.len());
    Ok(())
}
