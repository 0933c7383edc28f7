//! An order-sensitive, cheap digest that demarshal adapters feed every decoded
//! field into. It makes "read every field" checkable (the digest must match the
//! canonical one) and costs the same for every library.

/// FxHash-style mixing over 64-bit words. Not cryptographic; it only has to
/// change when any field, length or order changes.
#[derive(Clone, Debug)]
pub struct Digest {
    h: u64,
}

/// The multiplier of each mixing step (exported by `crate::canon`).
pub const K: u64 = 0x517c_c1b7_2722_0a95;
/// The state before the first word.
pub const INIT: u64 = 0xcbf2_9ce4_8422_2325;
/// The left rotation of each mixing step.
pub const ROTATE: u32 = 5;

impl Default for Digest {
    fn default() -> Self {
        Self::new()
    }
}

impl Digest {
    pub fn new() -> Self {
        Digest { h: INIT }
    }

    #[inline]
    fn word(&mut self, w: u64) {
        self.h = (self.h.rotate_left(ROTATE) ^ w).wrapping_mul(K);
    }

    #[inline]
    pub fn u64(&mut self, v: u64) {
        self.word(v);
    }

    #[inline]
    pub fn i32(&mut self, v: i32) {
        self.word(v as u32 as u64);
    }

    /// A container length (number of elements, not bytes).
    #[inline]
    pub fn len(&mut self, n: usize) {
        self.word(n as u64 | 1 << 63);
    }

    /// A string: its length, then every byte.
    #[inline]
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    #[inline]
    pub fn bytes(&mut self, b: &[u8]) {
        self.word(b.len() as u64);
        let mut chunks = b.chunks_exact(8);
        for c in &mut chunks {
            self.word(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut tail = [0u8; 8];
            tail[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(tail));
        }
    }

    pub fn finish(&self) -> u64 {
        self.h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_boundaries_matter() {
        let mut a = Digest::new();
        a.str("ab");
        a.str("c");
        let mut b = Digest::new();
        b.str("a");
        b.str("bc");
        assert_ne!(a.finish(), b.finish());
        let mut c = Digest::new();
        c.u64(1);
        c.u64(2);
        let mut d = Digest::new();
        d.u64(2);
        d.u64(1);
        assert_ne!(c.finish(), d.finish());
    }
}
