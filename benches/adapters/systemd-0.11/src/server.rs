//! The server: the benchmark interface as a `systemd::bus::Vtable` (the
//! crate's safe wrapper of an sd-bus object vtable) registered with
//! `add_object_vtable`. sd-bus's object layer does the rest, as for a C
//! service: it checks each call's argument signature against the vtable
//! (`InvalidArgs` otherwise), answers `Introspectable` (the tree of parent
//! nodes included, for `busctl tree`), `Properties` (`Get`/`GetAll` through
//! the getter; `Set` of the read-only `Items` is `PropertyReadOnly`) and
//! `Peer`, and names unknown objects, interfaces and methods in its errors.
//! The loop is `sd_bus_process` without taking messages back (`raw::process`),
//! so that sd-bus also answers calls to objects it does not have.
//!
//! sd-bus is single-threaded: a connection is driven by `sd_bus_process`
//! and `sd_bus_wait` on the thread that owns it. On a bus that is the
//! calling thread; peer to peer every accepted connection gets its own bus
//! object on its own thread (the socket is accepted with std's `UnixListener`
//! and handed to sd-bus as a server connection, `raw::serve_peer`).

use std::ffi::{CStr, CString};
use std::io::ErrorKind;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, Context, Result};
use harness::ipc::{self as h, fd_passing as fd, Transport};
use systemd::bus::types::UnixFd;
use systemd::bus::{self, BusRef, MessageRef, ObjectPath, ObjectPathBuf, Vtable, VtableFlags};

use crate::raw;

/// The served object's state (`harness::ipc`'s table).
struct Service {
    /// (service name, object path i); `ObjectRef` returns the first. The
    /// name is empty peer to peer.
    relation_set: Vec<(String, ObjectPathBuf)>,
    items: Vec<(String, String)>,
}

impl Service {
    fn new(name: &str) -> Result<Self> {
        let relation_set = (0..10)
            .map(|i| Ok((name.to_owned(), ObjectPath::new(h::object_path(i))?.into_owned())))
            .collect::<systemd::Result<_>>()?;
        Ok(Service {
            relation_set,
            items: h::items(),
        })
    }
}

/// A missing argument (sd-bus checked the signature, so this is not expected).
fn missing() -> bus::Error {
    std::io::Error::new(ErrorKind::InvalidData, "a missing argument").into()
}

/// Answers `request` with a method return whose arguments `fill` appends.
/// The return is created first, so `fill` may borrow the request's arguments.
pub(crate) fn reply(
    request: &mut MessageRef,
    fill: impl FnOnce(&mut MessageRef, &mut MessageRef) -> bus::Result<()>,
) -> bus::Result<()> {
    let mut ret = request.new_method_return()?;
    fill(request, &mut ret)?;
    ret.send_no_reply()?;
    Ok(())
}

/// The benchmark interface (`harness::ipc::interface_methods` is the same table).
fn vtable(svc: Arc<Service>) -> systemd::Result<Vtable> {
    let f = VtableFlags::UNPRIVILEGED;
    let (s1, s2, s3) = (svc.clone(), svc.clone(), svc);
    Vtable::new()
        .method("Void", "", "", f, |req| reply(req, |_, _| Ok(())))?
        .method("InInt", "i", "", f, |req| {
            reply(req, |req, _| {
                req.iter()?.next::<i32>()?.ok_or_else(missing)?;
                Ok(())
            })
        })?
        .method("OutInt", "", "i", f, |req| {
            reply(req, |_, ret| Ok(ret.append(h::OUT_INT)?))
        })?
        .method("InOutInt", "i", "i", f, |req| {
            reply(req, |req, ret| {
                let v = req.iter()?.next::<i32>()?.ok_or_else(missing)?;
                Ok(ret.append(v + 1)?)
            })
        })?
        .method("InString", "s", "", f, |req| {
            reply(req, |req, _| {
                req.iter()?.next::<&str>()?.ok_or_else(missing)?;
                Ok(())
            })
        })?
        .method("OutString", "", "s", f, |req| {
            reply(req, |_, ret| Ok(ret.append(h::OUT_STRING)?))
        })?
        .method("InOutString", "s", "s", f, |req| {
            reply(req, |req, ret| {
                // As a C string: appended back without a conversion.
                let s = req.iter()?.next::<&CStr>()?.ok_or_else(missing)?;
                Ok(ret.append(s)?)
            })
        })?
        .method("ObjectRef", "", "(so)", f, move |req| {
            reply(req, |_, ret| {
                let (name, path) = &s1.relation_set[0];
                Ok(ret.append((name, &**path))?)
            })
        })?
        .method("RelationSet", "", "a(so)", f, move |req| {
            reply(req, |_, ret| Ok(ret.append(s2.relation_set.as_slice())?))
        })?
        .method(h::ECHO_BYTES, "ay", "ay", f, |req| {
            reply(req, |req, ret| {
                let bytes = raw::read_bytes(req).map_err(io_error)?;
                raw::append_bytes(ret, bytes).map_err(io_error)?;
                Ok(())
            })
        })?
        .property(h::PROPERTY, "a(ss)", VtableFlags::PROPERTY_CONST, move |ret| {
            Ok(ret.append(s3.items.as_slice())?)
        })?
        .signal(h::SIGNAL, "s", VtableFlags::empty())
}

/// `call/fd-passing`: `ReadFd(h) -> t` on the second interface
/// (`harness::ipc::fd_passing`). sd-bus accepts fds by default (`NEGOTIATE_UNIX_FD`);
/// the received fd belongs to the request message, which closes it when freed.
fn fd_vtable() -> systemd::Result<Vtable> {
    Vtable::new().method(
        fd::READ_FD,
        fd::READ_FD_IN,
        fd::READ_FD_OUT,
        VtableFlags::UNPRIVILEGED,
        |req| {
            reply(req, |req, ret| {
                let UnixFd(received) = req.iter()?.next::<UnixFd>()?.ok_or_else(missing)?;
                let digest = fd::read_raw_fd_digest(received)?;
                Ok(ret.append(digest)?)
            })
        },
    )
}

pub(crate) fn io_error(e: anyhow::Error) -> bus::Error {
    std::io::Error::other(format!("{e:#}")).into()
}

/// Serves the object on `bus` until the connection fails or closes.
pub(crate) fn run(bus: &mut BusRef) -> Result<()> {
    loop {
        // sd-bus answers what no handler took (see `raw::process`).
        if !raw::process(bus)? {
            bus.wait(None).context("sd_bus_wait")?;
        }
    }
}

fn register(bus: &BusRef, svc: Arc<Service>) -> Result<()> {
    bus.add_object_vtable(h::OBJECT_PATH, h::INTERFACE, vtable(svc)?)
        .context("registering the object vtable")?;
    bus.add_object_vtable(h::OBJECT_PATH, fd::FD_INTERFACE, fd_vtable()?)
        .context("registering the fd-passing vtable")
}

fn serve_bus(address: &str, service_name: &str, ready: &mut dyn FnMut()) -> Result<()> {
    let mut bus = raw::connect(&CString::new(address)?, true).context("connecting to the bus")?;
    register(&bus, Arc::new(Service::new(service_name)?))?;
    // On the bus only: see `props::NOT_PEER_TO_PEER`.
    crate::props::register(&bus)?;
    // No flags: DO_NOT_QUEUE and no replacement either way; sd-bus fails with EEXIST when the name is owned.
    bus.request_name(service_name, 0)
        .with_context(|| format!("requesting {service_name}"))?;
    ready();
    run(&mut bus)
}

fn serve_p2p(socket: &Path, ready: &mut dyn FnMut()) -> Result<()> {
    // A stale socket file from an earlier server would make bind fail.
    let _ = std::fs::remove_file(socket);
    let listener = UnixListener::bind(socket).with_context(|| format!("binding {}", socket.display()))?;
    let svc = Arc::new(Service::new("")?);
    ready();
    for stream in listener.incoming() {
        let stream = stream.context("accepting a connection")?;
        let svc = svc.clone();
        std::thread::spawn(move || {
            let served = raw::serve_peer(stream.into()).and_then(|mut bus| {
                register(&bus, svc)?;
                run(&mut bus)
            });
            // A peer that hangs up ends its connection; anything else is worth a line.
            if let Err(e) = served {
                let text = format!("{e:#}");
                if !text.contains("reset by peer") && !text.contains("not connected") {
                    eprintln!("peer connection ended: {text}");
                }
            }
        });
    }
    Err(anyhow!("the listening socket closed"))
}

pub fn serve(transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
    match transport {
        Transport::Bus {
            address, service_name, ..
        } => serve_bus(address, service_name, ready),
        Transport::P2p { socket } => serve_p2p(socket, ready),
    }
}
