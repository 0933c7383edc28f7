//! How the runner answers SIGINT, SIGTERM and SIGHUP (all three alike).
//!
//! `run` and `build-times` stop cleanly on the first signal: the flag is set,
//! the command drops the cell or build under way, stops its children, keeps
//! its results and exits with 130. A second signal ends the runner at once,
//! still removing its temporary directories; its children die with it (they
//! are tied to it by `PR_SET_PDEATHSIG`, see `bus::die_with_parent`).
//!
//! The others (`report`, `compare`, `history`, `spread`, `list`, `verify`) have nothing
//! to keep: the first signal ends them with 130 the same way, even while
//! blocked (e.g. reading a FIFO).
//!
//! Signals are counted by a thread reading a self-pipe, not in the handler,
//! so the exit can do work a handler may not (remove directories).

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::cmd::EXIT_INTERRUPTED;

/// Installs the handlers; the returned flag is set by the first signal when
/// the command `stops_cleanly`.
pub fn install(stops_cleanly: bool) -> Arc<AtomicBool> {
    let interrupted = Arc::new(AtomicBool::new(false));
    let Ok((mut reader, writer)) = UnixStream::pair() else {
        // No self-pipe: the default actions end the runner (the children still die with it).
        return interrupted;
    };
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        if stops_cleanly {
            // The flag first, so the command sees it before the thread counts the signal.
            let _ = signal_hook::flag::register(sig, interrupted.clone());
        }
        if let Ok(w) = writer.try_clone() {
            let _ = signal_hook::low_level::pipe::register(sig, w);
        }
    }
    std::thread::spawn(move || {
        let mut seen = 0;
        let mut byte = [0u8; 1];
        while reader.read(&mut byte).is_ok_and(|n| n == 1) {
            seen += 1;
            if !stops_cleanly || seen >= 2 {
                exit_now(stops_cleanly);
            }
        }
    });
    interrupted
}

/// Ends the process with 130 without waiting for the main thread.
fn exit_now(was_stopping: bool) -> ! {
    if was_stopping {
        // Not eprintln!: with stderr full it panics, and this thread would die
        // without ending the process.
        crate::output::errln!("interrupted again: stopping now");
    }
    bus::private_dir::remove_live();
    // SAFETY: _exit ends the process at once; no destructor of another thread
    // runs (they could block on what the main thread holds).
    unsafe { libc::_exit(EXIT_INTERRUPTED as i32) }
}
