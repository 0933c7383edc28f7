//! Verification before timing: what an adapter emits must be the canonical
//! test signal, and what it decodes must be the canonical values.
//!
//! Allowed differences (and only these), reported as notes:
//! - the flags byte may carry NO_REPLY_EXPECTED (0x1), which libdbus sets on signals;
//! - the four header fields PATH, INTERFACE, MEMBER, SIGNATURE may come in any order.
//!
//! Everything else must match exactly: little endian, type SIGNAL, version 1,
//! serial 1, exactly those four fields with the canonical values (no destination,
//! no sender), and body bytes identical to the canonical body.

use anyhow::{bail, ensure, Context, Result};

use crate::payload::{self, Body};
use crate::wire;

/// A passed verification, with the allowed differences it saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    pub notes: Vec<String>,
}

pub fn verify_signal(bytes: &[u8], body: &Body) -> Result<Verdict> {
    let msg = wire::decode_message(bytes).context("the emitted bytes are not one well-formed D-Bus message")?;
    let h = &msg.header;
    let mut notes = Vec::new();
    ensure!(
        h.endian == b'l',
        "endianness is {:?}, the scenario requires little endian",
        h.endian as char
    );
    ensure!(
        h.message_type == wire::MESSAGE_SIGNAL,
        "message type is {}, expected 4 (signal)",
        h.message_type
    );
    ensure!(h.version == 1, "protocol version is {}, expected 1", h.version);
    ensure!(
        h.serial == payload::SERIAL,
        "serial is {}, expected {}",
        h.serial,
        payload::SERIAL
    );
    match h.flags {
        0 => {}
        wire::FLAG_NO_REPLY_EXPECTED => notes.push("flags: NO_REPLY_EXPECTED set (allowed)".to_string()),
        f => bail!("flags byte is {f:#04x}; only 0 or NO_REPLY_EXPECTED (0x1) are allowed"),
    }

    let canonical = wire::signal_fields(&body.signature());
    ensure!(
        h.fields.len() == canonical.len(),
        "header has fields {:?}, expected exactly PATH, INTERFACE, MEMBER, SIGNATURE",
        h.fields.iter().map(|(c, _)| field_name(*c)).collect::<Vec<_>>()
    );
    for (code, want) in &canonical {
        let got = h
            .field(*code)
            .with_context(|| format!("header field {} is missing", field_name(*code)))?;
        ensure!(
            got == want,
            "header field {}: got {got:?}, expected {want:?}",
            field_name(*code)
        );
    }
    let order: Vec<u8> = h.fields.iter().map(|(c, _)| *c).collect();
    let canonical_order: Vec<u8> = canonical.iter().map(|(c, _)| *c).collect();
    if order != canonical_order {
        notes.push(format!(
            "header field order {} (allowed)",
            order.iter().map(|c| field_name(*c)).collect::<Vec<_>>().join(",")
        ));
    }

    let canonical_body = {
        let full = wire::canonical_signal(body);
        let start = full.len() - wire::decode_message(&full)?.body.len();
        full[start..].to_vec()
    };
    if msg.body != canonical_body {
        let at = msg.body.iter().zip(&canonical_body).position(|(a, b)| a != b);
        let first_value_diff = msg
            .values
            .iter()
            .zip(wire::body_values(body))
            .position(|(a, b)| *a != b);
        bail!(
            "body bytes differ from the canonical body ({} vs {} bytes; first differing byte at {}; first differing value #{})",
            msg.body.len(),
            canonical_body.len(),
            at.map_or("the end".into(), |a| a.to_string()),
            first_value_diff.map_or("none".into(), |v| v.to_string()),
        );
    }
    Ok(Verdict { notes })
}

/// Checks a demarshal digest against the canonical one.
pub fn verify_digest(got: u64, body: &Body) -> Result<()> {
    let want = body.digest();
    ensure!(
        got == want,
        "digest of the decoded fields is {got:016x}, expected {want:016x}: a field was not read, read wrongly or out of order"
    );
    Ok(())
}

pub fn field_name(code: u8) -> &'static str {
    match code {
        wire::FIELD_PATH => "PATH",
        wire::FIELD_INTERFACE => "INTERFACE",
        wire::FIELD_MEMBER => "MEMBER",
        wire::FIELD_ERROR_NAME => "ERROR_NAME",
        wire::FIELD_REPLY_SERIAL => "REPLY_SERIAL",
        wire::FIELD_DESTINATION => "DESTINATION",
        wire::FIELD_SENDER => "SENDER",
        wire::FIELD_SIGNATURE => "SIGNATURE",
        wire::FIELD_UNIX_FDS => "UNIX_FDS",
        _ => "UNKNOWN",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{encode_message, Value, FIELD_DESTINATION};

    fn mixed_with(fields: Vec<(u8, Value)>, flags: u8, serial: u32) -> Vec<u8> {
        let body = payload::mixed();
        encode_message(wire::MESSAGE_SIGNAL, flags, serial, &fields, &wire::body_values(&body))
    }

    #[test]
    fn canonical_passes_without_notes() {
        let body = payload::mixed();
        assert_eq!(
            verify_signal(&wire::canonical_signal(&body), &body).unwrap(),
            Verdict::default()
        );
    }

    #[test]
    fn allowed_differences_pass_with_notes() {
        let body = payload::mixed();
        let mut fields = wire::signal_fields(&body.signature());
        fields.reverse();
        let v = verify_signal(&mixed_with(fields, 1, 1), &body).unwrap();
        assert_eq!(v.notes.len(), 2, "{v:?}");
    }

    #[test]
    fn real_differences_fail() {
        let body = payload::mixed();
        let sig = body.signature();
        // Wrong serial, extra destination, bad flags, changed body byte.
        assert!(verify_signal(&mixed_with(wire::signal_fields(&sig), 0, 2), &body).is_err());
        let mut extra = wire::signal_fields(&sig);
        extra.push((FIELD_DESTINATION, Value::Str("org.x".into())));
        assert!(verify_signal(&mixed_with(extra, 0, 1), &body).is_err());
        assert!(verify_signal(&mixed_with(wire::signal_fields(&sig), 2, 1), &body).is_err());
        let mut bytes = wire::canonical_signal(&body);
        let last = bytes.len() - 2;
        bytes[last] ^= 1;
        assert!(verify_signal(&bytes, &body).is_err());
        // Another scenario's bytes are not this scenario's.
        assert!(verify_signal(&wire::canonical_signal(&payload::big_array()), &body).is_err());
    }

    #[test]
    fn digest_must_match() {
        let body = payload::str_array();
        assert!(verify_digest(body.digest(), &body).is_ok());
        assert!(verify_digest(payload::perturbed(&body).digest(), &body).is_err());
    }
}
