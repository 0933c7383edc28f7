//! D-Bus over a plain Unix stream, the few steps every hand-written
//! connection takes (the harness's raw server, the bus crate's monitor and
//! floor client, tests that play a hostile peer): SASL EXTERNAL with our uid,
//! and reading one whole message off the stream. Owned here, once.

use std::io::{Read, Write};

use anyhow::{bail, ensure, Context, Result};

/// Authenticates with SASL EXTERNAL as this process's uid, optionally
/// negotiates Unix fd passing, and sends BEGIN: what follows is messages.
/// Reads byte by byte, so nothing binary is read ahead.
pub fn authenticate<S: Read + Write>(stream: &mut S, unix_fds: bool) -> Result<()> {
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let hex: String = uid.to_string().bytes().map(|b| format!("{b:02x}")).collect();
    stream
        .write_all(format!("\0AUTH EXTERNAL {hex}\r\n").as_bytes())
        .context("sending AUTH EXTERNAL")?;
    let ok = line(stream)?;
    ensure!(ok.starts_with("OK "), "authentication refused: {ok:?}");
    if unix_fds {
        stream
            .write_all(b"NEGOTIATE_UNIX_FD\r\n")
            .context("sending NEGOTIATE_UNIX_FD")?;
        let agreed = line(stream)?;
        ensure!(
            agreed.starts_with("AGREE_UNIX_FD"),
            "Unix fd passing refused: {agreed:?}"
        );
    }
    stream.write_all(b"BEGIN\r\n").context("sending BEGIN")
}

/// One line of the SASL exchange, without its line end.
fn line(stream: &mut impl Read) -> Result<String> {
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while line.len() < 512 {
        stream.read_exact(&mut b).context("reading the SASL exchange")?;
        if b[0] == b'\n' {
            return Ok(String::from_utf8_lossy(&line).trim_end().to_string());
        }
        line.push(b[0]);
    }
    bail!("a SASL line longer than 512 bytes")
}

/// The bytes of one whole message (either byte order), undecoded.
pub fn read_frame(stream: &mut impl Read) -> Result<Vec<u8>> {
    let mut fixed = [0u8; 16];
    stream.read_exact(&mut fixed).context("receiving a message header")?;
    ensure!(
        matches!(fixed[0], b'l' | b'B'),
        "not a D-Bus message: endianness byte {:#04x}",
        fixed[0]
    );
    let word = |at: usize| {
        let b: [u8; 4] = fixed[at..at + 4].try_into().expect("4 bytes");
        if fixed[0] == b'B' {
            u32::from_be_bytes(b) as usize
        } else {
            u32::from_le_bytes(b) as usize
        }
    };
    // The header fields are padded to 8; the body follows.
    let header_len = (16 + word(12)).div_ceil(8) * 8;
    let mut bytes = fixed.to_vec();
    bytes.resize(header_len + word(4), 0);
    stream.read_exact(&mut bytes[16..]).context("receiving a message")?;
    Ok(bytes)
}

/// One whole message, decoded.
pub fn read_message(stream: &mut impl Read) -> Result<crate::wire::Message> {
    Ok(crate::wire::decode_message(&read_frame(stream)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{self, Value};

    #[test]
    fn a_frame_is_read_whole_and_no_further() {
        let fields = [
            (wire::FIELD_MEMBER, Value::Str("Ping".into())),
            (wire::FIELD_SIGNATURE, Value::Signature("u".into())),
        ];
        let one = wire::encode_message(wire::MESSAGE_SIGNAL, 0, 7, &fields, &[Value::U32(3)]);
        let mut two = one.clone();
        two.extend_from_slice(&one);
        let mut r = &two[..];
        assert_eq!(read_frame(&mut r).unwrap(), one);
        assert_eq!(read_message(&mut r).unwrap().header.serial, 7);
        assert!(read_frame(&mut r).is_err(), "nothing is left");
        assert!(read_frame(&mut &b"x\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"[..]).is_err());
    }
}
