//! `call/in-flight/<n>` with tokio-dbus 0.2: the n calls are written into the
//! `SendBuf` one after another, `Connection::flush` writes them all, then
//! `Connection::wait` is driven until every reply has arrived; replies are
//! matched to their calls by reply serial.

use std::collections::HashMap;

use anyhow::{bail, Context, Result};
use harness::ipc::{self as h, Method};
use tokio_dbus::MessageKind;

use super::{Peer, PATH};

impl Peer {
    pub(super) async fn in_flight(&mut self, n: usize) -> Result<u64> {
        let mut serials = Vec::with_capacity(n);
        for i in 0..n {
            self.buf.body.clear();
            self.buf.body.store(h::in_flight_arg(i))?;
            let mut msg = self
                .buf
                .send
                .method_call(PATH, Method::InOutInt.member())
                .with_interface(h::INTERFACE)
                .with_body(&self.buf.body);
            if let Some(d) = &self.destination {
                msg = msg.with_destination(d);
            }
            serials.push(self.buf.send.write_message(msg)?);
        }
        self.conn.flush(&mut self.buf).await?;
        let mut replies = HashMap::with_capacity(n);
        while replies.len() < n {
            self.conn.wait(&mut self.buf).await?;
            let msg = self.buf.recv.last_message()?;
            match msg.kind() {
                MessageKind::MethodReturn { reply_serial } => {
                    replies.insert(reply_serial, msg.body().load::<i32>()?);
                }
                MessageKind::Error { error_name, .. } => {
                    let text = msg.body().read::<str>().unwrap_or_default();
                    bail!("error reply to an in-flight call {error_name}: {text}");
                }
                _ => {}
            }
        }
        let values = serials
            .iter()
            .enumerate()
            .map(|(i, s)| {
                replies
                    .get(s)
                    .copied()
                    .with_context(|| format!("no reply to in-flight call {i}"))
            })
            .collect::<Result<Vec<i32>>>()?;
        Ok(h::in_flight_digest(values))
    }
}
