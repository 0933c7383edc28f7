//! Counting the messages a bus routes during a window of operations.
//!
//! A monitor connection (`org.freedesktop.DBus.Monitoring.BecomeMonitor`
//! with no match rules) receives a copy of every message the bus routes. A
//! second connection brackets each window with two marker signals; the
//! monitor thread counts the messages between them. Waiting until the
//! monitor has seen a marker orders it against the traffic of every other
//! connection: what the bus routed before the begin marker is not counted,
//! and anything a client got a reply to before the end marker is.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use harness::wire::{self, Value};

use crate::raw_client::RawConnection;
use crate::routed;

const MARKER_PATH: &str = "/io/killing/spark/DbusMatrix";
const MARKER_INTERFACE: &str = "io.killing.spark.DbusMatrix";
const BEGIN: &str = "WindowBegin";
const END: &str = "WindowEnd";

/// Messages and bytes routed by the bus in one window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    pub messages: u64,
    pub bytes: u64,
}

#[derive(Default)]
struct State {
    /// The window being counted and its traffic so far.
    open: Option<(u64, Traffic)>,
    /// Windows whose end marker the monitor has seen.
    closed: HashMap<u64, Traffic>,
    /// Windows whose begin marker the monitor has seen.
    begun: HashSet<u64>,
    /// Why the monitor stopped reading, once it has.
    stopped: Option<String>,
    /// Windows whose messages are also counted by kind (`routed::kind`),
    /// and those counts: only where asked for, decoding every message is work.
    recorded: HashMap<u64, BTreeMap<String, u64>>,
}

pub struct BusMonitor {
    markers: RawConnection,
    shared: Arc<(Mutex<State>, Condvar)>,
    monitor_socket: UnixStream,
    next_window: u64,
}

impl BusMonitor {
    /// Connects a monitor and a marker connection to the bus at `socket`.
    /// Fails when the bus refuses `BecomeMonitor` (a user it does not trust).
    pub fn connect(socket: &Path) -> Result<BusMonitor> {
        let timeout = Duration::from_secs(10);
        // With fd passing: buses do not copy a message with fds (call/fd-passing) to a monitor that cannot take them.
        let mut monitor = RawConnection::connect_unix_fds(socket, timeout)?;
        monitor.hello()?;
        monitor
            .call(
                "org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.Monitoring",
                "BecomeMonitor",
                &[Value::Array("s".into(), Vec::new()), Value::U32(0)],
            )
            .context("the bus refused a monitor connection")?;
        monitor.wait_forever()?;
        let monitor_socket = monitor.try_clone_stream()?;
        let mut markers = RawConnection::connect(socket, timeout)?;
        markers.hello()?;
        let shared = Arc::new((Mutex::new(State::default()), Condvar::new()));
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("bus-monitor".into())
            .spawn(move || read_forever(monitor, &thread_shared))
            .context("starting the monitor thread")?;
        Ok(BusMonitor {
            markers,
            shared,
            monitor_socket,
            next_window: 1,
        })
    }

    /// Opens a window; returns once the monitor has seen its begin marker.
    pub fn begin(&mut self) -> Result<u64> {
        let id = self.next_window;
        self.next_window += 1;
        self.mark(BEGIN, id)?;
        self.wait(|s| s.begun.remove(&id).then_some(()))?;
        Ok(id)
    }

    /// Opens a window whose messages are also counted by kind
    /// (`routed::kind`: type, member, direction); close it with `end_recorded`.
    pub fn begin_recorded(&mut self) -> Result<u64> {
        let id = self.next_window;
        lock(&self.shared).recorded.insert(id, BTreeMap::new());
        self.begin()
    }

    /// Closes a window opened by `begin_recorded`: its traffic and its
    /// messages by kind.
    pub fn end_recorded(&mut self, id: u64) -> Result<(Traffic, BTreeMap<String, u64>)> {
        let traffic = self.end(id)?;
        let kinds = lock(&self.shared).recorded.remove(&id).unwrap_or_default();
        Ok((traffic, kinds))
    }

    /// Closes window `id`; returns what the bus routed in it.
    pub fn end(&mut self, id: u64) -> Result<Traffic> {
        self.mark(END, id)?;
        self.wait(|s| s.closed.remove(&id))
    }

    fn mark(&mut self, member: &str, id: u64) -> Result<()> {
        self.markers
            .signal(MARKER_PATH, MARKER_INTERFACE, member, &[Value::U64(id)])
            .context("sending a window marker")
    }

    fn wait<T>(&self, mut ready: impl FnMut(&mut State) -> Option<T>) -> Result<T> {
        let (lock, cond) = &*self.shared;
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(t) = ready(&mut state) {
                return Ok(t);
            }
            if let Some(why) = &state.stopped {
                bail!("the bus monitor stopped: {why}");
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                bail!("the bus monitor did not see a window marker within 10 s");
            }
            state = cond.wait_timeout(state, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }
}

impl Drop for BusMonitor {
    fn drop(&mut self) {
        // Ends the monitor thread's blocking read.
        let _ = self.monitor_socket.shutdown(Shutdown::Both);
    }
}

fn lock(shared: &(Mutex<State>, Condvar)) -> std::sync::MutexGuard<'_, State> {
    shared.0.lock().unwrap_or_else(|e| e.into_inner())
}

/// `Some((member, window))` when `frame` is one of our markers.
fn marker(frame: &[u8]) -> Option<(String, u64)> {
    // Markers are small signals; nothing else is decoded.
    if frame.get(1) != Some(&wire::MESSAGE_SIGNAL) || frame.len() > 256 {
        return None;
    }
    let m = wire::decode_message(frame).ok()?;
    if m.header.field_str(wire::FIELD_INTERFACE) != Some(MARKER_INTERFACE) {
        return None;
    }
    let member = m.header.field_str(wire::FIELD_MEMBER)?.to_string();
    match m.values.first() {
        Some(Value::U64(id)) => Some((member, *id)),
        _ => None,
    }
}

fn read_forever(mut monitor: RawConnection, shared: &(Mutex<State>, Condvar)) {
    let (lock, cond) = shared;
    let why = loop {
        let frame = match monitor.recv_frame() {
            Ok(f) => f,
            Err(e) => break format!("{e:#}"),
        };
        let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
        match marker(&frame) {
            Some((member, id)) if member == BEGIN => {
                state.open = Some((id, Traffic::default()));
                state.begun.insert(id);
            }
            Some((member, id)) if member == END => {
                if let Some((open, traffic)) = state.open.take() {
                    if open == id {
                        state.closed.insert(id, traffic);
                    }
                }
            }
            _ => {
                if let Some((id, traffic)) = state.open.as_mut() {
                    traffic.messages += 1;
                    traffic.bytes += frame.len() as u64;
                    let id = *id;
                    if let Some(kinds) = state.recorded.get_mut(&id) {
                        *kinds.entry(routed::kind(&frame)).or_default() += 1;
                    }
                }
                continue;
            }
        }
        cond.notify_all();
    };
    let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
    state.stopped = Some(why);
    cond.notify_all();
}
