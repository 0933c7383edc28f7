//! Signals to a process a test started (kill(2), for `resume`, `faults`,
//! `cleanup`, `hostile_input`, `bus_faults`), and the wait for the moment to
//! send them: the interrupt tests start a run, wait until one of its
//! adapters is at a given step, then SIGINT or SIGTERM it.

use std::time::{Duration, Instant};

use super::processes_mentioning;

/// kill(2): sends `sig` to `pid`, a process of this test's own; returns
/// kill's result (0, or -1 where the process is already gone).
pub fn send_signal(pid: u32, sig: i32) -> i32 {
    // SAFETY: kill(2) takes no pointer; the pid is a child of this test.
    unsafe { libc::kill(pid as i32, sig) }
}

/// Waits until a process whose command line mentions `needle` runs; fails
/// the test with `never` after `limit`.
pub fn wait_for_process(needle: &str, limit: Duration, never: &str) {
    let start = Instant::now();
    while processes_mentioning(needle).is_empty() {
        assert!(start.elapsed() < limit, "{never}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
