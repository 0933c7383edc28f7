//! The IPC side with tokio-dbus 0.2's `Connection` + `Buffers`. The library
//! has no proxy, no object server and no dispatch: a client writes a call into
//! the `SendBuf`, and `Connection::wait` is driven until the reply with its
//! serial is the `RecvBuf`'s last message (anything else received meanwhile is
//! dropped, as nothing else is expected). Properties are read with a
//! hand-built `org.freedesktop.DBus.Properties.Get` (no property cache: every
//! read is a round trip). The server is one connection and a loop: wait for a
//! message, answer calls, flush; `harness::ipc::standard` says what a call is
//! (a benchmark method with the right argument signature, answered with
//! tokio-dbus's typed writers, as is `Properties.Get` of `Items`; a standard
//! interface answered with the harness's encoding; or an error, which tokio-dbus
//! writes with its ERROR_NAME).
//!
//! Calls to the bus (Hello, RequestName, AddMatch) are built like any other
//! call, with their INTERFACE field: the `Buffers::hello`/`request_name`/
//! `add_match` helpers leave it out, and busd answers such a Hello with an
//! error ("Missing interface").
//!
//! Replies carry the server's unique name as SENDER: tokio-dbus's
//! `Message::method_return`/`error` set SENDER to the call's DESTINATION (the
//! well-known name), and busd disconnects a peer whose SENDER is not its
//! unique name (dbus-daemon and dbus-broker overwrite it).
//!
//! Every connection is made to the socket the transport names
//! (`ConnectionBuilder::build_with_stream`): `Connection::system_bus` would
//! read DBUS_SYSTEM_BUS_ADDRESS, but the runner's buses are private ones.
//! Each client, subscriber and server owns a current-thread Tokio runtime
//! (its `Connection` registers its socket with that runtime's reactor) and
//! runs every operation with `block_on` on the calling thread.
//!
//! The opt-in families have files of their own under `ipc/`: `in_flight.rs`,
//! `subscriptions.rs` (burst, delivered, name-owner churn), `storm.rs`,
//! `apps.rs` (in-only bytes, connections in a process, create-call) and
//! `props.rs` (GetAll, GetManagedObjects; their server side too).

use std::os::unix::net::UnixStream;
use std::rc::Rc;

use anyhow::{bail, ensure, Context, Result};
use harness::ipc::standard::{self, Answer};
use harness::ipc::{self as h, AppOp, IpcOp, Method, SubscriptionOp, Transport};
use harness::{payload, Digest};
use tokio::runtime::Runtime;
use tokio_dbus::org_freedesktop_dbus::{self, NameFlag};
use tokio_dbus::{ty, Body, BodyBuf, Buffers, Connection, ConnectionBuilder, Message, MessageKind};
use tokio_dbus::{ObjectPath, ObjectPathBuf, SendBuf, Serial, Signature};

mod apps;
mod in_flight;
mod props;
mod server;
mod storm;
mod subscriptions;

/// The runtime of the held `connect/idle-connections` connections (made on
/// first use): a `Connection` is registered with the reactor of the runtime
/// it was made in, which must outlive it.
#[derive(Default)]
pub struct TokioDbusIpc {
    idle_runtime: Option<Rc<Runtime>>,
}

/// A held idle connection and the runtime it is registered with (dropped after it).
struct IdleConnection {
    _peer: Peer,
    _runtime: Rc<Runtime>,
}

const PATH: &ObjectPath = ObjectPath::new_const(h::OBJECT_PATH.as_bytes());
const PROPERTIES: &str = "org.freedesktop.DBus.Properties";
/// `RequestName`'s reply when the name is ours.
const PRIMARY_OWNER: u32 = 1;

/// Why nothing runs peer to peer: the service cannot be served there.
const NO_P2P_SERVER: &str = "tokio-dbus 0.2.2 cannot serve a peer-to-peer connection: a Connection speaks only the \
     client side of SASL (it sends `AUTH EXTERNAL <uid>` and expects `OK <guid>`, or with \
     ConnectionBuilder::no_auth sends `BEGIN` at once); nothing answers a client's AUTH, so a Connection built on an \
     accepted socket (build_with_stream) cannot complete the handshake";

/// Why nothing runs on a bus as root: the library's SASL EXTERNAL response is wrong for uid 0.
const NO_ROOT_AUTH: &str = "tokio-dbus 0.2.2 cannot authenticate as uid 0 (this run's user): \
     Auth::external_from_u32_ascii_hex writes uid 0 as \"00\" (hex of a NUL byte) instead of \"30\" (hex of \"0\"), \
     so `AUTH EXTERNAL 00` is rejected by dbus-daemon and dbus-broker and busd closes the connection; \
     ConnectionBuilder offers no other mechanism (only no_auth, which sends BEGIN without AUTH)";

fn running_as_root() -> bool {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() == 0 }
}

fn runtime() -> Result<Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .context("starting a current-thread Tokio runtime")
}

/// An object path as text (tokio-dbus's `ObjectPath` is validated bytes).
fn path_str(path: &ObjectPath) -> Result<&str> {
    Ok(std::str::from_utf8(<ObjectPath as AsRef<[u8]>>::as_ref(path))?)
}

/// One connection and its buffers; the last received message is `buf.recv.last_message()`.
struct Peer {
    conn: Connection,
    buf: Buffers,
    /// The service's name on a bus; none peer to peer.
    destination: Option<String>,
    /// This connection's unique name on a bus (Hello's reply); empty peer to peer.
    unique_name: String,
}

impl Peer {
    /// Connects (SASL EXTERNAL) and, on a bus, says Hello. Runs inside the runtime that will drive it.
    async fn connect(t: &Transport) -> Result<Peer> {
        let (socket, destination) = match t {
            Transport::Bus {
                socket, service_name, ..
            } => (socket, Some(service_name.clone())),
            Transport::P2p { socket } => (socket, None),
        };
        let stream = UnixStream::connect(socket).with_context(|| format!("connecting to {}", socket.display()))?;
        let mut conn = ConnectionBuilder::new().build_with_stream(stream)?;
        let mut buf = Buffers::new();
        conn.connect(&mut buf).await.context("SASL")?;
        let mut peer = Peer {
            conn,
            buf,
            destination,
            unique_name: String::new(),
        };
        if !t.is_p2p() {
            peer.bus_call("Hello", |_| Ok(())).await?;
            peer.unique_name = peer.reply_body("s")?.read::<str>()?.to_owned();
        }
        Ok(peer)
    }

    /// Calls the bus itself. Not `Buffers::hello`/`request_name`/`add_match`:
    /// those leave out the INTERFACE field, which busd requires ("Missing interface").
    async fn bus_call(
        &mut self,
        member: &str,
        args: impl FnOnce(&mut BodyBuf) -> tokio_dbus::Result<()>,
    ) -> Result<()> {
        self.buf.body.clear();
        args(&mut self.buf.body)?;
        let msg = self
            .buf
            .send
            .method_call(org_freedesktop_dbus::PATH, member)
            .with_interface(org_freedesktop_dbus::INTERFACE)
            .with_destination(org_freedesktop_dbus::DESTINATION)
            .with_body(&self.buf.body);
        let serial = self.buf.send.write_message(msg)?;
        self.reply(serial)
            .await
            .with_context(|| format!("{member} (to the bus)"))
    }

    /// Writes out what was queued and waits for the reply to `serial`, which is then the last message.
    async fn reply(&mut self, serial: Serial) -> Result<()> {
        self.conn.flush(&mut self.buf).await?;
        loop {
            self.conn.wait(&mut self.buf).await?;
            let msg = self.buf.recv.last_message()?;
            match msg.kind() {
                MessageKind::MethodReturn { reply_serial } if reply_serial == serial => return Ok(()),
                MessageKind::Error {
                    error_name,
                    reply_serial,
                } if reply_serial == serial => {
                    let text = msg.body().read::<str>().unwrap_or_default();
                    bail!("error reply {error_name}: {text}");
                }
                _ => {}
            }
        }
    }

    /// Calls `member` of `interface` on the benchmark object with the body `args` writes.
    async fn call(
        &mut self,
        interface: &str,
        member: &str,
        args: impl FnOnce(&mut BodyBuf) -> tokio_dbus::Result<()>,
    ) -> Result<()> {
        self.buf.body.clear();
        args(&mut self.buf.body)?;
        let mut msg = self
            .buf
            .send
            .method_call(PATH, member)
            .with_interface(interface)
            .with_body(&self.buf.body);
        if let Some(d) = &self.destination {
            msg = msg.with_destination(d);
        }
        let serial = self.buf.send.write_message(msg)?;
        self.reply(serial).await
    }

    /// The last message's body, checked to have `signature`.
    fn reply_body(&self, signature: &str) -> Result<Body<'_>> {
        let msg = self.buf.recv.last_message()?;
        ensure!(
            msg.signature().as_str() == signature,
            "the reply has signature \"{}\", expected \"{signature}\"",
            msg.signature().as_str()
        );
        Ok(msg.body())
    }

    async fn method(&mut self, m: Method) -> Result<u64> {
        let member = m.member();
        match m {
            Method::InInt | Method::InOutInt => self.call(h::INTERFACE, member, |b| b.store(h::IN_INT)).await?,
            Method::InString => self.call(h::INTERFACE, member, |b| b.store(h::IN_STRING)).await?,
            Method::InOutString => self.call(h::INTERFACE, member, |b| b.store(h::OUT_STRING)).await?,
            _ => self.call(h::INTERFACE, member, |_| Ok(())).await?,
        }
        let mut b = self.reply_body(m.out_signature())?;
        let mut d = Digest::new();
        match m {
            Method::Void | Method::InInt | Method::InString => {}
            Method::OutInt | Method::InOutInt => d.i32(b.load::<i32>()?),
            Method::OutString | Method::InOutString => d.str(b.read::<str>()?),
            Method::ObjectRef => {
                let (name, path) = b.load_struct::<(ty::Str, ty::ObjectPath)>()?;
                d.str(name);
                d.str(path_str(path)?);
            }
            Method::RelationSet => {
                let mut set = b.load_array::<(ty::Str, ty::ObjectPath)>()?;
                let mut n = 0;
                while let Some((name, path)) = set.load_struct()? {
                    d.str(name);
                    d.str(path_str(path)?);
                    n += 1;
                }
                d.len(n);
            }
        }
        ensure!(b.is_empty(), "the reply has more bytes than its arguments");
        Ok(d.finish())
    }

    async fn echo_bytes(&mut self, payload: &[u8]) -> Result<u64> {
        self.call(h::INTERFACE, h::ECHO_BYTES, |b| b.store(payload)).await?;
        let mut d = Digest::new();
        d.bytes(self.reply_body("ay")?.read::<[u8]>()?);
        Ok(d.finish())
    }

    /// `Properties.Get(INTERFACE, "Items")`; `each` sees every pair, the count is returned.
    async fn read_items(&mut self, mut each: impl FnMut(&str, &str)) -> Result<usize> {
        self.call(PROPERTIES, "Get", |b| {
            b.store(h::INTERFACE)?;
            b.store(h::PROPERTY)
        })
        .await?;
        let mut items = self
            .reply_body("v")?
            .read_variant_as::<ty::Array<(ty::Str, ty::Str)>>()?;
        let mut n = 0;
        while let Some((id, name)) = items.load_struct()? {
            each(id, name);
            n += 1;
        }
        Ok(n)
    }

    async fn digest_items(&mut self, d: &mut Digest) -> Result<()> {
        let n = self
            .read_items(|id, name| {
                d.str(id);
                d.str(name);
            })
            .await?;
        d.len(n);
        Ok(())
    }

    /// Emits `Ping` (or the `marshal/mixed` body, `connect/marshal-send`) and writes it out.
    async fn emit(&mut self, body: Option<&payload::Body>) -> Result<()> {
        self.buf.body.clear();
        let member = match body {
            Some(body) => {
                crate::body::store(&mut self.buf.body, body)?;
                payload::MEMBER
            }
            None => {
                self.buf.body.store(h::SIGNAL_TEXT)?;
                h::SIGNAL
            }
        };
        let (path, interface) = match body {
            Some(_) => (ObjectPath::new(payload::PATH)?, payload::INTERFACE),
            None => (PATH, h::INTERFACE),
        };
        let msg = self
            .buf
            .send
            .signal(path, member)
            .with_interface(interface)
            .with_body(&self.buf.body);
        self.buf.send.write_message(msg)?;
        self.conn.flush(&mut self.buf).await?;
        Ok(())
    }

    /// Installs a match rule and waits until the bus has it.
    /// `signal/match-churn`: AddMatch and RemoveMatch of the churn rule, each reply awaited
    /// (an error reply, such as MatchRuleNotFound, fails the operation).
    async fn match_churn(&mut self, rule: &str) -> Result<u64> {
        self.add_match(rule).await?;
        self.bus_call("RemoveMatch", |b| b.store(rule))
            .await
            .with_context(|| format!("RemoveMatch {rule}"))?;
        Ok(Digest::new().finish())
    }

    async fn add_match(&mut self, rule: &str) -> Result<()> {
        self.bus_call("AddMatch", |b| b.store(rule))
            .await
            .with_context(|| format!("AddMatch {rule}"))
    }

    /// The digest of the next `Ping`'s text; other messages (NameAcquired) are dropped.
    async fn receive_ping(&mut self) -> Result<u64> {
        loop {
            self.conn.wait(&mut self.buf).await?;
            let msg = self.buf.recv.last_message()?;
            if let MessageKind::Signal { member, .. } = msg.kind() {
                if member == h::SIGNAL && msg.interface() == Some(h::INTERFACE) {
                    let mut d = Digest::new();
                    d.str(msg.body().read::<str>()?);
                    return Ok(d.finish());
                }
            }
        }
    }
}

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

/// A connected peer and the runtime that drives it, for closures that outlive the call.
fn connected(t: &Transport) -> Result<(Runtime, Peer)> {
    let rt = runtime()?;
    let peer = rt.block_on(Peer::connect(t))?;
    Ok((rt, peer))
}

/// A library fact (tokio-dbus 0.2.2's source, read for this adapter).
/// Why `proxy/startup/<n>` does not run (tokio-dbus 0.2.2's src/lib.rs, read for this adapter).
const NO_INTROSPECTION_PARSER: &str = "tokio-dbus 0.2.2 has no introspection parser and no proxy type: it is \
     \"the low-level, borrowed API\" (its lib.rs), which sends XML to the separate tokio-dbus-codegen for \
     proxies generated at build time; neither tokio-dbus nor tokio-dbus-core has XML code or an XML dependency, \
     so Introspect gives the XML as a string, nothing to build a proxy from at run time";

const NO_FD_PASSING: &str = "tokio-dbus 0.2.2 cannot pass Unix fds: its SASL exchange \
     (src/connection/connection.rs) sends AUTH then BEGIN, never NEGOTIATE_UNIX_FD, and the crate \
     has no sendmsg/recvmsg (no SCM_RIGHTS): `h` is only marshalled as an index";

impl h::Ipc for TokioDbusIpc {
    fn unsupported_ipc(&self, op: IpcOp, p2p: bool) -> Option<String> {
        if let IpcOp::FdPassing(_) = op {
            return Some(NO_FD_PASSING.into());
        }
        if let IpcOp::App(AppOp::Startup(_)) = op {
            return Some(NO_INTROSPECTION_PARSER.into());
        }
        // Ops that need a bus are answered by the harness (`harness::ipc::needs_bus`).
        if p2p {
            Some(NO_P2P_SERVER.to_string())
        } else {
            running_as_root().then(|| NO_ROOT_AUTH.to_string())
        }
    }

    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        if transport.is_p2p() {
            bail!("{NO_P2P_SERVER}");
        }
        if running_as_root() {
            bail!("{NO_ROOT_AUTH}");
        }
        runtime()?.block_on(server::serve_bus(transport, ready))
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<h::Subscriber> {
        let (rt, mut peer) = connected(transport)?;
        rt.block_on(async {
            peer.add_match(&h::ping_rule()).await?;
            for j in 0..extra_rules {
                peer.add_match(&h::nonmatching_rule(j)).await?;
            }
            anyhow::Ok(())
        })?;
        Ok(Box::new(move || rt.block_on(peer.receive_ping())))
    }

    fn implements(&self, op: IpcOp) -> bool {
        !op.opt_in()
            || matches!(
                op,
                IpcOp::InFlight(_)
                    | IpcOp::IdleConnections(_)
                    | IpcOp::Subscription(
                        SubscriptionOp::MatchChurn
                            | SubscriptionOp::Burst(_)
                            | SubscriptionOp::Delivered(_)
                            | SubscriptionOp::NameOwnerChurn(_)
                            | SubscriptionOp::PropertyStorm(_)
                    )
                    | IpcOp::App(AppOp::InOnlyBytes(_) | AppOp::Connections(_) | AppOp::ProxyCreate(_))
                    | IpcOp::PropertyGetAll(_)
                    | IpcOp::ManagedObjects(_)
            )
    }

    /// SASL and Hello on the runtime all held connections share.
    fn idle_connection(&mut self, transport: &Transport) -> Result<Box<dyn std::any::Any>> {
        if self.idle_runtime.is_none() {
            self.idle_runtime = Some(Rc::new(runtime()?));
        }
        let rt = self.idle_runtime.clone().expect("just made");
        let peer = rt.block_on(Peer::connect(transport))?;
        Ok(Box::new(IdleConnection {
            _peer: peer,
            _runtime: rt,
        }))
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        let t = transport.clone();
        Ok(match op {
            IpcOp::App(a) => apps::client(runtime()?, &t, a)?,
            IpcOp::PropertyGetAll(n) => props::get_all(runtime()?, &t, n)?,
            IpcOp::ManagedObjects(n) => props::managed_objects(runtime()?, &t, n)?,
            IpcOp::FdPassing(_) => bail!(h::not_implemented(op)),
            IpcOp::Call(m) => {
                let (rt, mut peer) = connected(&t)?;
                Box::new(move || rt.block_on(peer.method(m)))
            }
            IpcOp::EchoBytes(n) => {
                let (rt, mut peer) = connected(&t)?;
                let payload = h::echo_payload(n);
                Box::new(move || rt.block_on(peer.echo_bytes(&payload)))
            }
            IpcOp::PropertyGet | IpcOp::PropertyGetX100 => {
                let reads = if op == IpcOp::PropertyGet { 1 } else { 100 };
                let (rt, mut peer) = connected(&t)?;
                Box::new(move || {
                    rt.block_on(async {
                        let mut d = Digest::new();
                        for _ in 0..reads {
                            peer.digest_items(&mut d).await?;
                        }
                        Ok(d.finish())
                    })
                })
            }
            IpcOp::EmitReceive => {
                let (rt, mut tx) = connected(&t)?;
                let mut rx = rt.block_on(async {
                    let mut rx = Peer::connect(&t).await?;
                    rx.add_match(&h::ping_rule()).await?;
                    anyhow::Ok(rx)
                })?;
                Box::new(move || {
                    rt.block_on(async {
                        tx.emit(None).await?;
                        rx.receive_ping().await
                    })
                })
            }
            IpcOp::Fanout(_) | IpcOp::NonmatchingRules(_) => {
                let (rt, mut peer) = connected(&t)?;
                Box::new(move || {
                    rt.block_on(peer.emit(None))?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::ConnectHello => {
                let rt = runtime()?;
                Box::new(move || {
                    // Dropping the connection closes its socket.
                    drop(rt.block_on(Peer::connect(&t))?);
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::ConnectMarshalSend => {
                let rt = runtime()?;
                let body = payload::mixed();
                Box::new(move || {
                    rt.block_on(async {
                        let mut peer = Peer::connect(&t).await?;
                        peer.emit(Some(&body)).await?; // flushed: every byte is on the socket
                        anyhow::Ok(())
                    })?;
                    Ok(Digest::new().finish())
                })
            }
            IpcOp::InFlight(n) => {
                let (rt, mut peer) = connected(&t)?;
                Box::new(move || rt.block_on(peer.in_flight(n)))
            }
            IpcOp::PropertyColdStart | IpcOp::RawSocket(_) | IpcOp::IdleConnections(_) => {
                bail!("{op:?} is not a client operation")
            }
            IpcOp::Subscription(SubscriptionOp::MatchChurn) => {
                let (rt, mut peer) = connected(&t)?;
                let rule = h::subscription::churn_rule();
                Box::new(move || rt.block_on(peer.match_churn(&rule)))
            }
            IpcOp::Subscription(
                s @ (SubscriptionOp::Burst(_) | SubscriptionOp::Delivered(_) | SubscriptionOp::NameOwnerChurn(_)),
            ) => subscriptions::client(runtime()?, &t, s)?,
            IpcOp::Subscription(SubscriptionOp::PropertyStorm(n)) => storm::client(runtime()?, &t, n)?,
        })
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        let (rt, mut peer) = connected(transport)?;
        rt.block_on(async {
            let mut items = Vec::new();
            peer.read_items(|id, name| items.push((id.to_owned(), name.to_owned())))
                .await?;
            Ok(items)
        })
    }
}
