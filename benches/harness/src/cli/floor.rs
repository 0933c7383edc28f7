//! The physical floor of IPC, measured by the raw baseline only: no D-Bus,
//! just bytes through a Unix socket pair.

use std::io::{Read, Write};

use anyhow::Result;

use crate::digest::Digest;

/// The physical floor: `size` bytes written to one end of a Unix socket pair
/// and echoed back by a thread at the other end.
pub(super) fn raw_socket_ping_pong(size: usize) -> Result<impl FnMut() -> Result<u64>> {
    use std::os::unix::net::UnixStream;
    let (mut client, mut server) = UnixStream::pair()?;
    std::thread::spawn(move || {
        let mut buf = vec![0u8; size];
        while server.read_exact(&mut buf).is_ok() {
            if server.write_all(&buf).is_err() {
                break;
            }
        }
    });
    let payload = crate::ipc::echo_payload(size);
    let mut reply = vec![0u8; size];
    Ok(move || {
        client.write_all(&payload)?;
        client.read_exact(&mut reply)?;
        let mut d = Digest::new();
        d.bytes(&reply);
        Ok(d.finish())
    })
}
