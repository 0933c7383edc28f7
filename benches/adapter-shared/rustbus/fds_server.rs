//! `call/fd-passing/<size>` (`harness::ipc::fd_passing`), the server side:
//! `ReadFd(h) -> t` on the second interface. rustbus negotiates fd passing
//! when a connection is made with `with_unix_fd` (`DuplexConn::connect_to_bus(_, true)`)
//! and keeps received fds in the message (`UnixFd`, closed when the message drops).
//! Compiled by rustbus-0.19 (as its `fds`) and async-rustbus-0.2 (as `fds::server`),
//! whose `MarshalledMessage` and `UnixFd` are other types with the same fields and
//! methods: the including module names them (`super::`).

use harness::ipc::fd_passing as fd;
use harness::ipc::standard;

use super::{MarshalledMessage, UnixFd};

/// Whether `call` is addressed to the fd-passing interface.
pub fn is_fd_call(call: &MarshalledMessage) -> bool {
    call.dynheader.interface.as_deref() == Some(fd::FD_INTERFACE)
}

/// The reply to a call of the fd-passing interface: the digest of the file
/// behind the received fd, or (error name, message).
pub fn read_fd_reply(call: &MarshalledMessage) -> Result<MarshalledMessage, (&'static str, String)> {
    let member = call.dynheader.member.as_deref().unwrap_or_default();
    if member != fd::READ_FD {
        return Err((
            standard::UNKNOWN_METHOD,
            format!("no method {}.{member}", fd::FD_INTERFACE),
        ));
    }
    if call.get_sig() != fd::READ_FD_IN {
        return Err((standard::INVALID_ARGS, format!("ReadFd takes \"{}\"", fd::READ_FD_IN)));
    }
    let received: UnixFd = call
        .body
        .parser()
        .get()
        .map_err(|e| (standard::INVALID_ARGS, format!("{e:?}")))?;
    let raw = received
        .get_raw_fd()
        .ok_or((standard::FAILED, "the received fd was already taken".to_string()))?;
    let digest = fd::read_raw_fd_digest(raw).map_err(|e| (standard::FAILED, format!("reading the passed fd: {e}")))?;
    let mut reply = call.dynheader.make_response();
    reply
        .body
        .push_param(digest)
        .map_err(|e| (standard::FAILED, format!("{e:?}")))?;
    Ok(reply)
}
