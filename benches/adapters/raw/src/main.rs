//! The speed-of-light baseline: writes and reads exactly the scenario shapes
//! with no generic machinery, one allocation per message. Not a D-Bus library;
//! it exists so every library's cost can be read as a ratio to this floor.

use anyhow::{bail, ensure, Context, Result};
use harness::payload::{self, Body, Unit};
use harness::{Codec, Digest, Shape};

harness::adapter_main!(
    id: "raw",
    library: "raw",
    version: env!("CARGO_PKG_VERSION"),
    runtime: "blocking: the calling thread",
    codec: Raw,
    // Over IPC the baseline measures only the raw-socket floor (the harness runs it).
    ipc: harness::ipc::NoTransport("raw is a baseline: over IPC it measures only baseline/raw-socket")
);

struct Raw;

struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    #[inline]
    fn pad(&mut self, align: usize) {
        let n = (align - self.buf.len() % align) % align;
        self.buf.extend_from_slice(&[0u8; 8][..n]);
    }
    #[inline]
    fn u32(&mut self, v: u32) {
        self.pad(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    #[inline]
    fn u64(&mut self, v: u64) {
        self.pad(8);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    #[inline]
    fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
    }
    fn sig(&mut self, s: &str) {
        self.buf.push(s.len() as u8);
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
    }
    /// Writes a u32 placeholder for an array length, returns where it is.
    fn begin_array(&mut self, elem_align: usize) -> (usize, usize) {
        self.u32(0);
        let at = self.buf.len() - 4;
        self.pad(elem_align);
        (at, self.buf.len())
    }
    fn end_array(&mut self, (at, start): (usize, usize)) {
        let len = (self.buf.len() - start) as u32;
        self.buf[at..at + 4].copy_from_slice(&len.to_le_bytes());
    }
    fn field(&mut self, code: u8, sig: &str, value: &str) {
        self.pad(8);
        self.buf.push(code);
        self.sig(sig);
        if sig == "g" {
            self.sig(value);
        } else {
            self.str(value);
        }
    }
    fn unit(&mut self, u: &Unit) {
        self.str(&u.s);
        self.u64(u.t);
        self.pad(8);
        self.u64(u.st.0);
        self.str(&u.st.1);
        let a = self.begin_array(8);
        for (k, v) in &u.dict {
            self.pad(8);
            self.str(k);
            self.u32(*v as u32);
        }
        self.end_array(a);
        let a = self.begin_array(8);
        for x in &u.at {
            self.buf.extend_from_slice(&x.to_le_bytes());
        }
        self.end_array(a);
        let a = self.begin_array(4);
        for s in &u.as_ {
            self.str(s);
        }
        self.end_array(a);
    }
}

fn estimated_len(body: &Body) -> usize {
    let strings = |v: &[String]| v.iter().map(|s| s.len() + 8).sum::<usize>();
    256 + match body {
        Body::Units(units) => units
            .iter()
            .map(|u| 96 + u.dict.len() * 24 + u.at.len() * 8 + strings(&u.as_))
            .sum::<usize>(),
        Body::AsvDict(e) => e.iter().map(|(k, v)| k.len() + v.len() + 24).sum(),
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    #[inline]
    fn pad(&mut self, align: usize) {
        self.pos += (align - self.pos % align) % align;
    }
    #[inline]
    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let s = self.buf.get(self.pos..self.pos + n).context("message too short")?;
        self.pos += n;
        Ok(s)
    }
    #[inline]
    fn u32(&mut self) -> Result<u32> {
        self.pad(4);
        Ok(u32::from_le_bytes(self.bytes(4)?.try_into().unwrap()))
    }
    #[inline]
    fn u64(&mut self) -> Result<u64> {
        self.pad(8);
        Ok(u64::from_le_bytes(self.bytes(8)?.try_into().unwrap()))
    }
    #[inline]
    fn str(&mut self) -> Result<&'a str> {
        let n = self.u32()? as usize;
        let s = self.bytes(n + 1)?;
        ensure!(s[n] == 0, "string not NUL-terminated");
        Ok(std::str::from_utf8(&s[..n])?)
    }
    fn sig(&mut self) -> Result<&'a [u8]> {
        let n = self.bytes(1)?[0] as usize;
        let s = self.bytes(n + 1)?;
        Ok(&s[..n])
    }
    /// Reads an array header; returns the end offset of its elements.
    fn array(&mut self, elem_align: usize) -> Result<usize> {
        let len = self.u32()? as usize;
        self.pad(elem_align);
        Ok(self.pos + len)
    }
    /// Reads an array, calling `each` per element; then digests the count.
    fn each<F>(&mut self, elem_align: usize, d: &mut Digest, mut each: F) -> Result<()>
    where
        F: FnMut(&mut Self, &mut Digest) -> Result<()>,
    {
        let end = self.array(elem_align)?;
        let mut n = 0;
        while self.pos < end {
            self.pad(elem_align);
            each(self, d)?;
            n += 1;
        }
        ensure!(self.pos == end, "array elements overrun the array length");
        d.len(n);
        Ok(())
    }
}

impl Codec for Raw {
    type Wire = Vec<u8>;

    fn marshal(&mut self, body: &Body) -> Result<Vec<u8>> {
        let sig = body.signature();
        let mut w = Writer {
            buf: Vec::with_capacity(estimated_len(body)),
        };
        w.buf.extend_from_slice(&[b'l', 4, 0, 1, 0, 0, 0, 0]);
        w.buf.extend_from_slice(&payload::SERIAL.to_le_bytes());
        let fields = w.begin_array(8);
        w.field(1, "o", payload::PATH);
        w.field(2, "s", payload::INTERFACE);
        w.field(3, "s", payload::MEMBER);
        w.field(8, "g", &sig);
        w.end_array(fields);
        w.pad(8);
        let body_start = w.buf.len();
        match body {
            Body::Units(units) => units.iter().for_each(|u| w.unit(u)),
            Body::AsvDict(entries) => {
                let a = w.begin_array(8);
                for (k, v) in entries {
                    w.pad(8);
                    w.str(k);
                    w.sig("s");
                    w.str(v);
                }
                w.end_array(a);
            }
        }
        let body_len = (w.buf.len() - body_start) as u32;
        w.buf[4..8].copy_from_slice(&body_len.to_le_bytes());
        Ok(w.buf)
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, d: &mut Digest) -> Result<()> {
        ensure!(bytes.len() >= 16 && bytes[0] == b'l', "not a little-endian message");
        let mut r = Reader { buf: bytes, pos: 12 };
        let fields_end = r.array(8)?;
        r.pos = fields_end;
        r.pad(8);
        match shape {
            Shape::Units { count } => {
                for _ in 0..count {
                    d.str(r.str()?);
                    d.u64(r.u64()?);
                    r.pad(8);
                    d.u64(r.u64()?);
                    d.str(r.str()?);
                    r.each(8, d, |r, d| {
                        d.str(r.str()?);
                        d.i32(r.u32()? as i32);
                        Ok(())
                    })?;
                    r.each(8, d, |r, d| {
                        d.u64(r.u64()?);
                        Ok(())
                    })?;
                    r.each(4, d, |r, d| {
                        d.str(r.str()?);
                        Ok(())
                    })?;
                }
            }
            Shape::AsvDict => {
                r.each(8, d, |r, d| {
                    d.str(r.str()?);
                    if r.sig()? != b"s" {
                        bail!("variant is not a string");
                    }
                    d.str(r.str()?);
                    Ok(())
                })?;
            }
        }
        Ok(())
    }
}
