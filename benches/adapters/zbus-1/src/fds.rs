//! `call/fd-passing/<size>` (`harness::ipc::fd_passing`): `ReadFd(h) -> t` on
//! a second `#[dbus_interface]` of the served object, and its blocking
//! `#[dbus_proxy]`. zbus 1's client handshake sends NEGOTIATE_UNIX_FD and its
//! socket passes fds with SCM_RIGHTS; fds travel as `zvariant::Fd`, a raw fd
//! number: the message owns the fds it carries (closed when it drops), the
//! proxy's caller keeps owning its own.

use std::os::unix::io::AsRawFd;

use anyhow::Result;
use harness::ipc::fd_passing as fd;
use harness::ipc::{self as h, Transport};
use zbus::{dbus_interface, dbus_proxy, fdo};
use zvariant::Fd;

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

/// The client op: the memfd written once, then one `ReadFd` per call.
pub fn client(t: &Transport, size: usize) -> Result<impl FnMut() -> Result<u64>> {
    let conn = super::ipc::connect(t)?;
    let proxy = BenchFdProxy::new_for_owned(conn, t.service_name().to_owned(), h::OBJECT_PATH.to_owned())?;
    let memfd = fd::payload_memfd(size)?;
    Ok(move || Ok(proxy.read_fd(Fd::from(memfd.as_raw_fd()))?))
}
