//! The reference codec against hand-checked bytes and independent figures.

use super::*;
use crate::payload;

#[test]
fn round_trips_every_scenario_body() {
    for body in [
        payload::mixed(),
        payload::big_array(),
        payload::str_array(),
        payload::asv_dict(),
    ] {
        let bytes = canonical_signal(&body);
        let msg = decode_message(&bytes).unwrap();
        assert_eq!(msg.values, body_values(&body));
        assert_eq!(msg.header.fields, signal_fields(&body.signature()));
    }
}

#[test]
fn known_small_message_bytes() {
    // A signal with body "s" = "hi", checked by hand against the specification.
    let bytes = encode_message(
        MESSAGE_SIGNAL,
        0,
        1,
        &[(FIELD_SIGNATURE, Value::Signature("s".into()))],
        &[Value::Str("hi".into())],
    );
    let expected: Vec<u8> = [
        &b"l\x04\x00\x01"[..],
        &7u32.to_le_bytes(),             // body: u32 len + "hi" + NUL
        &1u32.to_le_bytes(),             // serial
        &7u32.to_le_bytes(),             // fields array: one (yv) of 7 bytes (padding not counted)
        &[8, 1, b'g', 0, 1, b's', 0, 0], // code 8, variant "g", value "s", pad to 8
        &[2, 0, 0, 0, b'h', b'i', 0],
    ]
    .concat();
    assert_eq!(bytes, expected);
}

#[test]
fn body_sizes_match_the_independent_figures() {
    // Figures from ../shared/crate-notes.md, computed by hand elsewhere.
    let len = |b: &Body| canonical_signal(b).len() - decode_header_len(b);
    fn decode_header_len(b: &Body) -> usize {
        let bytes = canonical_signal(b);
        bytes.len() - decode_message(&bytes).unwrap().body.len()
    }
    assert_eq!(len(&payload::mixed()), 2713);
    assert_eq!(len(&payload::big_array()), 82001);
    assert_eq!(len(&payload::str_array()), 563081);
}

#[test]
fn rejects_truncated_and_trailing_bytes() {
    let bytes = canonical_signal(&payload::mixed());
    assert!(decode_message(&bytes[..bytes.len() - 1]).is_err());
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(decode_message(&longer).is_err());
}

#[test]
fn refusals_are_typed_and_say_what_is_wrong() {
    let bytes = canonical_signal(&payload::mixed());
    let short = decode_message(&bytes[..bytes.len() - 1]).unwrap_err();
    assert!(
        matches!(short, WireError::LengthMismatch { given, .. } if given == bytes.len() - 1),
        "{short:?}"
    );

    let mut wrong_endian = bytes.clone();
    wrong_endian[0] = b'x';
    let err = decode_message(&wrong_endian).unwrap_err();
    assert!(matches!(err, WireError::BadEndianness(b'x')), "{err:?}");
    assert_eq!(err.to_string(), "endianness byte is 0x78, expected 'l' or 'B'");

    assert_eq!(
        split_first_type("z").unwrap_err().to_string(),
        "unknown type code 'z' in signature \"z\""
    );
    assert!(matches!(split_first_type("(i"), Err(WireError::UnclosedContainer(_))));
    assert!(matches!(split_first_type(""), Err(WireError::EmptySignature)));

    // Context reads as anyhow's .context() did: "where: what".
    let nested = WireError::context("decoding header fields", WireError::EndsInPadding);
    assert_eq!(
        format!("{:#}", anyhow::Error::from(nested)),
        "decoding header fields: message ends inside padding"
    );
}
