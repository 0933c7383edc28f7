//! Private buses for benchmarks. [`start`] launches a bus daemon listening on a
//! Unix socket in a fresh 0700 directory, waits until it answers Hello, and
//! returns a [`RunningBus`] whose `Drop` kills the daemon's whole process group
//! and removes the directory ([`PrivateDir`]: locked while we live, so a run
//! after a SIGKILLed one can remove it). Every process of the bus dies with
//! ours even without `Drop` ([`die_with_parent`]). Never TCP, never the host's /run.
//!
//! | kind | how it is started |
//! |---|---|
//! | dbus-daemon | `dbus-daemon --config-file=GENERATED --nofork` |
//! | dbus-broker | `unshare --mount` (plus `--user --map-root-user` when not root) running `dbus-broker-launch --scope user --config-file GENERATED` (under `setpriv --pdeathsig KILL`, which `unshare --user` makes necessary; under the wrapper and `wrapper_children` when given, so that the broker the launcher starts is wrapped too), with the listening socket as fd 3 (`LISTEN_FDS=1`, `LISTEN_PID`) and a journald socket bind-mounted at /run/systemd/journal/socket inside the private mount namespace |
//! | busd | `busd --config GENERATED --address unix:path=SOCKET` (the path unescaped: busd 0.6.1 reads it literally) |
//!
//! The generated config (see [`config::render`]) is system-bus-like: EXTERNAL
//! auth only, a policy that lets the invoking user connect and own only names
//! under `io.killing.spark`, and fixed limits.

pub mod config;
mod launch;
pub mod monitor;
pub mod private_dir;
pub mod raw_client;
pub mod routed;
mod tied;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

pub use launch::RunningBus;
pub use private_dir::PrivateDir;
pub use tied::die_with_parent;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusKind {
    DbusDaemon,
    DbusBroker,
    Busd,
}

impl BusKind {
    pub const ALL: [BusKind; 3] = [BusKind::DbusDaemon, BusKind::DbusBroker, BusKind::Busd];

    pub fn id(self) -> &'static str {
        match self {
            BusKind::DbusDaemon => "dbus-daemon",
            BusKind::DbusBroker => "dbus-broker",
            BusKind::Busd => "busd",
        }
    }

    /// The executable we run, and the environment variable that overrides it.
    pub fn program(self) -> (&'static str, &'static str) {
        match self {
            BusKind::DbusDaemon => ("dbus-daemon", "DBUS_MATRIX_DBUS_DAEMON"),
            BusKind::DbusBroker => ("dbus-broker-launch", "DBUS_MATRIX_DBUS_BROKER_LAUNCH"),
            BusKind::Busd => ("busd", "DBUS_MATRIX_BUSD"),
        }
    }

    /// Why [`BusOptions::wrapper`] cannot run this daemon, or `None` when
    /// its process runs under the wrapper (dbus-daemon, busd). [`start`]
    /// refuses a wrapper for a daemon it cannot wrap, and `run
    /// --instructions` asks here which daemons it can count.
    pub fn wrapper_unsupported(self) -> Option<&'static str> {
        match self {
            // dbus-broker-launch runs under the wrapper, and the broker it
            // starts too (`BusOptions::wrapper_children`).
            BusKind::DbusDaemon | BusKind::Busd | BusKind::DbusBroker => None,
        }
    }

    /// How to get the daemon, for error messages.
    pub fn install_hint(self) -> &'static str {
        match self {
            BusKind::DbusDaemon => "Debian package dbus-daemon (apt-get install dbus-daemon), Nix attribute pkgs.dbus",
            BusKind::DbusBroker => {
                "Debian package dbus-broker (apt-get install dbus-broker), Nix attribute pkgs.dbus-broker"
            }
            BusKind::Busd => {
                "cargo install --locked busd@VERSION (the `cargo` of bus busd in matrix.toml), \
                 or the flake's build of it (nix/crate-bus.nix)"
            }
        }
    }
}

impl fmt::Display for BusKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for BusKind {
    type Err = BusError;
    fn from_str(s: &str) -> Result<Self, BusError> {
        BusKind::ALL
            .into_iter()
            .find(|k| k.id() == s)
            .ok_or_else(|| BusError::UnknownKind(s.to_string()))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BusError {
    #[error("unknown bus {0:?}: use dbus-daemon, dbus-broker or busd")]
    UnknownKind(String),
    #[error("{program} not found ({why}); install it: {hint}")]
    Missing {
        program: String,
        why: String,
        hint: &'static str,
    },
    #[error("{kind} did not become ready: {why}{}", log_tail(.log))]
    NotReady { kind: BusKind, why: String, log: String },
    /// A socket we bind for the daemon (dbus-broker's listening socket, its
    /// journal): typically a path over the 108 bytes of `sun_path` (a deep $TMPDIR).
    #[error("{kind}: cannot bind {path}: {source}")]
    Bind {
        kind: BusKind,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Io(String),
}

fn log_tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("; its log ends: {}", lines[lines.len().saturating_sub(4)..].join(" | "))
    }
}

impl From<std::io::Error> for BusError {
    fn from(e: std::io::Error) -> Self {
        BusError::Io(e.to_string())
    }
}

#[derive(Clone, Debug)]
pub struct BusOptions {
    /// Well-known names under this prefix may be owned; no others.
    pub name_prefix: String,
    /// Well-known names (under `name_prefix`) that clients may send method
    /// calls to. Listed one by one because dbus-broker has no
    /// `send_destination_prefix` (dbus-broker issue 253).
    pub services: Vec<String>,
    /// How long to wait for the daemon to answer Hello.
    pub ready_timeout: Duration,
    /// A program (and its arguments) the daemon runs under, e.g. valgrind's
    /// callgrind; empty: none. Only where [`BusKind::wrapper_unsupported`]
    /// is `None` ([`start`] refuses it for the others).
    pub wrapper: Vec<std::ffi::OsString>,
    /// What the wrapper needs to follow the processes its program starts
    /// (valgrind: `--trace-children=yes`), after `wrapper` where the program
    /// is a launcher: dbus-broker-launch starts dbus-broker.
    pub wrapper_children: Vec<std::ffi::OsString>,
}

impl Default for BusOptions {
    fn default() -> Self {
        BusOptions {
            name_prefix: "io.killing.spark".into(),
            services: Vec::new(),
            ready_timeout: Duration::from_secs(20),
            wrapper: Vec::new(),
            wrapper_children: Vec::new(),
        }
    }
}

/// Finds the daemon: `$DBUS_MATRIX_…` override, else `PATH`, else
/// `~/.cargo/bin` (where `cargo install` puts busd).
pub fn find_program(kind: BusKind) -> Result<PathBuf, BusError> {
    let (name, var) = kind.program();
    let missing = |why: String| BusError::Missing {
        program: name.to_string(),
        why,
        hint: kind.install_hint(),
    };
    if let Some(p) = std::env::var_os(var) {
        let p = PathBuf::from(p);
        return if is_executable(&p) {
            Ok(p)
        } else {
            Err(missing(format!("{var}={} is not an executable file", p.display())))
        };
    }
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(Path::new(&home).join(".cargo/bin"));
    }
    dirs.iter()
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
        .ok_or_else(|| missing(format!("not on PATH and {var} is not set")))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The bytes a Unix socket's path may have: `sun_path` holds 108, its NUL
/// included, and libdbus (dbus-daemon, every libdbus-based adapter) allows
/// 99 (`_DBUS_MAX_SUN_PATH_LENGTH`, "Socket name too long").
pub const SOCKET_PATH_MAX: usize = 99;

/// The longest socket path a bus of `kind` started by this process can have
/// (its directory's counter given 6 digits): the listening socket, which
/// clients (libdbus among them) connect to. dbus-broker's journal socket,
/// `j/socket` beside it, is bound by us alone: its 107 bytes allow more.
pub fn longest_socket_path(kind: BusKind) -> PathBuf {
    private_dir::base()
        .join(format!(
            "{}{}-{}-999999",
            private_dir::PREFIX,
            kind.id(),
            std::process::id()
        ))
        .join("bus")
}

/// Starts a private bus of `kind` and waits until it answers Hello.
pub fn start(kind: BusKind, opts: &BusOptions) -> Result<RunningBus, BusError> {
    launch::start(kind, opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_daemon_runs_under_a_wrapper() {
        for kind in BusKind::ALL {
            assert_eq!(kind.wrapper_unsupported(), None, "{kind}");
        }
    }
}
