//! `call/fd-passing/<size>`: a memfd holding `size` bytes is passed as a Unix
//! fd (D-Bus type `h`, on a connection that negotiated `NEGOTIATE_UNIX_FD`)
//! to `ReadFd` of a second interface, [`FD_INTERFACE`]; the server reads the
//! whole file through the received fd and answers the digest of its bytes.
//!
//! A second interface on the same object, not a new method of
//! [`super::INTERFACE`]: a server without fd code then answers
//! `UnknownInterface`/`UnknownMethod` by itself, and the benchmark interface
//! (its introspection, the standard tools' checks, the cold-start message
//! counts) stays what every server already serves.
//!
//! Written once here: the client's memfd ([`payload_memfd`]), the server's
//! read ([`read_fd_digest`]) and the digest both compare ([`fd_digest`]).

use std::fs::File;
use std::io::{self, Write};
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;

use crate::digest::Digest;

/// The interface of `ReadFd`, at [`super::OBJECT_PATH`].
pub const FD_INTERFACE: &str = "io.killing.spark.BenchFd";
/// `ReadFd(h) -> (t)`: the digest ([`fd_digest`]) of the whole file behind the fd.
pub const READ_FD: &str = "ReadFd";
pub const READ_FD_IN: &str = "h";
pub const READ_FD_OUT: &str = "t";
/// Sizes of `call/fd-passing/<size>`.
pub const FD_SIZES: [usize; 2] = [4096, 1048576];
/// The most a server reads through a passed fd: the largest scenario size.
/// A larger file (a client's sparse terabyte) is answered with an error,
/// never read into memory: the server must outlive any caller.
pub const FD_READ_LIMIT: usize = FD_SIZES[FD_SIZES.len() - 1];

/// The content of the memfd of `call/fd-passing/<size>`: `EchoBytes`'s payload.
pub fn fd_payload(size: usize) -> Vec<u8> {
    super::echo_payload(size)
}

/// What `ReadFd` answers for `content`, and what the client checks the reply against.
pub fn fd_digest(content: &[u8]) -> u64 {
    let mut d = Digest::new();
    d.bytes(content);
    d.finish()
}

/// The client's memfd, written once at setup: [`fd_payload`]`(size)`. Its
/// file offset is left at the end, as after any write: a server that read
/// from the shared offset instead of offset 0 would read nothing.
pub fn payload_memfd(size: usize) -> io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated name and valid flags; a non-negative result is a new fd we own.
    let fd = unsafe { libc::memfd_create(c"dbus-matrix-fd-passing".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by memfd_create and nothing else owns it.
    let mut file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    file.write_all(&fd_payload(size))?;
    Ok(file.into())
}

/// The server's read: the whole file behind `fd` with `pread` from offset 0
/// (the fd shares the sender's file offset, so plain `read` would depend on
/// it), digested as [`fd_digest`]; a file over [`FD_READ_LIMIT`] is an error.
/// The caller still owns `fd` and closes it.
pub fn read_fd_digest(fd: BorrowedFd<'_>) -> io::Result<u64> {
    // SAFETY: a File that never closes the fd (ManuallyDrop): the caller keeps owning it.
    let file = ManuallyDrop::new(unsafe { File::from_raw_fd(fd.as_raw_fd()) });
    let len = file.metadata()?.len();
    if len > FD_READ_LIMIT as u64 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the passed file holds {len} bytes, more than the {FD_READ_LIMIT} ReadFd reads"),
        ));
    }
    let len = len as usize;
    let mut content = vec![0; len];
    file.read_exact_at(&mut content, 0)?;
    Ok(fd_digest(&content))
}

/// [`read_fd_digest`] for a library that hands out a raw fd number it keeps owning.
pub fn read_raw_fd_digest(fd: std::os::fd::RawFd) -> io::Result<u64> {
    if fd < 0 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "a negative fd"));
    }
    // SAFETY: the library keeps `fd` open for the duration of this call (it owns it).
    read_fd_digest(unsafe { BorrowedFd::borrow_raw(fd) })
}
