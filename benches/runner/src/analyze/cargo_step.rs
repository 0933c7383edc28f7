//! The steps every timed build of `build-times` shares, released or patched
//! ([`super::build_times`], [`super::build_patched`]): one `cargo build` read
//! line by line, a prepared target directory copied in, and what a build of
//! one adapter records.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use harness::results::BuildRecord;
use indicatif::ProgressBar;
use serde::Serialize;

use crate::process::exec;
use crate::unhacked::{cargo_program, copy_tree};

#[derive(Debug, Serialize)]
pub struct AdapterBuild {
    pub id: String,
    pub package: String,
    pub library: String,
    /// Exact library version, as the freshly built binary reports it.
    pub version: String,
    pub baseline: bool,
    /// Wall time of the timed `cargo build`.
    pub seconds: f64,
    /// Cargo's `Compiling` lines in the timed build (the adapter included).
    pub crates_compiled: u32,
    /// Code and data of the built binary (ELF PT_LOAD segments).
    pub loaded_bytes: u64,
}

impl AdapterBuild {
    pub fn record(&self, jobs: u32) -> BuildRecord {
        BuildRecord {
            seconds: self.seconds,
            crates_compiled: self.crates_compiled,
            jobs,
        }
    }
}

/// A `cargo build` in `workspace` into `target`, with cargo's stderr read
/// line by line (progress and `Compiling` count). Returns the wall time and
/// the number of crates compiled.
#[allow(clippy::too_many_arguments)]
pub(super) fn cargo_build(
    workspace: &Path,
    target: &Path,
    args: &[&str],
    locked: bool,
    jobs: u32,
    bar: &ProgressBar,
    label: &str,
    interrupted: &AtomicBool,
) -> Result<(Duration, u32)> {
    let mut cmd = Command::new(cargo_program());
    cmd.args(args)
        .args(["--release", "--color", "never"])
        .args(locked.then_some("--locked"))
        .arg("-j")
        .arg(jobs.to_string())
        .arg("--target-dir")
        .arg(target)
        .current_dir(workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    // What would change where cargo builds, how many jobs it runs, or whether
    // it prints its `Compiling` lines (a surrounding make or cargo's settings).
    for var in [
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
        "CARGO_BUILD_JOBS",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
        "CARGO_TERM_QUIET",
        "CARGO_TERM_VERBOSE",
    ] {
        cmd.env_remove(var);
    }
    bus::die_with_parent(&mut cmd);
    let command_line = format!("cargo {} --release --locked -j {jobs}", args.join(" "));
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow::anyhow!(
                "cargo not found: build-times needs a Rust toolchain on PATH (https://rustup.rs), or set $CARGO"
            )
        } else {
            anyhow::anyhow!("cannot start cargo: {e}")
        }
    })?;
    let pgid = child.id() as i32;
    let stderr = child.stderr.take().expect("piped");
    let tail = Arc::new(Mutex::new(Vec::<String>::new()));
    let reader = {
        let (bar, label, tail) = (bar.clone(), label.to_string(), tail.clone());
        std::thread::spawn(move || {
            let mut compiled = 0u32;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(what) = line.trim_start().strip_prefix("Compiling ") {
                    compiled += 1;
                    bar.set_message(format!("{label}: compiling {what}"));
                }
                let mut t = tail.lock().unwrap();
                t.push(line);
                if t.len() > 20 {
                    t.remove(0);
                }
            }
            compiled
        })
    };
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if interrupted.load(Ordering::SeqCst) {
            exec::kill_group(pgid);
            let _ = child.wait();
            let _ = reader.join();
            bail!("interrupted during `{command_line}`");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    let compiled = reader.join().unwrap_or(0);
    if !status.success() {
        let tail = tail.lock().unwrap();
        let errors: Vec<&String> = tail.iter().filter(|l| !l.trim().is_empty()).collect();
        bail!(
            "`{command_line}` in {} failed ({status}):\n{}",
            workspace.display(),
            errors.iter().map(|l| l.as_str()).collect::<Vec<_>>().join("\n")
        );
    }
    Ok((elapsed, compiled))
}

/// Replaces `to` with a copy of `from`.
pub(super) fn replace_with_copy(from: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to).with_context(|| format!("cannot remove {}", to.display()))?;
    }
    copy_tree(from, to).with_context(|| {
        format!(
            "cannot copy the prepared target directory {} to {}",
            from.display(),
            to.display()
        )
    })
}
