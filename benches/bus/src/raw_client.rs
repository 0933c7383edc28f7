//! A minimal D-Bus client on a Unix socket, built on the harness's reference
//! codec: SASL EXTERNAL, Hello, method calls, raw send and receive. Used for
//! readiness checks, tests and monitors; not benchmarked.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use harness::ipc::stream;
use harness::wire::{self, Message, Value};

pub struct RawConnection {
    stream: UnixStream,
    serial: u32,
    /// Messages that arrived while waiting for a reply.
    pub pending: Vec<Message>,
}

const BUS_NAME: &str = "org.freedesktop.DBus";
const BUS_PATH: &str = "/org/freedesktop/DBus";

/// Adds the SIGNATURE header field a body of `args` needs (none when empty).
fn push_signature(fields: &mut Vec<(u8, Value)>, args: &[Value]) {
    let sig: String = args.iter().map(Value::signature).collect();
    if !sig.is_empty() {
        fields.push((wire::FIELD_SIGNATURE, Value::Signature(sig)));
    }
}

impl RawConnection {
    /// Connects and authenticates (SASL EXTERNAL with our uid).
    pub fn connect(socket: &Path, timeout: Duration) -> Result<RawConnection> {
        Self::connect_sasl(socket, timeout, false)
    }

    /// Connects and authenticates like [`RawConnection::connect`], and also
    /// negotiates Unix fd passing (`NEGOTIATE_UNIX_FD`): a bus sends a
    /// monitor the messages that carry fds only if it can take them. The
    /// fds themselves are dropped: a plain read() takes no SCM_RIGHTS, so
    /// the kernel closes them (they are never installed in this process).
    pub fn connect_unix_fds(socket: &Path, timeout: Duration) -> Result<RawConnection> {
        Self::connect_sasl(socket, timeout, true)
    }

    fn connect_sasl(socket: &Path, timeout: Duration, unix_fds: bool) -> Result<RawConnection> {
        let stream = UnixStream::connect(socket).with_context(|| format!("connecting to {}", socket.display()))?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        let mut s = stream.try_clone()?;
        stream::authenticate(&mut s, unix_fds)?;
        Ok(RawConnection {
            stream,
            serial: 0,
            pending: Vec::new(),
        })
    }

    fn next_serial(&mut self) -> u32 {
        self.serial += 1;
        self.serial
    }

    /// Sends a method call and waits for its reply (other messages are kept in `pending`).
    pub fn call(&mut self, dest: &str, path: &str, iface: &str, member: &str, args: &[Value]) -> Result<Message> {
        let serial = self.next_serial();
        let mut fields = vec![
            (wire::FIELD_PATH, Value::ObjectPath(path.into())),
            (wire::FIELD_INTERFACE, Value::Str(iface.into())),
            (wire::FIELD_MEMBER, Value::Str(member.into())),
            (wire::FIELD_DESTINATION, Value::Str(dest.into())),
        ];
        push_signature(&mut fields, args);
        self.send(&wire::encode_message(
            wire::MESSAGE_METHOD_CALL,
            0,
            serial,
            &fields,
            args,
        ))?;
        loop {
            let m = self.recv()?;
            let is_reply = matches!(m.header.field(wire::FIELD_REPLY_SERIAL), Some(Value::U32(s)) if *s == serial);
            if !is_reply {
                self.pending.push(m);
                continue;
            }
            if m.header.message_type == wire::MESSAGE_ERROR {
                let name = m.header.field_str(wire::FIELD_ERROR_NAME).unwrap_or("?").to_string();
                let text = m.values.first().and_then(Value::as_str).unwrap_or("").to_string();
                bail!("{member} failed: {name}: {text}");
            }
            return Ok(m);
        }
    }

    /// A call to the bus itself.
    pub fn bus_call(&mut self, member: &str, args: &[Value]) -> Result<Message> {
        self.call(BUS_NAME, BUS_PATH, BUS_NAME, member, args)
    }

    /// Hello; returns the unique name.
    pub fn hello(&mut self) -> Result<String> {
        let reply = self.bus_call("Hello", &[])?;
        reply
            .values
            .first()
            .and_then(Value::as_str)
            .map(str::to_string)
            .context("Hello reply without a name")
    }

    /// Sends a signal to whoever listens.
    pub fn signal(&mut self, path: &str, iface: &str, member: &str, args: &[Value]) -> Result<()> {
        let serial = self.next_serial();
        let mut fields = vec![
            (wire::FIELD_PATH, Value::ObjectPath(path.into())),
            (wire::FIELD_INTERFACE, Value::Str(iface.into())),
            (wire::FIELD_MEMBER, Value::Str(member.into())),
        ];
        push_signature(&mut fields, args);
        self.send(&wire::encode_message(
            wire::MESSAGE_SIGNAL,
            wire::FLAG_NO_REPLY_EXPECTED,
            serial,
            &fields,
            args,
        ))
    }

    /// Replies to a method call with `args`.
    pub fn reply(&mut self, call: &Message, args: &[Value]) -> Result<()> {
        let serial = self.next_serial();
        let mut fields = vec![(wire::FIELD_REPLY_SERIAL, Value::U32(call.header.serial))];
        if let Some(sender) = call.header.field_str(wire::FIELD_SENDER) {
            fields.push((wire::FIELD_DESTINATION, Value::Str(sender.into())));
        }
        push_signature(&mut fields, args);
        self.send(&wire::encode_message(
            wire::MESSAGE_METHOD_RETURN,
            0,
            serial,
            &fields,
            args,
        ))
    }

    /// Waits for the next method call (other messages are dropped).
    pub fn next_call(&mut self) -> Result<Message> {
        loop {
            let m = match self.pending.pop() {
                Some(m) => m,
                None => self.recv()?,
            };
            if m.header.message_type == wire::MESSAGE_METHOD_CALL {
                return Ok(m);
            }
        }
    }

    /// Makes the read timeout infinite (servers wait for calls forever).
    pub fn wait_forever(&mut self) -> Result<()> {
        self.stream.set_read_timeout(None).context("clearing the read timeout")
    }

    pub fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.stream.write_all(bytes).context("sending")
    }

    /// Reads one whole message.
    pub fn recv(&mut self) -> Result<Message> {
        Ok(wire::decode_message(&self.recv_frame()?)?)
    }

    /// Reads the bytes of one whole message, undecoded (either byte order).
    pub fn recv_frame(&mut self) -> Result<Vec<u8>> {
        stream::read_frame(&mut self.stream)
    }

    /// Installs `rules` with AddMatch, pipelined: every call is written (by a
    /// second thread) before the replies are read, so N rules cost one round
    /// trip, not N. Fails on the first error reply (a quota, a bad rule).
    pub fn add_matches(&mut self, rules: &[String]) -> Result<()> {
        let first = self.serial + 1;
        let mut bytes = Vec::new();
        for rule in rules {
            let serial = self.next_serial();
            let args = [Value::Str(rule.clone())];
            let mut fields = vec![
                (wire::FIELD_PATH, Value::ObjectPath(BUS_PATH.into())),
                (wire::FIELD_INTERFACE, Value::Str(BUS_NAME.into())),
                (wire::FIELD_MEMBER, Value::Str("AddMatch".into())),
                (wire::FIELD_DESTINATION, Value::Str(BUS_NAME.into())),
            ];
            push_signature(&mut fields, &args);
            bytes.extend(wire::encode_message(
                wire::MESSAGE_METHOD_CALL,
                0,
                serial,
                &fields,
                &args,
            ));
        }
        let mut writer = self.try_clone_stream()?;
        let written = std::thread::spawn(move || writer.write_all(&bytes));
        let mut replies = 0;
        while replies < rules.len() {
            let m = self.recv().context("waiting for AddMatch replies")?;
            let Some(Value::U32(serial)) = m.header.field(wire::FIELD_REPLY_SERIAL) else {
                continue; // a signal (NameAcquired): not ours to count
            };
            if m.header.message_type == wire::MESSAGE_ERROR {
                let name = m.header.field_str(wire::FIELD_ERROR_NAME).unwrap_or("?");
                let text = m.values.first().and_then(Value::as_str).unwrap_or("");
                let index = serial.wrapping_sub(first) as usize;
                bail!("AddMatch of rule {index} of {} failed: {name}: {text}", rules.len());
            }
            replies += 1;
        }
        written
            .join()
            .map_err(|_| anyhow::anyhow!("the AddMatch writer panicked"))?
            .context("sending AddMatch calls")
    }

    /// A second handle on the socket (to shut it down from another thread).
    pub fn try_clone_stream(&self) -> Result<UnixStream> {
        self.stream.try_clone().context("cloning the socket")
    }
}
