//! IPC cells: a private bus (or none, peer to peer) per bus id, one server
//! process per adapter on it, subscriber processes for signal fan-out, and
//! whole-process timing for cold starts. Everything started here is stopped
//! here, on success, failure or interruption (Drop).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use harness::ipc::{self, IpcOp};
use harness::results::{Measurement, WallTime};

use crate::exec;
use crate::matrix::{AdapterEntry, BusEntry};
use crate::placement::{self, Placement};

/// A child process (server or subscribers) killed with its group on drop.
pub struct Service {
    child: Child,
    what: String,
}

impl Service {
    /// Starts `cmd` and waits for it to print READY.
    fn start(mut cmd: Command, what: String, timeout: Duration) -> Result<Service, String> {
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(Stdio::null())
            .process_group(0);
        let mut child = cmd.spawn().map_err(|e| format!("cannot start {what}: {e}"))?;
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let ready = BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .any(|l| l.trim() == harness::cli::READY);
            let _ = tx.send(ready);
        });
        let (etx, erx) = mpsc::channel();
        std::thread::spawn(move || {
            let lines: Vec<String> = BufReader::new(stderr).lines().map_while(Result::ok).collect();
            let _ = etx.send(lines);
        });
        let service = Service {
            child,
            what: what.clone(),
        };
        match rx.recv_timeout(timeout) {
            Ok(true) => Ok(service),
            outcome => {
                drop(service); // kills it, which closes stderr
                let tail = erx.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
                let tail = tail[tail.len().saturating_sub(3)..].join(" | ");
                let why = match outcome {
                    Err(_) => format!("was not ready after {:.0} s", timeout.as_secs_f64()),
                    _ => "exited before it was ready".to_string(),
                };
                Err(format!(
                    "{what} {why}{}",
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(": {tail}")
                    }
                ))
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `Err(reason)` if the process has exited.
    fn check_alive(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!("{} died ({status})", self.what)),
            Err(e) => Err(format!("{}: {e}", self.what)),
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        exec::kill_group(self.child.id() as i32);
        let _ = self.child.wait();
    }
}

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

/// The id cells get with `--system-bus`.
pub const SYSTEM_BUS: &str = "system";

/// The system bus of this machine: `$DBUS_SYSTEM_BUS_ADDRESS` (a `unix:path=`
/// address) or the standard socket.
fn system_bus() -> Result<(String, PathBuf), String> {
    let address =
        std::env::var("DBUS_SYSTEM_BUS_ADDRESS").unwrap_or_else(|_| "unix:path=/run/dbus/system_bus_socket".into());
    let socket = address
        .split(',')
        .find_map(|part| part.strip_prefix("unix:path="))
        .map(PathBuf::from)
        .ok_or_else(|| format!("the system bus address {address:?} is not a unix:path= address"))?;
    if !socket.exists() {
        return Err(format!("there is no system bus socket at {}", socket.display()));
    }
    Ok((address, socket))
}

/// One bus id's worth of infrastructure for a run.
pub struct BusSession {
    pub id: String,
    medium: Medium,
    scratch: PathBuf,
    servers: HashMap<String, Result<Service, String>>,
    /// Daemon version and config, for the results file.
    pub description: String,
    placement: Placement,
}

/// The well-known name adapter `id`'s server owns (all servers share a bus).
pub fn service_name(adapter_id: &str) -> String {
    let clean: String = adapter_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("io.killing.spark.Bench.{clean}")
}

fn bus_args(address: &str, socket: &Path, adapter: &AdapterEntry) -> Vec<String> {
    vec![
        "--bus-address".into(),
        address.to_string(),
        "--bus-socket".into(),
        socket.display().to_string(),
        "--service-name".into(),
        service_name(&adapter.id),
    ]
}

impl BusSession {
    /// `adapters`: whose services clients will call (the private bus's policy lets exactly those through).
    pub fn start(
        entry: &BusEntry,
        adapters: &[&AdapterEntry],
        scratch: &Path,
        placement: Placement,
    ) -> Result<BusSession, String> {
        let (medium, description) = if entry.id == "p2p" {
            (Medium::P2p, "peer to peer: no bus".to_string())
        } else if entry.id == SYSTEM_BUS {
            let (address, socket) = system_bus()?;
            let description = format!("the existing system bus at {address}");
            (Medium::Existing { address, socket }, description)
        } else {
            let kind: bus::BusKind = entry.id.parse().map_err(|e| format!("{e}"))?;
            let opts = bus::BusOptions {
                services: adapters.iter().map(|a| service_name(&a.id)).collect(),
                ..bus::BusOptions::default()
            };
            let running = bus::start(kind, &opts).map_err(|e| format!("{e:#}"))?;
            if let Some(cpu) = placement.bus {
                for pid in running.pids() {
                    placement::pin_process(pid, cpu).map_err(|e| format!("{e:#}"))?;
                }
            }
            let description = running.version().to_string();
            (Medium::Bus(running), description)
        };
        let scratch = scratch.join(format!("bus-{}", entry.id));
        std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
        Ok(BusSession {
            id: entry.id.clone(),
            medium,
            scratch,
            servers: HashMap::new(),
            description,
            placement,
        })
    }

    pub fn is_p2p(&self) -> bool {
        matches!(self.medium, Medium::P2p)
    }

    /// The running server of an adapter, if it was started.
    pub fn server_pid(&self, adapter_id: &str) -> Option<u32> {
        self.servers.get(adapter_id)?.as_ref().ok().map(Service::pid)
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

    /// Transport arguments for an adapter's commands.
    fn transport_args(&self, adapter: &AdapterEntry) -> Vec<String> {
        match &self.medium {
            Medium::Bus(b) => bus_args(b.address(), b.socket_path(), adapter),
            Medium::Existing { address, socket } => bus_args(address, socket, adapter),
            Medium::P2p => {
                vec![
                    "--p2p-socket".into(),
                    self.scratch
                        .join(format!("{}.sock", adapter.package))
                        .display()
                        .to_string(),
                ]
            }
        }
    }

    /// The adapter's server, started on first use; its transport arguments.
    pub fn server(&mut self, adapter: &AdapterEntry, bin: &Path) -> Result<Vec<String>, String> {
        let args = self.transport_args(adapter);
        self.check_bus()?;
        let entry = self.servers.entry(adapter.id.clone()).or_insert_with(|| {
            let mut cmd = Command::new(bin);
            cmd.arg("serve").args(&args);
            placement::pin_command(&mut cmd, self.placement.server);
            Service::start(cmd, format!("the {} server", adapter.id), Duration::from_secs(30))
        });
        match entry {
            Ok(s) => s.check_alive().map(|_| args),
            Err(e) => Err(e.clone()),
        }
    }

    /// `Err(what died)` if the bus or this adapter's server is gone.
    pub fn health(&mut self, adapter: &AdapterEntry) -> Result<(), String> {
        self.check_bus()?;
        match self.servers.get_mut(&adapter.id) {
            Some(Ok(server)) => server.check_alive(),
            _ => Ok(()),
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

    /// Starts the subscribers of a fan-out op; returns them and the ack FIFO.
    pub fn subscribers(
        &mut self,
        adapter: &AdapterEntry,
        bin: &Path,
        op: IpcOp,
    ) -> Result<Option<(Service, PathBuf)>, String> {
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
        let mut cmd = Command::new(bin);
        cmd.arg("subscribe")
            .args(self.transport_args(adapter))
            .arg("--connections")
            .arg(connections.to_string())
            .arg("--extra-rules")
            .arg(extra_rules.to_string())
            .arg("--ack-fifo")
            .arg(&fifo);
        placement::pin_command(&mut cmd, self.placement.server);
        let s = Service::start(cmd, format!("the {} subscribers", adapter.id), Duration::from_secs(120))?;
        Ok(Some((s, fifo)))
    }
}

/// `property/cold-start`: times `samples` whole `cold-start` processes from
/// outside, checking each one printed the property.
pub fn cold_start(
    bin: &Path,
    transport: &[String],
    samples: usize,
    scratch: &Path,
    interrupted: &AtomicBool,
) -> Result<Measurement, String> {
    let expected: String = ipc::items().iter().map(|(a, b)| format!("{a}\t{b}\n")).collect();
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let mut cmd = Command::new(bin);
        cmd.arg("cold-start").args(transport);
        let start = Instant::now();
        let out = exec::run(cmd, None, scratch, Duration::from_secs(30), interrupted).map_err(|e| format!("{e:#}"))?;
        let ns = start.elapsed().as_nanos() as f64;
        if !out.success() {
            return Err(format!("cold-start failed: {}", out.describe()));
        }
        if String::from_utf8_lossy(&out.stdout) != expected {
            return Err("cold-start printed something other than the Items property".into());
        }
        times.push(ns);
    }
    Ok(Measurement {
        wall: WallTime::from_samples(&times),
        throughput_bytes: 0,
        alloc: None,
        instructions_per_op: None,
        verification_notes: vec!["timed from outside: process start to exit, including exec".into()],
        floor_ratio: None,
        costs: None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn service_names_are_valid_bus_names() {
        assert_eq!(super::service_name("dbus-0.9"), "io.killing.spark.Bench.dbus_0_9");
    }
}
