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
use harness::ipc as h;
use harness::ipc::fd_passing as fd;

use crate::WireResult;

// The server side, as rustbus-0.19's, over this crate's message types.
#[path = "../../../adapter-shared/rustbus/fds_server.rs"]
mod server;
pub use server::{is_fd_call, read_fd_reply};

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
