//! `call/fd-passing/<size>` (`harness::ipc::fd_passing`) over GDBus:
//! `ReadFd(h) -> t` on a second registered interface, and its client.
//! GDBus negotiates fd passing on Unix sockets (client and `DBusServer`
//! alike) and carries fds in a message's `UnixFDList`, the `h` argument being
//! an index into it. The client's list holds a duplicate of the memfd, sent
//! with every call; the server takes a duplicate of the received fd
//! (`UnixFDList::get`), closed after the read, and the call message's list
//! closes the received fd itself when the message is freed.

use anyhow::{Context, Result};
use gio::prelude::*;
use gio::{DBusCallFlags, DBusConnection, DBusInterfaceInfo, DBusMethodInvocation, DBusNodeInfo, UnixFDList};
use glib::variant::{Handle, ToVariant};
use glib::{Variant, VariantTy};
use harness::ipc::fd_passing as fd;
use harness::ipc::{self as h, Transport};

use super::{connect, NO_CANCEL, TIMEOUT_MS};
use crate::variant;

const INVALID_ARGS: &str = "org.freedesktop.DBus.Error.InvalidArgs";
const FAILED: &str = "org.freedesktop.DBus.Error.Failed";

/// The interface info of `io.killing.spark.BenchFd` (GDBus checks calls against it).
fn interface_info() -> Result<DBusInterfaceInfo> {
    let xml = format!(
        "<node><interface name=\"{}\"><method name=\"{}\"><arg type=\"{}\" direction=\"in\"/>\
         <arg type=\"{}\" direction=\"out\"/></method></interface></node>",
        fd::FD_INTERFACE,
        fd::READ_FD,
        fd::READ_FD_IN,
        fd::READ_FD_OUT
    );
    let node = DBusNodeInfo::for_xml(&xml).context("parsing the fd interface's XML")?;
    node.lookup_interface(fd::FD_INTERFACE)
        .context("the fd interface is not in its XML")
}

/// The digest of the file behind the call's `h` argument.
fn read_fd(args: &Variant, invocation: &DBusMethodInvocation) -> Result<u64> {
    let (Handle(index),) = variant::get::<(Handle,)>(args)?;
    let fds = invocation
        .message()
        .unix_fd_list()
        .context("the call carries no fds (was fd passing negotiated?)")?;
    // A duplicate of the received fd: closed when it drops after the read.
    let received = fds.get(index).context("taking the passed fd")?;
    Ok(fd::read_fd_digest(std::os::fd::AsFd::as_fd(&received))?)
}

/// Exports `ReadFd` at the benchmark object's path on `conn`.
pub fn register(conn: &DBusConnection) -> Result<()> {
    conn.register_object(h::OBJECT_PATH, &interface_info()?)
        .method_call(|_conn, _sender, _path, _iface, member, args, invocation| {
            // GDBus refuses other members and argument types before this runs.
            if member != fd::READ_FD {
                return invocation.return_dbus_error(INVALID_ARGS, &format!("no method {member}"));
            }
            match read_fd(&args, &invocation) {
                Ok(digest) => invocation.return_value(Some(&(digest,).to_variant())),
                Err(e) => invocation.return_dbus_error(FAILED, &format!("{e:#}")),
            }
        })
        .build()
        .context("registering the fd interface")?;
    Ok(())
}

/// The client op: the memfd written once and put in one `UnixFDList`, passed
/// with each `ReadFd` call (`call_with_unix_fd_list_sync`).
pub fn client(t: &Transport, size: usize) -> Result<impl FnMut() -> Result<u64>> {
    let conn = connect(t)?;
    if t.is_p2p() {
        // sd-bus's p2p server (libsystemd 252, bus-socket.c bus_socket_read_auth)
        // closes a connection whose fds arrive in the same read as the client's
        // BEGIN ("We received fds during the auth protocol?"), and GDBus sends
        // its first message right behind BEGIN: the first ReadFd raced the
        // server's handshake (4 to 8 of 20 runs against sd-bus failed with
        // "The connection is closed"). One untimed round trip without fds
        // first, at setup, lets the handshake end.
        conn.call_sync(
            None,
            h::OBJECT_PATH,
            "org.freedesktop.DBus.Peer",
            "Ping",
            None,
            None,
            DBusCallFlags::NONE,
            TIMEOUT_MS,
            NO_CANCEL,
        )
        .context("Peer.Ping before the first fd")?;
    }
    let name = (!t.is_p2p()).then(|| t.service_name().to_owned());
    let fds = UnixFDList::new();
    let index = fds
        .append(fd::payload_memfd(size)?)
        .context("adding the memfd to a UnixFDList")?;
    let args = (Handle(index),).to_variant();
    let reply = VariantTy::new("(t)").expect("a valid type");
    Ok(move || {
        let (body, _) = conn.call_with_unix_fd_list_sync(
            name.as_deref(),
            h::OBJECT_PATH,
            fd::FD_INTERFACE,
            fd::READ_FD,
            Some(&args),
            Some(reply),
            DBusCallFlags::NONE,
            TIMEOUT_MS,
            Some(&fds),
            NO_CANCEL,
        )?;
        Ok(variant::get::<(u64,)>(&body)?.0)
    })
}
