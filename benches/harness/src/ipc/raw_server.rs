//! The harness's own connection to a bus, serving [`super::proxied`]'s object
//! inside an adapter's client process (`proxy/create-call/<server>`): SASL
//! EXTERNAL, Hello, RequestName of the well-known name clients call it by
//! ([`proxied::proxied_name`]: the generated bus policy lets method calls through
//! to listed names only, never to a unique name), then every method call answered from [`proxied::answer`],
//! with the harness's reference codec, on a thread of its own. It is the same
//! for every library, so a cell's bus messages per operation beyond the call and
//! its reply are the client library's own (GetAll, Introspect, AddMatch).
//! The same connection serves [`super::startup`]'s tree of objects
//! (`proxy/startup/<n>`, [`serve_startup`]). Not benchmarked itself: it only answers.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};

use super::application::{self as app, SharedTally};
use super::proxied::{self, ProxyServer, Reply};
use super::startup::{self, SharedStartupTally, StartupServer};
use super::{stream, Transport};
use crate::wire::{self, Message, Value};

/// A running server: the well-known name it owns on the bus (the one to call),
/// and the tally of the operation's own calls it answered
/// ([`proxied::PROXIED_METHOD`], each recorded as an empty array:
/// [`app::take_tally`] after each op).
pub struct RawServer {
    pub name: String,
    pub tally: SharedTally,
}

struct Conn {
    stream: UnixStream,
    serial: u32,
}

impl Conn {
    fn send(&mut self, kind: u8, mut fields: Vec<(u8, Value)>, body: &[Value]) -> Result<()> {
        self.serial += 1;
        let signature: String = body.iter().map(Value::signature).collect();
        if !signature.is_empty() {
            fields.push((wire::FIELD_SIGNATURE, Value::Signature(signature)));
        }
        let bytes = wire::encode_message(kind, 0, self.serial, &fields, body);
        self.stream.write_all(&bytes).context("writing to the bus")
    }

    fn recv(&mut self) -> Result<Message> {
        stream::read_message(&mut self.stream).context("reading from the bus")
    }

    /// Connects, authenticates with our uid, says Hello; returns the unique name.
    fn connect(socket: &Path) -> Result<(Conn, String)> {
        let stream = UnixStream::connect(socket).with_context(|| format!("connecting to {}", socket.display()))?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        let mut c = Conn { stream, serial: 0 };
        stream::authenticate(&mut c.stream, false).context("authenticating to the bus")?;
        c.send(
            wire::MESSAGE_METHOD_CALL,
            vec![
                (wire::FIELD_PATH, Value::ObjectPath("/org/freedesktop/DBus".into())),
                (wire::FIELD_INTERFACE, Value::Str("org.freedesktop.DBus".into())),
                (wire::FIELD_MEMBER, Value::Str("Hello".into())),
                (wire::FIELD_DESTINATION, Value::Str("org.freedesktop.DBus".into())),
            ],
            &[],
        )?;
        loop {
            let m = c.recv()?;
            if m.header.field(wire::FIELD_REPLY_SERIAL) == Some(&Value::U32(1)) {
                let name = m
                    .values
                    .first()
                    .and_then(Value::as_str)
                    .context("Hello's reply has no name")?;
                let name = name.to_string();
                c.stream.set_read_timeout(None)?;
                return Ok((c, name));
            }
        }
    }

    /// Asks the bus for `name` (DO_NOT_QUEUE) and waits for its answer: this
    /// connection must become its primary owner.
    fn request_name(&mut self, name: &str) -> Result<()> {
        self.send(
            wire::MESSAGE_METHOD_CALL,
            vec![
                (wire::FIELD_PATH, Value::ObjectPath("/org/freedesktop/DBus".into())),
                (wire::FIELD_INTERFACE, Value::Str("org.freedesktop.DBus".into())),
                (wire::FIELD_MEMBER, Value::Str("RequestName".into())),
                (wire::FIELD_DESTINATION, Value::Str("org.freedesktop.DBus".into())),
            ],
            &[Value::Str(name.into()), Value::U32(4)],
        )?;
        let serial = self.serial;
        loop {
            let m = self.recv()?;
            if m.header.field(wire::FIELD_REPLY_SERIAL) != Some(&Value::U32(serial)) {
                continue;
            }
            if m.header.message_type == wire::MESSAGE_ERROR {
                let error = m.header.field_str(wire::FIELD_ERROR_NAME).unwrap_or_default();
                let text = m.values.first().and_then(Value::as_str).unwrap_or_default();
                bail!("the bus refused RequestName {name}: {error}: {text}");
            }
            // 1: DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER.
            ensure!(
                m.values.first() == Some(&Value::U32(1)),
                "RequestName {name} answered {:?}, not primary owner (1)",
                m.values
            );
            return Ok(());
        }
    }

    /// Answers one method call with `answer(path, interface, member, args)`
    /// (other messages, such as NameAcquired, are ignored).
    fn answer(&mut self, call: &Message, answer: &mut Answer, tally: &SharedTally) -> Result<()> {
        if call.header.message_type != wire::MESSAGE_METHOD_CALL {
            return Ok(());
        }
        let h = &call.header;
        let reply = answer(
            h.field_str(wire::FIELD_PATH).unwrap_or_default(),
            h.field_str(wire::FIELD_INTERFACE),
            h.field_str(wire::FIELD_MEMBER).unwrap_or_default(),
            &call.values,
        );
        if h.flags & wire::FLAG_NO_REPLY_EXPECTED != 0 {
            return Ok(());
        }
        let mut fields = vec![(wire::FIELD_REPLY_SERIAL, Value::U32(h.serial))];
        if let Some(sender) = h.field_str(wire::FIELD_SENDER) {
            fields.push((wire::FIELD_DESTINATION, Value::Str(sender.into())));
        }
        match reply {
            Reply::Return { values, counted } => {
                if counted {
                    app::record(tally, &[]);
                }
                self.send(wire::MESSAGE_METHOD_RETURN, fields, &values)
            }
            Reply::Error { name, message } => {
                fields.push((wire::FIELD_ERROR_NAME, Value::Str(name.into())));
                self.send(wire::MESSAGE_ERROR, fields, &[Value::Str(message)])
            }
        }
    }
}

/// `proxy/create-call/<server>`'s set-up, the same in every adapter: on the bus of
/// `t`, [`serve_proxied`] under [`proxied::proxied_name`] of its service name; an
/// error peer to peer (the family goes through a bus: the object owns a name).
pub fn serve_proxied_on(t: &Transport, server: ProxyServer) -> Result<RawServer> {
    let Transport::Bus {
        socket, service_name, ..
    } = t
    else {
        bail!("proxy/create-call goes through a bus");
    };
    serve_proxied(socket, &proxied::proxied_name(service_name), server)
}

/// How a server answers a call of `interface.member` on `path` with `args`.
type Answer = dyn FnMut(&str, Option<&str>, &str, &[Value]) -> Reply + Send;

/// Connects to the bus at `socket`, owns `name` ([`proxied::proxied_name`] of the
/// adapter's service name) and serves the object as `server` serves it on a
/// thread of its own until the process exits (or the bus closes the
/// connection); returns once it owns the name.
pub fn serve_proxied(socket: &Path, name: &str, server: ProxyServer) -> Result<RawServer> {
    serve(
        socket,
        name,
        Box::new(move |path, interface, member, args| proxied::answer(server, path, interface, member, args)),
    )
}

/// Connects to the bus at `socket`, owns `name` ([`proxied::proxied_name`] of the
/// adapter's service name: the name the bus policy lists) and serves
/// [`startup`]'s tree of `n` children as `server` answers, on a thread of its
/// own, tallying Introspect and `Id` calls in the returned tally
/// ([`startup::take_tally`] after each op); returns once it owns the name.
pub fn serve_startup(
    socket: &Path,
    name: &str,
    n: usize,
    server: StartupServer,
) -> Result<(String, SharedStartupTally)> {
    let tally = SharedStartupTally::default();
    let counted = tally.clone();
    let served = serve(
        socket,
        name,
        Box::new(move |path, interface, member, _args| startup::answer(n, server, &counted, path, interface, member)),
    )?;
    Ok((served.name, tally))
}

/// Connects, owns `name`, and answers every call with `answer` on a thread of its own.
fn serve(socket: &Path, name: &str, mut answer: Box<Answer>) -> Result<RawServer> {
    let (mut conn, _unique_name) = Conn::connect(socket)?;
    conn.stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    conn.request_name(name)?;
    conn.stream.set_read_timeout(None)?;
    let tally = SharedTally::default();
    let counted = tally.clone();
    let (started, wait) = mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("proxied".into())
        .spawn(move || {
            let _ = started.send(());
            loop {
                let served = conn.recv().and_then(|m| conn.answer(&m, &mut answer, &counted));
                if let Err(e) = served {
                    eprintln!("the proxied object's connection ended: {e:#}");
                    return;
                }
            }
        })
        .context("starting the proxied object's thread")?;
    wait.recv().context("the proxied object's thread did not start")?;
    Ok(RawServer {
        name: name.to_string(),
        tally,
    })
}
