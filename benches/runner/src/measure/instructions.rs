//! Instructions per operation, the machine-independent cost: the adapter's
//! `repeat` command runs the operation a fixed number of times inside
//! `dbus_matrix_measured_region` under callgrind, which counts only that
//! region (`--collect-atstart=no --toggle-collect=…`). Verification before the
//! region runs the operation once, so one-time initialisation is not counted.
//! A fixed count keeps the result identical from run to run of one binary.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use harness::contract::{Command as AdapterCommand, Repeat};

use crate::process::adapter;

/// Operations per callgrind run: enough to make the per-run constant (the
/// dynamic call into the region) negligible, few enough for slow libraries.
pub const ITERATIONS: u64 = 10;
/// Operations slower than this natively (about 50x under callgrind) are not
/// counted: ten of them would take minutes.
pub const MAX_NATIVE_NS: f64 = 20e6;
const REGION: &str = "dbus_matrix_measured_region";
/// Removed from the environment of every process under callgrind: glibc's
/// CPU-dispatch tunables are a setting of the machine (like its CPU, which
/// valgrind replaces with its own), and would change which memcpy or strlen
/// glibc picks and so the count (0.3% to 1.6% on marshal/mixed with
/// `glibc.cpu.hwcaps=-AVX2,-AVX512F,-ERMS,-AVX_Fast_Unaligned_Load`).
pub const UNSET: &str = "GLIBC_TUNABLES";

/// The valgrind version, or an error saying how to get valgrind.
pub fn check_valgrind() -> Result<String> {
    let out = Command::new("valgrind").arg("--version").output();
    match out {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        _ => bail!(
            "--instructions needs valgrind on PATH (Debian: apt-get install valgrind; Nix: pkgs.valgrind), \
             or run without --instructions"
        ),
    }
}

/// Instructions per operation of `scenario` in the adapter `bin`.
pub fn count(bin: &Path, scenario: &str, scratch: &Path, timeout: Duration, interrupted: &AtomicBool) -> Result<f64> {
    let out_file = scratch.join("callgrind.out");
    let _ = std::fs::remove_file(&out_file);
    let mut cmd = Command::new("valgrind");
    cmd.env_remove(UNSET)
        .arg("--tool=callgrind")
        .arg("--collect-atstart=no")
        .arg(format!("--toggle-collect={REGION}"))
        .arg(format!("--callgrind-out-file={}", out_file.display()));
    let repeat = AdapterCommand::Repeat(Repeat {
        scenario: scenario.to_string(),
        iterations: ITERATIONS,
        windows: 0,
        transport: None,
        ack_fifo: None,
    });
    let out = adapter::run_under(cmd, bin, &repeat, scratch, timeout, interrupted)?;
    if !out.success() {
        bail!("callgrind: {}", out.describe());
    }
    let text = std::fs::read_to_string(&out_file).with_context(|| format!("reading {}", out_file.display()))?;
    let total = totals(&text).with_context(|| format!("no instruction total in {}", out_file.display()))?;
    if total == 0 {
        bail!("callgrind counted no instructions in {REGION}: was the region inlined or renamed?");
    }
    Ok(total as f64 / ITERATIONS as f64)
}

/// The instruction total of a callgrind output file: its `summary:` line
/// (the first event is Ir), else `totals:`. They agree for a whole run or a
/// toggled region, but not after a zero: in a window zeroed and dumped by
/// vgdb ([`super::ipc_instructions`]) `totals:` (the sum of the file's cost
/// lines) kept costs the zero did not reset: dbus-daemon's count of 20
/// `call/void` served by zbus-6 read 4,389,954 there against a summary of
/// 2,090,271, while the summary of a window of GetId calls matches the
/// difference of two whole runs (docs/results/2026-12-08-counts-after-a-zero.md).
pub(crate) fn totals(text: &str) -> Option<u64> {
    let line = text
        .lines()
        .find(|l| l.starts_with("summary:"))
        .or_else(|| text.lines().find(|l| l.starts_with("totals:")))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn totals_line_is_read() {
        // The summary, where a zero leaves the totals line higher.
        let text = "events: Ir\nsummary: 1234\nfn=(1) main\n5 5678\ntotals: 5678\n";
        assert_eq!(super::totals(text), Some(1234));
        assert_eq!(super::totals("events: Ir\ntotals: 42\n"), Some(42));
        assert_eq!(super::totals("events: Ir\n"), None);
    }
}
