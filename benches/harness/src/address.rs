//! D-Bus addresses of Unix sockets, escaped as the D-Bus specification
//! says ("Server Addresses"): a value's bytes outside `[-0-9A-Za-z_/.\*]`
//! are written `%XX`. An unescaped space, comma, `;` or `%` in a socket's
//! path (a $TMPDIR with a space) would make libdbus, GDBus and sd-bus
//! refuse the address or read another one.

use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// `unix:path=PATH`, PATH escaped.
pub fn unix_path(path: &Path) -> String {
    format!("unix:path={}", escape_value(path.as_os_str().as_bytes()))
}

/// A value of an address, each byte outside the optionally-escaped set as `%XX`.
pub fn escape_value(value: &[u8]) -> String {
    let mut out = String::with_capacity(value.len());
    for &b in value {
        if b.is_ascii_alphanumeric() || b"-_/.\\*".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The inverse of [`escape_value`]; `None` for a `%` not followed by two hex digits.
pub fn unescape_value(value: &str) -> Option<Vec<u8>> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The socket path of the first `unix:path=` address of `address` (a list
/// separated by `;`, keys by `,`), unescaped.
pub fn unix_path_of(address: &str) -> Option<PathBuf> {
    address.split(';').find_map(|one| {
        let (transport, keys) = one.split_once(':')?;
        if transport != "unix" {
            return None;
        }
        let value = keys.split(',').find_map(|kv| kv.strip_prefix("path="))?;
        unescape_value(value).map(|v| PathBuf::from(std::ffi::OsString::from_vec(v)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_escaped_as_the_specification_says() {
        assert_eq!(
            unix_path(Path::new("/tmp/a-b_c.d/x*y\\z")),
            "unix:path=/tmp/a-b_c.d/x*y\\z"
        );
        assert_eq!(
            unix_path(Path::new("/tmp/s p,q;r%s&<>'\"=é/bus")),
            "unix:path=/tmp/s%20p%2Cq%3Br%25s%26%3C%3E%27%22%3D%C3%A9/bus"
        );
        for p in ["/tmp/s p,q;r%s&<>'\"=é/bus", "/plain/path"] {
            assert_eq!(unix_path_of(&unix_path(Path::new(p))), Some(PathBuf::from(p)));
        }
        assert_eq!(
            unix_path_of("tcp:host=x;unix:guid=1,path=/run/a%20b"),
            Some(PathBuf::from("/run/a b"))
        );
        assert_eq!(unix_path_of("unix:path=/x%2"), None);
        assert_eq!(unix_path_of("unix:abstract=x"), None);
    }
}
