//! The adapter server process the real-client tests drive, and the standard
//! tools they run against it (also used by `sdbus_row` and `fd_passing`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use harness::contract::{self, READY};
use harness::ipc::Transport;

const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// A server process, killed when dropped (also used by `sdbus_row`).
pub(crate) struct Server {
    child: Child,
    stderr: PathBuf,
}

impl Server {
    pub(crate) fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `bin serve` and waits for READY; `Err` says how it ended instead.
pub(crate) fn serve(bin: &Path, t: &Transport, stderr: PathBuf) -> Result<Server, String> {
    let args = contract::Command::Serve { transport: t.clone() }.to_args();
    let mut child = crate::common::adapter_command(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut server = Server { child, stderr };
    let deadline = Instant::now() + READY_TIMEOUT;
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(50)) {
            if line == READY {
                return Ok(server);
            }
        }
        if let Ok(Some(status)) = server.child.try_wait() {
            return Err(format!("exited ({status}) before READY: {}", server.stderr().trim()));
        }
    }
    Err(format!(
        "not READY within {READY_TIMEOUT:?}: {}",
        server.stderr().trim()
    ))
}

/// Runs a tool; its own timeout options keep it from hanging on a silent server.
pub(crate) fn tool(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{program}: {e}; install it (Debian packages libglib2.0-bin for gdbus, systemd for busctl, \
                 dbus-bin for dbus-send: scripts/install-deps-debian.sh)"
            )
        })
}
