//! Issue 42 (6): a peer that breaks the protocol must not kill a server.
//! One method call with serial 0 (the specification forbids 0) sent straight
//! to the gio-0.22 peer-to-peer server killed it (SIGSEGV in GDBus). Every
//! adapter's peer-to-peer server gets such a call here; it may drop the call
//! or close that connection, but it must live on and answer the next peer.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use harness::ipc::{stream, Method, INTERFACE, OBJECT_PATH};
use harness::wire::{self, Value};

use crate::common::*;

/// A peer-to-peer connection authenticated with SASL EXTERNAL (no Hello:
/// there is no bus).
fn peer(socket: &Path, what: &str) -> UnixStream {
    let mut s = UnixStream::connect(socket).unwrap_or_else(|e| panic!("{what}: connecting: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    stream::authenticate(&mut s, false).unwrap_or_else(|e| panic!("{what}: the SASL exchange: {e:#}"));
    s
}

/// `Void` on the benchmark object, with `serial`.
fn void_call(serial: u32) -> Vec<u8> {
    let fields = [
        (wire::FIELD_PATH, Value::ObjectPath(OBJECT_PATH.into())),
        (wire::FIELD_INTERFACE, Value::Str(INTERFACE.into())),
        (wire::FIELD_MEMBER, Value::Str(Method::Void.member().into())),
    ];
    wire::encode_message(wire::MESSAGE_METHOD_CALL, 0, serial, &fields, &[])
}

/// Reads messages until the reply to `serial`; `None` if the connection ends first.
fn reply_to(s: &mut UnixStream, serial: u32) -> Option<wire::Message> {
    loop {
        let m = stream::read_message(s).ok()?;
        if m.header.field(wire::FIELD_REPLY_SERIAL) == Some(&Value::U32(serial)) {
            return Some(m);
        }
    }
}

/// A server process, killed when dropped (also when an assertion fails).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether `adapter` serves `call/void` peer to peer (its `list`: some
/// libraries' p2p servers cannot, and say why).
fn serves_peer_to_peer(adapter: &RepoAdapter) -> bool {
    let o = adapter.command().arg("list").output().unwrap();
    assert!(o.status.success(), "{} list: {}", adapter.id, text(&o));
    let listed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    listed["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["id"] == "call/void" && s["supported"] == true && s["p2p_supported"] == true)
}

/// Starts `adapter`'s peer-to-peer server on `socket` and waits for its
/// READY (the contract's word once it accepts peers: the socket file exists
/// from bind(2), before listen(2), when a connection is still refused).
fn serve(adapter: &RepoAdapter, socket: &Path) -> Server {
    let mut child = adapter
        .command()
        .args(["serve", "--p2p-socket", socket.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (ready, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.trim() == harness::contract::READY {
                let _ = ready.send(());
            }
        }
    });
    let start = Instant::now();
    while said.recv_timeout(Duration::from_millis(20)).is_err() {
        let status = child.try_wait().unwrap();
        assert!(
            status.is_none(),
            "{}: the p2p server exited ({status:?}) before READY",
            adapter.id
        );
        assert!(start.elapsed() < Duration::from_secs(60), "{}: no READY", adapter.id);
    }
    Server(child)
}

#[test]
fn a_call_with_serial_zero_kills_no_peer_to_peer_server() {
    let dir = TempDir::new("serial-zero");
    let mut served = Vec::new();
    for adapter in repo_adapters() {
        let socket = dir.path().join(format!("{}.sock", adapter.id));
        // (A row this build mode cannot have, ruby-dbus under Nix, is left out: common/unavailable.rs.)
        if unavailable_here(&adapter.id).is_some() || !serves_peer_to_peer(&adapter) {
            continue;
        }
        let mut server = serve(&adapter, &socket);
        // A first, valid call: the server answers calls at all.
        let mut good = peer(&socket, &format!("{}, the first peer", adapter.id));
        good.write_all(&void_call(1)).unwrap();
        assert!(
            reply_to(&mut good, 1).is_some(),
            "{}: no reply to a valid call",
            adapter.id
        );

        let mut bad = peer(&socket, &format!("{}, the peer that sends serial 0", adapter.id));
        bad.write_all(&void_call(0)).unwrap();
        // Whatever the server does with it (nothing, an error, closing this
        // connection), it has done it by the time it answers another call on
        // the same connection or the connection is gone.
        let _ = bad.write_all(&void_call(2));
        let _ = reply_to(&mut bad, 2);

        // Alive, and answering a new peer and the first one.
        let status = server.0.try_wait().unwrap();
        assert!(
            status.is_none(),
            "{}: the server died of a call with serial 0: {status:?}",
            adapter.id
        );
        let mut next = peer(&socket, &format!("{}, a peer after serial 0", adapter.id));
        next.write_all(&void_call(1)).unwrap();
        assert!(
            reply_to(&mut next, 1).is_some(),
            "{}: no reply after serial 0",
            adapter.id
        );
        good.write_all(&void_call(2)).unwrap();
        assert!(
            reply_to(&mut good, 2).is_some(),
            "{}: the first peer lost its server",
            adapter.id
        );
        drop(server);
        served.push(adapter.id);
    }
    assert!(
        served.len() >= 8,
        "only {} adapters serve peer to peer: {served:?}",
        served.len()
    );
    assert!(served.iter().any(|a| a == "gio-0.22"), "{served:?}");
}
