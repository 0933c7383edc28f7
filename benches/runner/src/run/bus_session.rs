//! The bus session of IPC cells: a private bus (or none, peer to peer, or
//! the machine's system bus) per bus id, one server process per adapter on
//! it, subscriber processes for signal fan-out. Everything started here is
//! stopped here, on success, failure or interruption (Drop), and a session
//! lives exactly as long as the plan stays on its bus ([`CurrentBus`]).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use harness::contract::{Command, Subscribe};
use harness::ipc::{IpcOp, Transport};
use harness::results::BusRecord;
use indicatif::ProgressBar;

use super::match_rules::{HeldRules, RuleSet};
use crate::matrix::{AdapterEntry, BusEntry};
use crate::placement::{self, Placement};
use crate::process::adapter::Running;

/// Where clients reach the bus (or, peer to peer, nothing shared).
enum Medium {
    /// A private daemon we started.
    Bus(bus::RunningBus),
    /// A bus that was already there (`--system-bus`: the NixOS VM tests).
    Existing {
        address: String,
        socket: PathBuf,
    },
    P2p,
}

/// How long a server has to print READY (under callgrind too).
const SERVER_READY: Duration = Duration::from_secs(30);

/// The id cells get with `--system-bus`.
pub const SYSTEM_BUS: &str = "system";

/// The system bus of this machine: `$DBUS_SYSTEM_BUS_ADDRESS` (a `unix:path=`
/// address) or the standard socket.
fn system_bus() -> anyhow::Result<(String, PathBuf)> {
    let address =
        std::env::var("DBUS_SYSTEM_BUS_ADDRESS").unwrap_or_else(|_| "unix:path=/run/dbus/system_bus_socket".into());
    let socket = harness::address::unix_path_of(&address)
        .with_context(|| format!("the system bus address {address:?} is not a unix:path= address"))?;
    if !socket.exists() {
        bail!("there is no system bus socket at {}", socket.display());
    }
    Ok((address, socket))
}

/// Checks, once and before any cell, that the Unix sockets the IPC cells on
/// `buses` will have fit in `sun_path`: the bus daemons' (in the temporary
/// directory) and the peer-to-peer servers' (in `scratch`, the run's
/// directory). A deep $TMPDIR would otherwise fail every IPC cell, one by one.
pub fn check_socket_room(buses: &[&BusEntry], adapters: &[&AdapterEntry], scratch: &Path) -> anyhow::Result<()> {
    let longest_package = adapters.iter().map(|a| a.package.as_str()).max_by_key(|p| p.len());
    let paths = buses.iter().filter_map(|b| match b.id.as_str() {
        "p2p" => longest_package.map(|p| scratch.join(format!("bus-{}", b.id)).join(format!("{p}.sock"))),
        SYSTEM_BUS => None,
        id => id.parse().ok().map(bus::longest_socket_path),
    });
    let Some(longest) = paths.max_by_key(|p| p.as_os_str().len()) else {
        return Ok(());
    };
    let len = longest.as_os_str().len();
    if len > bus::SOCKET_PATH_MAX {
        let tmp = bus::private_dir::base();
        let tmp_len = tmp.as_os_str().len();
        bail!(
            "$TMPDIR is too long for the Unix sockets of IPC cells: {} would be {len} bytes, over the {} \
             that libdbus allows in a socket address (sun_path holds 107); set TMPDIR to a directory of \
             at most {} bytes (now {tmp_len}: {})",
            longest.display(),
            bus::SOCKET_PATH_MAX,
            tmp_len.saturating_sub(len - bus::SOCKET_PATH_MAX),
            tmp.display()
        );
    }
    Ok(())
}

/// One bus id's worth of infrastructure for a run.
pub struct BusSession {
    pub id: String,
    medium: Medium,
    scratch: PathBuf,
    servers: HashMap<String, Result<Running, String>>,
    /// Daemon version and config, for the results file.
    pub description: String,
    placement: Placement,
    /// The runner's own match rules of `signal/match-rules/*` cells.
    rules: Option<HeldRules>,
    /// What servers, subscribers and the bus daemon run under (valgrind's
    /// callgrind for `run --instructions`); empty: nothing.
    wrapper: Vec<OsString>,
}

/// The well-known name adapter `id`'s server owns (all servers share a bus).
pub fn service_name(adapter_id: &str) -> String {
    let clean: String = adapter_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("io.killing.spark.Bench.{clean}")
}

/// The names the private bus's policy lets method calls through to for
/// `adapter_id`: its service, and the names a client process of the application
/// families owns and is called by (the sink of `call/in-only-bytes/<n>`, the
/// object of `proxy/create-call/<server>`; `harness::ipc::application::served_names`).
pub fn callable_names(adapter_id: &str) -> Vec<String> {
    let service = service_name(adapter_id);
    let served = harness::ipc::application::served_names(&service);
    std::iter::once(service).chain(served).collect()
}

fn bus_transport(address: &str, socket: &Path, adapter: &AdapterEntry) -> Transport {
    Transport::Bus {
        address: address.to_string(),
        socket: socket.to_path_buf(),
        service_name: service_name(&adapter.id),
    }
}

impl BusSession {
    /// `adapters`: whose services clients will call (the private bus's policy lets exactly those through).
    pub fn start(
        entry: &BusEntry,
        adapters: &[&AdapterEntry],
        scratch: &Path,
        placement: Placement,
    ) -> anyhow::Result<BusSession> {
        BusSession::start_under(entry, adapters, scratch, placement, Vec::new())
    }

    /// [`BusSession::start`] with every process it starts under `wrapper`
    /// (a private dbus-daemon or busd, servers, subscribers).
    pub fn start_under(
        entry: &BusEntry,
        adapters: &[&AdapterEntry],
        scratch: &Path,
        placement: Placement,
        wrapper: Vec<OsString>,
    ) -> anyhow::Result<BusSession> {
        let (medium, description) = if entry.id == "p2p" {
            (Medium::P2p, "peer to peer: no bus".to_string())
        } else if entry.id == SYSTEM_BUS {
            let (address, socket) = system_bus()?;
            let description = format!("the existing system bus at {address}");
            (Medium::Existing { address, socket }, description)
        } else {
            let kind: bus::BusKind = entry.id.parse()?;
            let opts = bus::BusOptions {
                services: adapters.iter().flat_map(|a| callable_names(&a.id)).collect(),
                wrapper: wrapper.clone(),
                // The wrapper is callgrind's (`run --instructions`): follow a launcher's daemon.
                wrapper_children: if wrapper.is_empty() {
                    Vec::new()
                } else {
                    vec!["--trace-children=yes".into()]
                },
                ..bus::BusOptions::default()
            };
            let running = bus::start(kind, &opts)?;
            if let Some(cpu) = placement.bus {
                for pid in running.pids() {
                    placement::pin_process(pid, cpu)?;
                }
            }
            let description = running.version().to_string();
            (Medium::Bus(running), description)
        };
        let scratch = scratch.join(format!("bus-{}", entry.id));
        std::fs::create_dir_all(&scratch)?;
        Ok(BusSession {
            id: entry.id.clone(),
            medium,
            scratch,
            servers: HashMap::new(),
            description,
            placement,
            rules: None,
            wrapper,
        })
    }

    pub fn is_p2p(&self) -> bool {
        matches!(self.medium, Medium::P2p)
    }

    /// The running server of an adapter, if it was started.
    pub fn server_pid(&self, adapter_id: &str) -> Option<u32> {
        self.servers.get(adapter_id)?.as_ref().ok().map(Running::pid)
    }

    /// How much the private daemon has logged so far (a mark for [`BusSession::log_since`]).
    pub fn log_len(&self) -> usize {
        match &self.medium {
            Medium::Bus(b) => b.log().len(),
            Medium::Existing { .. } | Medium::P2p => 0,
        }
    }

    /// The daemon's last lines (up to three) logged since `mark`, on one line:
    /// what it said while a cell failed (busd: "Disconnecting `:busd.2`, as it
    /// didn't take 1 messages within 100ms"). Empty when it said nothing.
    pub fn log_since(&self, mark: usize) -> String {
        let Medium::Bus(b) = &self.medium else {
            return String::new();
        };
        let log = b.log();
        let new = log.get(mark..).unwrap_or_default();
        let lines: Vec<String> = new
            .lines()
            .map(|l| without_colours(l).trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        lines[lines.len().saturating_sub(3)..].join(" | ")
    }

    /// The processes of the private bus daemon (none for p2p or an existing bus).
    pub fn bus_pids(&self) -> Vec<u32> {
        match &self.medium {
            Medium::Bus(b) => b.pids(),
            Medium::Existing { .. } | Medium::P2p => Vec::new(),
        }
    }

    /// The bus socket, for a monitor (none peer to peer).
    pub fn bus_socket(&self) -> Option<&Path> {
        match &self.medium {
            Medium::Bus(b) => Some(b.socket_path()),
            Medium::Existing { socket, .. } => Some(socket),
            Medium::P2p => None,
        }
    }

    /// Where an adapter's commands find its service.
    fn transport(&self, adapter: &AdapterEntry) -> Transport {
        match &self.medium {
            Medium::Bus(b) => bus_transport(b.address(), b.socket_path(), adapter),
            Medium::Existing { address, socket } => bus_transport(address, socket, adapter),
            Medium::P2p => Transport::P2p {
                socket: self.scratch.join(format!("{}.sock", adapter.package)),
            },
        }
    }

    /// The adapter's server, started on first use; where it serves.
    pub fn server(&mut self, adapter: &AdapterEntry, bin: &Path) -> Result<Transport, String> {
        let transport = self.transport(adapter);
        self.check_bus()?;
        let entry = self.servers.entry(adapter.id.clone()).or_insert_with(|| {
            let serve = Command::Serve {
                transport: transport.clone(),
            };
            let what = format!("the {} server", adapter.id);
            Running::start_ready_under(&self.wrapper, bin, &serve, self.placement.server, what, SERVER_READY)
        });
        let alive = match entry {
            Ok(s) => s.check_alive(),
            Err(e) => return Err(e.clone()),
        };
        alive.map_err(|died| self.blame(died)).map(|_| transport)
    }

    /// `Err(what died)` if the bus or this adapter's server is gone. Asked
    /// after a client failed: a killed bus daemon closes its sockets (and its
    /// clients see the end of their connection) a moment before it can be
    /// reaped, so the bus is asked again for a short while first.
    pub fn health(&mut self, adapter: &AdapterEntry) -> Result<(), String> {
        self.bus_settled()?;
        let alive = match self.servers.get_mut(&adapter.id) {
            Some(Ok(server)) => server.check_alive(),
            _ => Ok(()),
        };
        alive.map_err(|died| self.blame(died))
    }

    /// Who to blame for a dead server: the bus, if it turns out dead within
    /// a short while (see [`BusSession::health`]), else the server.
    fn blame(&mut self, server_died: String) -> String {
        match self.bus_settled() {
            Err(bus_died) => bus_died,
            Ok(()) => server_died,
        }
    }

    /// `check_bus`, asked again for up to 500 ms on a private bus.
    fn bus_settled(&mut self) -> Result<(), String> {
        if !matches!(self.medium, Medium::Bus(_)) {
            return self.check_bus();
        }
        let deadline = Instant::now() + Duration::from_millis(500);
        loop {
            self.check_bus()?;
            if Instant::now() >= deadline {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn check_bus(&mut self) -> Result<(), String> {
        match &mut self.medium {
            Medium::Bus(b) => match b.is_running() {
                true => Ok(()),
                false => Err(format!("the {} bus daemon died", self.id)),
            },
            Medium::Existing { socket, .. } if !socket.exists() => Err(format!("the {} bus went away", self.id)),
            Medium::Existing { .. } | Medium::P2p => Ok(()),
        }
    }

    /// Holds exactly the rules of `want` on the bus (kept from the cell
    /// before when it wanted the same); `None` releases any.
    pub fn hold_rules(&mut self, want: Option<RuleSet>) -> Result<(), String> {
        if self.rules.as_ref().map(|r| r.set) == want {
            return Ok(());
        }
        self.rules = None;
        let Some(set) = want else { return Ok(()) };
        let socket = self.bus_socket().ok_or("match rules need a bus")?.to_path_buf();
        self.rules = Some(HeldRules::install(&socket, set)?);
        Ok(())
    }

    /// Starts the subscribers of a fan-out op; returns them and the ack FIFO.
    pub fn subscribers(
        &mut self,
        adapter: &AdapterEntry,
        bin: &Path,
        op: IpcOp,
    ) -> Result<Option<(Running, PathBuf)>, String> {
        let Some((connections, extra_rules)) = op.subscribers() else {
            return Ok(None);
        };
        let fifo = self.scratch.join(format!("ack-{}", adapter.package));
        let _ = std::fs::remove_file(&fifo);
        let c = std::ffi::CString::new(fifo.display().to_string()).map_err(|e| e.to_string())?;
        // SAFETY: mkfifo on a path we own.
        if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
            return Err(format!(
                "mkfifo {}: {}",
                fifo.display(),
                std::io::Error::last_os_error()
            ));
        }
        let subscribe = Command::Subscribe(Subscribe {
            transport: self.transport(adapter),
            connections,
            extra_rules,
            ack_fifo: fifo.clone(),
        });
        let what = format!("the {} subscribers", adapter.id);
        let s = Running::start_ready_under(
            &self.wrapper,
            bin,
            &subscribe,
            self.placement.server,
            what,
            Duration::from_secs(120),
        )?;
        Ok(Some((s, fifo)))
    }
}

/// The session of the bus the plan is on; replaced (stopping the old one
/// first) when the plan moves to the next bus. A bus that cannot start is
/// remembered as the reason its cells fail.
#[derive(Default)]
pub struct CurrentBus(Option<(String, Result<BusSession, String>)>);

impl CurrentBus {
    /// The session for a cell on `bus`, started on its first cell; `record`
    /// gets what the results file says about the bus (or why it could not start).
    pub fn session(
        &mut self,
        bus: &BusEntry,
        adapters: &[&AdapterEntry],
        scratch: &Path,
        placement: Placement,
        bar: &ProgressBar,
        record: impl FnOnce(BusRecord),
    ) -> Result<&mut BusSession, String> {
        if self.0.as_ref().map(|(id, _)| id) != Some(&bus.id) {
            self.0 = None; // stop the previous bus before starting the next
            bar.set_message(format!("starting bus {}", bus.id));
            // From here on, why a bus could not start is its cells' reason.
            let started = BusSession::start(bus, adapters, scratch, placement).map_err(|e| format!("{e:#}"));
            let description = match &started {
                Ok(s) => s.description.clone(),
                Err(e) => format!("could not start: {e}"),
            };
            record(BusRecord {
                id: bus.id.clone(),
                description,
            });
            self.0 = Some((bus.id.clone(), started));
        }
        let (_, session) = self.0.as_mut().expect("set above");
        session.as_mut().map_err(|e| e.clone())
    }
}

/// `line` without terminal colour sequences (`ESC [ ... m`: busd's log is coloured).
fn without_colours(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // Up to and including the sequence's final letter.
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn service_names_are_valid_bus_names() {
        assert_eq!(super::service_name("dbus-0.9"), "io.killing.spark.Bench.dbus_0_9");
        assert_eq!(
            super::callable_names("dbus-0.9"),
            [
                "io.killing.spark.Bench.dbus_0_9",
                "io.killing.spark.Bench.dbus_0_9.Sink",
                "io.killing.spark.Bench.dbus_0_9.Proxied"
            ]
        );
    }

    #[test]
    fn log_lines_lose_their_colours() {
        let line = "\u{1b}[2m2026-11-27T14:02:47Z\u{1b}[0m \u{1b}[33m WARN\u{1b}[0m busd: Disconnecting `:busd.2`";
        assert_eq!(
            super::without_colours(line),
            "2026-11-27T14:02:47Z  WARN busd: Disconnecting `:busd.2`"
        );
        assert_eq!(super::without_colours("plain"), "plain");
    }
}
