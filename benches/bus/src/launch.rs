//! Starting, checking and stopping the daemons.

use std::io::Read;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::{UnixDatagram, UnixListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::private_dir::PrivateDir;
use crate::raw_client::RawConnection;
use crate::tied::die_with_parent;
use crate::{config, find_program, BusError, BusKind, BusOptions};

/// A running private bus. Dropping it stops the daemon (its whole process
/// group) and removes its directory. Its processes also die with ours
/// ([`die_with_parent`] on every layer).
pub struct RunningBus {
    kind: BusKind,
    dir: PrivateDir,
    socket: PathBuf,
    address: String,
    version: String,
    config: String,
    child: Child,
    log: Arc<Mutex<String>>,
}

impl RunningBus {
    pub fn kind(&self) -> BusKind {
        self.kind
    }

    /// `unix:path=…`.
    pub fn address(&self) -> &str {
        &self.address
    }

    pub fn socket_path(&self) -> &Path {
        &self.socket
    }

    /// The daemon's own version line, e.g. `dbus-broker 33`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The generated configuration the daemon runs with.
    pub fn config(&self) -> &str {
        &self.config
    }

    /// What the daemon printed (and, for dbus-broker, sent to its journal socket).
    pub fn log(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Environment for clients: both well-known bus address variables.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("DBUS_SYSTEM_BUS_ADDRESS", self.address.clone()),
            ("DBUS_SESSION_BUS_ADDRESS", self.address.clone()),
        ]
    }

    /// Every live process of the bus (the launcher and what it started).
    pub fn pids(&self) -> Vec<u32> {
        processes_in_group(self.child.id())
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Stops the bus now (as `Drop` does), reporting a failure to clean up.
    pub fn stop(mut self) -> Result<(), BusError> {
        self.teardown();
        if self.dir.path().exists() {
            return Err(BusError::Io(format!(
                "{} could not be removed",
                self.dir.path().display()
            )));
        }
        Ok(())
    }

    fn teardown(&mut self) {
        let pgid = self.child.id() as i32;
        // SAFETY: signalling the process group we created.
        unsafe {
            libc::kill(-pgid, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline && !processes_in_group(pgid as u32).is_empty() {
            let _ = self.child.try_wait();
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: as above; whatever ignored SIGTERM goes now.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
        let _ = self.child.wait();
        self.dir.remove();
    }
}

impl Drop for RunningBus {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// Live (non-zombie) processes whose process group is `pgid`.
fn processes_in_group(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state ppid pgrp ...
        let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 2 && f[0] != "Z" && f[2] == pgid.to_string() {
            out.push(pid);
        }
    }
    out
}

fn version_of(program: &Path, kind: BusKind) -> String {
    // dbus-broker-launch has no useful --version; ask the broker next to it.
    let program = match kind {
        BusKind::DbusBroker => program.with_file_name("dbus-broker"),
        _ => program.to_path_buf(),
    };
    Command::new(&program)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_string))
        .unwrap_or_else(|| format!("{} (version unknown)", program.display()))
}

/// Collects a child's output into the shared log.
fn collect(mut r: impl Read + Send + 'static, log: Arc<Mutex<String>>) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            if let Ok(mut l) = log.lock() {
                l.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        }
    });
}

pub(crate) fn start(kind: BusKind, opts: &BusOptions) -> Result<RunningBus, BusError> {
    if let Some(why) = kind.wrapper_unsupported().filter(|_| !opts.wrapper.is_empty()) {
        return Err(BusError::Io(format!("{kind} cannot run under a wrapper: {why}")));
    }
    let program = find_program(kind)?;
    // Removed on drop: by any early return below, as by the bus's teardown.
    let dir = PrivateDir::create(kind.id())?;
    let socket = dir.path().join("bus");
    let address = harness::address::unix_path(&socket);
    // SAFETY: getuid/geteuid cannot fail.
    let (uid, euid) = unsafe { (libc::getuid(), libc::geteuid()) };
    let log = Arc::new(Mutex::new(String::new()));
    let config_path = dir.path().join("bus.conf");

    let mut cmd;
    let text;
    // Kept open until the daemon has it (dbus-broker's fd 3).
    let mut _listener = None;
    match kind {
        BusKind::DbusDaemon | BusKind::Busd => {
            // busd gets its address on the command line (see busd_listen_address).
            let listen = (kind == BusKind::DbusDaemon).then_some(address.as_str());
            text = config::render("system", listen, uid, opts);
            config::write(&config_path, &text)?;
            cmd = match opts.wrapper.split_first() {
                Some((wrapper, args)) => {
                    let mut c = Command::new(wrapper);
                    c.args(args).arg(&program);
                    c
                }
                None => Command::new(&program),
            };
            if kind == BusKind::DbusDaemon {
                cmd.arg(format!("--config-file={}", config_path.display()))
                    .arg("--nofork");
            } else {
                cmd.arg("--config")
                    .arg(&config_path)
                    .arg("--address")
                    .arg(busd_listen_address(&socket)?);
            }
        }
        BusKind::DbusBroker => {
            text = config::render("session", None, uid, opts);
            config::write(&config_path, &text)?;
            let bind_error = |path: &Path, source| BusError::Bind {
                kind,
                path: path.to_path_buf(),
                source,
            };
            let listener = UnixListener::bind(&socket).map_err(|e| bind_error(&socket, e))?;
            // The journal socket dbus-broker insists on, readable by us. A short
            // directory name: this socket (107 bytes of path allowed) then never
            // limits $TMPDIR more than the bus socket (99, libdbus) does.
            let journal_dir = dir.path().join("j");
            std::fs::create_dir(&journal_dir)?;
            let journal_socket = journal_dir.join("socket");
            let journal = UnixDatagram::bind(&journal_socket).map_err(|e| bind_error(&journal_socket, e))?;
            let jlog = log.clone();
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                while let Ok(n) = journal.recv(&mut buf) {
                    if let Ok(mut l) = jlog.lock() {
                        l.push_str(&String::from_utf8_lossy(&buf[..n]));
                        l.push('\n');
                    }
                }
            });
            cmd = Command::new("unshare");
            if euid != 0 {
                cmd.arg("--user").arg("--map-root-user");
            }
            // The script is constant; the paths are its arguments, never its text.
            cmd.args([
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                BROKER_LAUNCHER,
                "dbus-matrix",
            ])
            .arg(&journal_dir)
            .arg(&program)
            .arg(&config_path);
            if !opts.wrapper.is_empty() {
                cmd.args(&opts.wrapper).args(&opts.wrapper_children);
            }
            cmd.env("LISTEN_FDS", "1").env("DBUS_SESSION_BUS_ADDRESS", &address);
            let fd = listener.as_raw_fd();
            // SAFETY: dup2 and fcntl are async-signal-safe; they leave the socket at fd 3
            // without close-on-exec. dup2(3, 3) would keep the flag, hence the fcntl.
            unsafe {
                cmd.pre_exec(move || {
                    let ok = if fd == 3 {
                        libc::fcntl(3, libc::F_SETFD, 0)
                    } else {
                        libc::dup2(fd, 3)
                    };
                    if ok < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            _listener = Some(listener);
        }
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its log becomes failure reasons: error messages, not backtraces (busd is Rust).
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .process_group(0);
    die_with_parent(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| BusError::Missing {
        program: program.display().to_string(),
        why: e.to_string(),
        hint: kind.install_hint(),
    })?;
    collect(child.stdout.take().expect("piped"), log.clone());
    collect(child.stderr.take().expect("piped"), log.clone());
    let mut bus = RunningBus {
        kind,
        dir,
        socket,
        address,
        version: version_of(&program, kind),
        config: text,
        child,
        log,
    };
    wait_ready(&mut bus, opts.ready_timeout)?;
    drop(_listener); // the daemon holds its own copy now
    Ok(bus)
}

/// busd's `--address`: busd 0.6.1 takes the path of an address literally
/// (`%20` stays `%20`, where dbus-daemon reads a space), so it gets the path
/// unescaped, and on its command line: a config's `<listen>` it escapes
/// once more before using it, so no escaped byte survives there. Only `,`
/// and `;`, which end an address's value, cannot be said to it at all.
fn busd_listen_address(socket: &Path) -> Result<String, BusError> {
    match socket.to_str() {
        Some(path) if !path.contains([',', ';']) => Ok(format!("unix:path={path}")),
        _ => Err(BusError::Io(format!(
            "busd cannot listen on {}: it reads a listen address's path unescaped, so the path must be \
             UTF-8 without `,` or `;` (set TMPDIR to another directory)",
            socket.display()
        ))),
    }
}

/// What runs dbus-broker-launch inside its private mount namespace, as
/// `sh -c BROKER_LAUNCHER dbus-matrix JOURNAL_DIR PROGRAM CONFIG [WRAPPER…]`
/// (the wrapper and its options run the launcher, under setpriv): a tmpfs
/// over /run hides the host's /run from the broker and gives it
/// /run/systemd/journal. unshare --user clears the parent-death signal the
/// runner set, so the launcher sets it again (setpriv execs: same process,
/// our child); the launcher gives the broker its own. `LISTEN_PID` is the
/// shell's pid, which exec keeps. The paths reach the shell only as
/// arguments ("$1"...): whatever bytes $TMPDIR holds, the shell never
/// parses them.
const BROKER_LAUNCHER: &str = r#"set -e
mount -t tmpfs -o mode=0755 dbus-matrix /run
mkdir -p /run/systemd/journal
mount --bind "$1" /run/systemd/journal
program=$2 config=$3
shift 3
if command -v setpriv >/dev/null; then set -- setpriv --pdeathsig KILL -- "$@"; fi
LISTEN_PID=$$ exec "$@" "$program" --scope user --config-file "$config""#;

/// Waits until Hello is answered, the daemon exits, or the timeout passes.
fn wait_ready(bus: &mut RunningBus, timeout: Duration) -> Result<(), BusError> {
    let deadline = Instant::now() + timeout;
    let mut last_error = String::from("no connection attempt yet");
    while Instant::now() < deadline {
        if let Ok(Some(status)) = bus.child.try_wait() {
            return Err(BusError::NotReady {
                kind: bus.kind,
                why: format!("it exited ({status})"),
                log: bus.log(),
            });
        }
        if bus.socket.exists() {
            match RawConnection::connect(&bus.socket, Duration::from_secs(2)).and_then(|mut c| c.hello()) {
                Ok(_) => return Ok(()),
                Err(e) => last_error = format!("{e:#}"),
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(BusError::NotReady {
        kind: bus.kind,
        why: format!("no Hello reply within {:.0} s ({last_error})", timeout.as_secs_f64()),
        log: bus.log(),
    })
}
