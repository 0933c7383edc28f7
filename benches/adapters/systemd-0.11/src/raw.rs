//! What the `systemd` crate 0.11.1 does not wrap, called through
//! `libsystemd-sys` 0.10 (sd-bus's C API, libsystemd 252):
//!
//! - a connection to an address: the crate opens only the default user and
//!   system buses (`Bus::open_user`, `Bus::open_system`, ...), so a connection
//!   is `sd_bus_new` + `sd_bus_set_address` + `sd_bus_set_bus_client` +
//!   `sd_bus_start`, then owned by the crate's `Bus`;
//! - the server end of a peer-to-peer connection on an accepted socket
//!   (`sd_bus_set_fd` + `sd_bus_set_server` + `sd_bus_start`);
//! - processing that leaves unhandled calls to sd-bus (`sd_bus_process` with
//!   no message pointer; see [`process`]);
//! - match rules (`sd_bus_add_match`);
//! - a method call without a destination (peer to peer): the crate's
//!   `new_method_call` requires a `BusName`;
//! - arrays of fixed-size elements in one copy (`sd_bus_message_append_array`,
//!   `sd_bus_message_read_array`, what C code uses for `ay`): the crate's
//!   `Vec<u8>`/`&[u64]` go through `append_basic`/`read_basic`, one C call per element.

use std::ffi::CStr;
use std::os::fd::{IntoRawFd, OwnedFd};
use std::ptr;

use anyhow::{bail, Result};
use foreign_types::{ForeignType, ForeignTypeRef};
use libsystemd_sys::bus as ffi;
use libsystemd_sys::id128::{sd_id128_randomize, sd_id128_t};
use libsystemd_sys::{c_char, c_int, c_void};
use systemd::bus::{Bus, BusRef, Message, MessageRef};

/// A negative sd-bus return value as an error naming the call.
fn check(r: c_int, call: &str) -> Result<c_int> {
    if r < 0 {
        bail!("{call}: {}", std::io::Error::from_raw_os_error(-r));
    }
    Ok(r)
}

/// A new, unstarted bus object, owned by the crate's `Bus` (unref'd on drop).
fn new_bus() -> Result<Bus> {
    let mut raw = ptr::null_mut();
    // SAFETY: on success sd_bus_new stores one owned reference, handed to Bus.
    check(unsafe { ffi::sd_bus_new(&mut raw) }, "sd_bus_new")?;
    Ok(unsafe { Bus::from_ptr(raw) })
}

/// A client connection to `address` (`unix:path=…`). `bus_client`: a bus
/// (Hello is sent first) or a peer (SASL only). sd-bus connects and starts
/// authenticating here; the first call (or `unique_name`) waits for the rest.
pub fn connect(address: &CStr, bus_client: bool) -> Result<Bus> {
    let bus = new_bus()?;
    let raw = bus.as_ptr();
    // SAFETY: `raw` is a live, unstarted bus; `address` outlives the call (sd-bus copies it).
    unsafe {
        check(ffi::sd_bus_set_address(raw, address.as_ptr()), "sd_bus_set_address")?;
        check(
            ffi::sd_bus_set_bus_client(raw, bus_client as c_int),
            "sd_bus_set_bus_client",
        )?;
        check(ffi::sd_bus_start(raw), "sd_bus_start")?;
    }
    Ok(bus)
}

/// The server end of a peer-to-peer connection on the accepted socket `fd`
/// (which the bus owns and closes). Authentication (SASL EXTERNAL, answered
/// by sd-bus) runs in the processing loop.
pub fn serve_peer(fd: OwnedFd) -> Result<Bus> {
    let bus = new_bus()?;
    let raw = bus.as_ptr();
    let fd = fd.into_raw_fd();
    // SAFETY: `raw` is a live, unstarted bus; after sd_bus_set_fd succeeds the bus owns `fd`.
    unsafe {
        if let Err(e) = check(ffi::sd_bus_set_fd(raw, fd, fd), "sd_bus_set_fd") {
            libc_close(fd);
            return Err(e);
        }
        let mut server_id = sd_id128_t { bytes: [0; 16] };
        check(sd_id128_randomize(&mut server_id), "sd_id128_randomize")?;
        check(ffi::sd_bus_set_server(raw, 1, server_id), "sd_bus_set_server")?;
        check(ffi::sd_bus_start(raw), "sd_bus_start")?;
    }
    Ok(bus)
}

fn libc_close(fd: c_int) {
    // SAFETY: `fd` was ours (into_raw_fd) and nothing else took it.
    drop(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
}

/// One step of sd-bus's processing; `false` when there was nothing to do
/// (then wait). No message is handed back, so a method call no handler
/// took is answered by sd-bus itself (`UnknownObject`). The crate's
/// `BusRef::process` always asks for that message back, and sd-bus then
/// leaves it unanswered: peer to peer, where no bus daemon replies either,
/// a call to an unknown object (gdbus's Hello) waited for its timeout.
pub fn process(bus: &BusRef) -> Result<bool> {
    // SAFETY: a live bus; a null `ret` is allowed (sd-bus then keeps or answers the message).
    let r = check(
        unsafe { ffi::sd_bus_process(bus.as_ptr(), ptr::null_mut()) },
        "sd_bus_process",
    )?;
    Ok(r > 0)
}

/// A match callback that leaves the message unhandled, so that
/// `sd_bus_process` returns it to the caller (`BusRef::process`).
unsafe extern "C" fn leave_unhandled(
    _message: *mut ffi::sd_bus_message,
    _userdata: *mut c_void,
    _error: *mut ffi::sd_bus_error,
) -> c_int {
    0
}

/// Installs `rule` on the bus (sd-bus sends AddMatch and waits for its reply)
/// and in the connection's own match tree, for the connection's lifetime (a floating slot).
pub fn add_match(bus: &BusRef, rule: &CStr) -> Result<()> {
    // SAFETY: a live bus, a NUL-terminated rule sd-bus copies, a callback without userdata.
    check(
        unsafe {
            ffi::sd_bus_add_match(
                bus.as_ptr(),
                ptr::null_mut(),
                rule.as_ptr(),
                Some(leave_unhandled),
                ptr::null_mut(),
            )
        },
        "sd_bus_add_match",
    )?;
    Ok(())
}

/// A method call without a destination (peer to peer).
pub fn new_method_call_to_peer(bus: &BusRef, path: &CStr, interface: &CStr, member: &CStr) -> Result<Message> {
    let mut raw = ptr::null_mut();
    // SAFETY: a live bus and NUL-terminated names sd-bus copies; success hands over one reference.
    check(
        unsafe {
            ffi::sd_bus_message_new_method_call(
                bus.as_ptr(),
                &mut raw,
                ptr::null(),
                path.as_ptr(),
                interface.as_ptr(),
                member.as_ptr(),
            )
        },
        "sd_bus_message_new_method_call",
    )?;
    Ok(unsafe { Message::from_ptr(raw) })
}

/// Appends an array of fixed-size elements of D-Bus type `code` in one copy.
fn append_array<T: Copy>(message: &mut MessageRef, code: u8, values: &[T]) -> Result<()> {
    // SAFETY: `values` is `size_of_val` readable bytes of elements of type `code`; sd-bus copies them.
    check(
        unsafe {
            ffi::sd_bus_message_append_array(
                message.as_ptr(),
                code as c_char,
                values.as_ptr().cast(),
                std::mem::size_of_val(values),
            )
        },
        "sd_bus_message_append_array",
    )?;
    Ok(())
}

/// Appends `ay`.
pub fn append_bytes(message: &mut MessageRef, bytes: &[u8]) -> Result<()> {
    append_array(message, b'y', bytes)
}

/// Appends `at`.
pub fn append_u64s(message: &mut MessageRef, values: &[u64]) -> Result<()> {
    append_array(message, b't', values)
}

/// Reads the next argument, which must be `ay`, as a slice of the message's
/// body (valid while the message lives and is not rewound for writing).
pub fn read_bytes(message: &mut MessageRef) -> Result<&[u8]> {
    let mut data: *const c_void = ptr::null();
    let mut size = 0;
    // SAFETY: a live, sealed message; on success `data`/`size` describe bytes inside its body.
    let r = check(
        unsafe { ffi::sd_bus_message_read_array(message.as_ptr(), b'y' as c_char, &mut data, &mut size) },
        "sd_bus_message_read_array",
    )?;
    if r == 0 {
        bail!("no byte array where one was expected");
    }
    if size == 0 {
        return Ok(&[]);
    }
    // SAFETY: sd-bus returned `size` bytes at `data`, owned by the message borrowed for the result's lifetime.
    Ok(unsafe { std::slice::from_raw_parts(data.cast(), size) })
}
