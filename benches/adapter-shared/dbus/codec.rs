//! The dbus-rs 0.9 codec: `IterAppend` appends each argument (`Dict` keeps
//! insertion order), libdbus marshals the message, and `Message::demarshal` +
//! `Iter::read` read typed values back (strings are borrowed from libdbus,
//! fixed-size arrays read as slices). Shared by the dbus-0.9 and dbus-tokio-0.7
//! adapters (dbus-tokio has no codec of its own: it drives the same dbus-rs
//! messages), which include this file by `#[path]`.

use anyhow::{anyhow, Context, Result};
use dbus::arg::{Array, Dict, Iter, IterAppend, Variant};
use dbus::Message;
use harness::payload::{self, Body, Unit};
use harness::{Codec, Digest, Shape};

pub struct DbusRs;

pub fn append_unit(a: &mut IterAppend, u: &Unit) {
    a.append(u.s.as_str());
    a.append(u.t);
    a.append((u.st.0, u.st.1.as_str()));
    a.append(Dict::new(u.dict.iter().map(|(k, v)| (k.as_str(), *v))));
    a.append(u.at.as_slice());
    a.append(Array::new(u.as_.iter().map(String::as_str)));
}

fn read<'a, T: dbus::arg::Arg + dbus::arg::Get<'a>>(it: &mut Iter<'a>) -> Result<T> {
    it.read::<T>().map_err(|e| anyhow!("{e}"))
}

fn digest_unit(it: &mut Iter, d: &mut Digest) -> Result<()> {
    d.str(read::<&str>(it)?);
    d.u64(read::<u64>(it)?);
    let (st0, st1): (u64, &str) = read(it)?;
    d.u64(st0);
    d.str(st1);
    let mut n = 0;
    for (k, v) in read::<Dict<&str, i32, _>>(it)? {
        d.str(k);
        d.i32(v);
        n += 1;
    }
    d.len(n);
    let at: &[u64] = read(it)?;
    for x in at {
        d.u64(*x);
    }
    d.len(at.len());
    let mut n = 0;
    for s in read::<Array<&str, _>>(it)? {
        d.str(s);
        n += 1;
    }
    d.len(n);
    Ok(())
}

impl Codec for DbusRs {
    type Wire = Vec<u8>;

    fn marshal(&mut self, body: &Body) -> Result<Vec<u8>> {
        let mut msg =
            Message::new_signal(payload::PATH, payload::INTERFACE, payload::MEMBER).map_err(|e| anyhow!(e))?;
        {
            let mut a = IterAppend::new(&mut msg);
            match body {
                Body::Units(units) => units.iter().for_each(|u| append_unit(&mut a, u)),
                Body::AsvDict(entries) => {
                    a.append(Dict::new(
                        entries.iter().map(|(k, v)| (k.as_str(), Variant(v.as_str()))),
                    ));
                }
            }
        }
        msg.set_serial(payload::SERIAL);
        // libdbus owns the marshalled bytes only for the callback: copy them out.
        let mut out = Vec::new();
        msg.marshal(|bytes| -> Result<(), ()> {
            out.extend_from_slice(bytes);
            Ok(())
        })
        .map_err(|()| anyhow!("marshal failed"))?;
        Ok(out)
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, d: &mut Digest) -> Result<()> {
        let msg = Message::demarshal(bytes).context("libdbus rejected the message")?;
        let mut it = msg.iter_init();
        match shape {
            Shape::Units { count } => {
                for _ in 0..count {
                    digest_unit(&mut it, d)?;
                }
            }
            Shape::AsvDict => {
                let mut n = 0;
                for (k, v) in read::<Dict<&str, Variant<&str>, _>>(&mut it)? {
                    d.str(k);
                    d.str(v.0);
                    n += 1;
                }
                d.len(n);
            }
        }
        Ok(())
    }
}
