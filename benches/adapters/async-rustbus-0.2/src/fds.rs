//! `call/fd-passing/<size>` (`harness::ipc::fd_passing`): `ReadFd(h) -> t` on
//! the second interface. async-rustbus negotiates fd passing when a connection
//! is made with `with_fd` (`RpcConn::connect_to_path(_, true)`: NEGOTIATE_UNIX_FD
//! in its handshake, SCM_RIGHTS on send and receive); a pushed `&dyn AsRawFd`
//! is duplicated into the message, whose sender closes the duplicate once
//! written, and received fds are `UnixFd`s kept in the message (closed when it
//! drops). Only the fd-passing client and the server negotiate: every other
//! client connection stays as it was.

use std::os::fd::AsRawFd;

use anyhow::Result;
use async_rustbus::rustbus_core::message_builder::{MarshalledMessage, MessageBuilder};
use async_rustbus::rustbus_core::wire::UnixFd;
use async_rustbus::RpcConn;
use harness::ipc::fd_passing as fd;
use harness::ipc::{self as h, standard};

use crate::WireResult;

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

/// One `ReadFd` call passing `memfd` (duplicated into a new message each
/// call: the sender takes and closes the message's fds), its digest read back.
pub async fn read_fd(conn: &RpcConn, destination: &str, memfd: &dyn AsRawFd) -> Result<u64> {
    let mut msg = MessageBuilder::new()
        .call(fd::READ_FD)
        .with_interface(fd::FD_INTERFACE)
        .on(h::OBJECT_PATH)
        .at(destination)
        .build();
    msg.body.push_param(memfd).wire()?;
    let reply = crate::ipc::call_msg(conn, &msg).await?;
    reply.body.parser().get().wire()
}
