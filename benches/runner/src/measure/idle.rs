//! What processes cost while nothing is asked of them (issue 31, "threads
//! and idle cost"): their threads, and the CPU time and wake-ups of all their
//! threads over a quiet window. A library that polls, or runs an executor
//! thread per connection, shows here; one that sleeps in the kernel until a
//! message comes shows zero.
//!
//! Sources, per thread: `/proc/PID/task/TID/schedstat` (CPU ns) and
//! `/proc/PID/task/TID/status` (voluntary switches: the thread slept and was
//! woken; involuntary: preempted), as for [`super::costs`]; threads from the
//! `Threads` line of `/proc/PID/status`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use harness::results::{IdleCost, IdleProcess};

use super::costs::{read_threads, ThreadCounts};

/// The quiet window of a profile whose rounds measure for `measurement`
/// seconds: ten rounds' worth, at least 0.2 s (a poll every 100 ms still
/// shows twice), at most 5 s.
pub fn window_of(measurement: f64) -> Duration {
    Duration::from_secs_f64((measurement * 10.0).clamp(0.2, 5.0))
}

/// `Threads` of `/proc/PID/status`.
pub fn threads(pid: u32) -> Result<u64, String> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
    parse_threads(&status).ok_or_else(|| format!("{path} has no Threads line"))
}

fn parse_threads(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))?
        .trim()
        .parse()
        .ok()
}

type Threads = BTreeMap<String, ThreadCounts>;

fn read_all(pids: &[u32]) -> Result<Vec<Threads>, String> {
    pids.iter()
        .map(|&pid| read_threads(pid).map_err(|e| format!("{e:#}")))
        .collect()
}

/// How long the processes settle before the window: what was in flight when
/// the client said its connections were open (NameAcquired signals, replies
/// the bus still owes) is delivered and read first.
pub const SETTLE: Duration = Duration::from_millis(100);

fn sleep(d: Duration, interrupted: &AtomicBool) -> Result<(), String> {
    let start = Instant::now();
    while start.elapsed() < d {
        if interrupted.load(Ordering::SeqCst) {
            return Err("interrupted".into());
        }
        std::thread::sleep((d - start.elapsed().min(d)).min(Duration::from_millis(50)));
    }
    Ok(())
}

/// Counts every role's processes over `window` (after [`SETTLE`]), during
/// which the caller asks nothing of them. `Err`: why the window could not be
/// counted (a process went away, or the run was interrupted).
pub fn count(roles: &[(&str, Vec<u32>)], window: Duration, interrupted: &AtomicBool) -> Result<IdleCost, String> {
    sleep(SETTLE, interrupted)?;
    let before: Vec<Vec<Threads>> = roles.iter().map(|(_, pids)| read_all(pids)).collect::<Result<_, _>>()?;
    let start = Instant::now();
    sleep(window, interrupted)?;
    let after: Vec<Vec<Threads>> = roles.iter().map(|(_, pids)| read_all(pids)).collect::<Result<_, _>>()?;
    let secs = start.elapsed().as_secs_f64();
    let mut notes = Vec::new();
    let mut processes = Vec::new();
    for (((role, pids), then), now) in roles.iter().zip(&before).zip(&after) {
        let mut sum = ThreadCounts::default();
        for (then, now) in then.iter().zip(now) {
            let d = delta(then, now);
            sum.cpu_ns += d.cpu_ns;
            sum.voluntary += d.voluntary;
            sum.involuntary += d.involuntary;
            let ended = then.keys().filter(|t| !now.contains_key(*t)).count();
            if ended > 0 {
                notes.push(format!(
                    "{ended} thread(s) of the {role} ended inside the idle window: their CPU time and switches are missing"
                ));
            }
        }
        let threads = pids.iter().map(|&pid| threads(pid)).sum::<Result<u64, String>>()?;
        processes.push(IdleProcess {
            role: role.to_string(),
            threads,
            cpu_ns_per_s: sum.cpu_ns as f64 / secs,
            wakeups_per_s: sum.voluntary as f64 / secs,
            preemptions_per_s: sum.involuntary as f64 / secs,
        });
    }
    Ok(IdleCost {
        window_s: secs,
        processes,
        notes,
    })
}

/// What the threads of one process did between two readings (a thread
/// started in between counts from zero).
fn delta(then: &Threads, now: &Threads) -> ThreadCounts {
    let mut d = ThreadCounts::default();
    for (tid, n) in now {
        let t = then.get(tid).copied().unwrap_or_default();
        d.cpu_ns += n.cpu_ns.saturating_sub(t.cpu_ns);
        d.voluntary += n.voluntary.saturating_sub(t.voluntary);
        d.involuntary += n.involuntary.saturating_sub(t.involuntary);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_threads_line() {
        assert_eq!(parse_threads("Name:\tx\nThreads:\t7\nVmRSS:\t1 kB\n"), Some(7));
        assert_eq!(parse_threads("Name:\tx\n"), None);
        assert_eq!(parse_threads("Threads:\tmany\n"), None);
    }

    #[test]
    fn window_follows_the_profile_within_bounds() {
        assert_eq!(window_of(0.02), Duration::from_millis(200));
        assert_eq!(window_of(0.05), Duration::from_millis(500));
        assert_eq!(window_of(2.0), Duration::from_secs(5));
    }

    #[test]
    fn a_sleeping_child_costs_nothing_and_a_spinning_one_a_whole_cpu() {
        let spawn = |script: &str| {
            std::process::Command::new("sh")
                .args(["-c", script])
                .spawn()
                .expect("sh")
        };
        let mut sleeper = spawn("exec sleep 30");
        let mut spinner = spawn("while :; do :; done");
        std::thread::sleep(Duration::from_millis(50));
        let roles = [("sleeper", vec![sleeper.id()]), ("spinner", vec![spinner.id()])];
        let counted = count(&roles, Duration::from_millis(300), &AtomicBool::new(false));
        for c in [&mut sleeper, &mut spinner] {
            let _ = c.kill();
            let _ = c.wait();
        }
        let c = counted.unwrap();
        assert!(c.window_s >= 0.3, "{c:?}");
        let sleeper = c.process("sleeper").unwrap();
        assert_eq!(sleeper.threads, 1);
        assert_eq!(sleeper.cpu_ns_per_s, 0.0, "{c:?}");
        assert_eq!(sleeper.wakeups_per_s, 0.0, "{c:?}");
        // Shared with other work on a loaded machine: a tenth of a CPU at least.
        assert!(c.process("spinner").unwrap().cpu_ns_per_s > 1e8, "{c:?}");
    }

    #[test]
    fn a_gone_process_is_a_reason() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        let roles = [("client", vec![child.id()])];
        assert!(count(&roles, Duration::from_millis(10), &AtomicBool::new(false)).is_err());
    }
}
