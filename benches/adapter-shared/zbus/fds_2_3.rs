//! `call/fd-passing/<size>` (`harness::ipc::fd_passing`): `ReadFd(h) -> t` on
//! a second interface of the served object, and its blocking proxy. zbus 3
//! (and zbus 2, which compiles this file) negotiates fd passing
//! (`NEGOTIATE_UNIX_FD`) on Unix-socket connections and carries fds as
//! `zvariant::Fd`, a raw fd number: the message owns the fds it carries
//! (closed when the message drops), the proxy's caller keeps owning its own.

use std::os::fd::AsRawFd;

use anyhow::Result;
use harness::ipc::fd_passing as fd;
use zbus::zvariant::Fd;
use zbus::{blocking, dbus_interface, dbus_proxy, fdo};

/// Why fd passing is not measured peer to peer: the server side fails at random.
pub const NO_P2P_FDS: &str = "zbus 3.15.2's p2p server handshake (handshake.rs, ServerHandshake::read_command) reads \
     the socket with recvmsg 64 bytes at a time and fails with 'Unexpected FDs during handshake' when the client's \
     first message, carrying an fd, arrives in the same read as BEGIN (zbus issue 813, fixed in zbus 4: its test \
     issue_813); measured here: 5 of 40 fd-passing clients were reset. One reason per op and transport in the \
     adapter contract, so this adapter's p2p client says it too";

/// The served `io.killing.spark.BenchFd` interface.
pub struct FdService;

#[dbus_interface(name = "io.killing.spark.BenchFd")]
impl FdService {
    /// Reads the whole file behind `fd` from offset 0. The fd belongs to the
    /// call message, which closes it when it drops after the reply.
    fn read_fd(&self, fd: Fd) -> fdo::Result<u64> {
        fd::read_raw_fd_digest(fd.as_raw_fd()).map_err(|e| fdo::Error::IOError(format!("reading the passed fd: {e}")))
    }
}

#[dbus_proxy(
    interface = "io.killing.spark.BenchFd",
    default_service = "io.killing.spark.Bench",
    default_path = "/io/killing/spark"
)]
trait BenchFd {
    fn read_fd(&self, fd: Fd) -> zbus::Result<u64>;
}

/// The client op: the memfd written once, then one `ReadFd` per call (the
/// message duplicates nothing: it sends the memfd's number with SCM_RIGHTS).
pub fn client(
    conn: &blocking::Connection,
    destination: Option<&str>,
    size: usize,
) -> Result<impl FnMut() -> Result<u64>> {
    let builder = BenchFdProxyBlocking::builder(conn);
    let proxy = match destination {
        Some(name) => builder.destination(name.to_owned())?.build()?,
        None => builder.build()?,
    };
    let memfd = fd::payload_memfd(size)?;
    Ok(move || Ok(proxy.read_fd(Fd::from(memfd.as_raw_fd()))?))
}
