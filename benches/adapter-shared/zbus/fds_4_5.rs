//! `call/fd-passing/<size>` (`harness::ipc::fd_passing`): `ReadFd(h) -> t` on
//! a second interface of the served object, and its blocking proxy. zbus
//! negotiates fd passing (`NEGOTIATE_UNIX_FD`) on every Unix-socket
//! connection and carries fds as `zvariant::Fd`/`OwnedFd` (SCM_RIGHTS). Compiled
//! by adapter-zbus-4 and -5 (the same fd-passing API) through `#[path]`.

use std::os::fd::AsFd;

use anyhow::Result;
use harness::ipc::fd_passing as fd;
use zbus::zvariant::{Fd, OwnedFd as WireFd};
use zbus::{blocking, fdo, interface, proxy};

/// The served `io.killing.spark.BenchFd` interface.
pub struct FdService;

#[interface(name = "io.killing.spark.BenchFd")]
impl FdService {
    /// Reads the whole file behind `fd` from offset 0; the received fd is
    /// closed when `fd` drops at the end of the call.
    fn read_fd(&self, fd: WireFd) -> fdo::Result<u64> {
        fd::read_fd_digest(fd.as_fd()).map_err(|e| fdo::Error::IOError(format!("reading the passed fd: {e}")))
    }
}

#[proxy(
    interface = "io.killing.spark.BenchFd",
    default_service = "io.killing.spark.Bench",
    default_path = "/io/killing/spark"
)]
trait BenchFd {
    fn read_fd(&self, fd: Fd<'_>) -> zbus::Result<u64>;
}

/// The client op: the memfd written once, then one `ReadFd` per call.
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
    Ok(move || Ok(proxy.read_fd(Fd::from(memfd.as_fd()))?))
}
