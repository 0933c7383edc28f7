//! What the results file records about the machine and the checkout.

use std::process::Command;

use harness::results::Environment;
use sha2::{Digest, Sha256};

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn cpu_model() -> String {
    read("/proc/cpuinfo")
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn memory_bytes() -> u64 {
    read("/proc/meminfo")
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(0)
}

fn os_name() -> String {
    read("/etc/os-release")
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_else(|| std::env::consts::OS.into())
}

/// First 16 hex digits of SHA-256 of the hostname.
pub fn hostname_hash() -> String {
    let host = read("/proc/sys/kernel/hostname").unwrap_or_default();
    let digest = Sha256::digest(host.trim().as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

pub fn detect() -> Environment {
    Environment {
        rustc: env!("DBUS_MATRIX_RUSTC").to_string(),
        cpu_model: cpu_model(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes: memory_bytes(),
        kernel: read("/proc/sys/kernel/osrelease").map_or_else(|| "unknown".into(), |s| s.trim().to_string()),
        os: os_name(),
        hostname_hash: hostname_hash(),
        mode: std::env::var("DBUS_MATRIX_MODE").unwrap_or_else(|_| "host".into()),
        valgrind: None,
    }
}

/// The git revision the runner was built from (build.rs: the checkout's
/// HEAD, else `$DBUS_MATRIX_REVISION` at build time, else `unknown`).
pub const BUILT_FROM: &str = env!("DBUS_MATRIX_BUILT_FROM");

/// `$DBUS_MATRIX_REVISION` (set by the flake), else the git revision of the
/// checkout holding matrix.toml, with `-dirty` when it has local changes;
/// a matrix outside any checkout gets the revision the runner was built from.
pub fn revision(repo_dir: &std::path::Path) -> String {
    if let Ok(r) = std::env::var("DBUS_MATRIX_REVISION") {
        return r;
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(repo_dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "HEAD"]) {
        Some(rev) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{rev}-dirty")
            } else {
                rev
            }
        }
        None => BUILT_FROM.into(),
    }
}

/// Now as RFC 3339 UTC (seconds), without a date-time dependency.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamp_shape() {
        let t = super::now_rfc3339();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.starts_with("20") && t.ends_with('Z'), "{t}");
    }

    #[test]
    fn environment_is_filled() {
        let e = super::detect();
        assert!(e.cpus >= 1);
        assert_eq!(e.hostname_hash.len(), 16);
        assert!(e.rustc.starts_with("rustc"), "{}", e.rustc);
    }
}
