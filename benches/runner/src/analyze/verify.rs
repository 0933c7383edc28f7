//! `dbus-matrix verify`: the same-work check, outside any timing. Every
//! marshal output is decoded by the reference decoder and must be the
//! canonical signal; every demarshal adapter must read back the canonical
//! values, and must follow a perturbed payload (so it cannot ignore its input).

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{bail, Result};
use harness::contract::Command;
use harness::payload;
use harness::scenario::{self, Kind};
use harness::wire;

use crate::{process::adapter, process::exec};

#[derive(Debug)]
pub enum Verdict {
    Passed(Vec<String>),
    Unsupported(String),
    Failed(String),
}

pub struct Checked {
    pub adapter: String,
    pub scenario: String,
    pub verdict: Verdict,
}

fn call(
    bin: &Path,
    command: &Command,
    stdin: Option<&[u8]>,
    scratch: &Path,
    stop: &AtomicBool,
) -> Result<exec::Outcome> {
    adapter::run(bin, command, stdin, scratch, Duration::from_secs(60), stop, None)
}

fn demarshal(id: &str) -> Command {
    Command::Demarshal {
        scenario: id.to_string(),
    }
}

fn digest_of(bin: &Path, id: &str, bytes: &[u8], scratch: &Path, stop: &AtomicBool) -> Result<u64> {
    let out = call(bin, &demarshal(id), Some(bytes), scratch, stop)?;
    if !out.success() {
        bail!("demarshal failed: {}", out.describe());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    u64::from_str_radix(text.trim(), 16)
        .map_err(|_| anyhow::anyhow!("demarshal printed {:?}, not a digest", text.trim()))
}

pub fn check(adapter: &str, bin: &Path, scenario_id: &str, scratch: &Path, stop: &AtomicBool) -> Checked {
    let verdict = (|| -> Result<Verdict> {
        let Some(sc) = scenario::find(scenario_id) else {
            bail!("unknown scenario {scenario_id}")
        };
        let body = sc.body();
        match sc.kind {
            Kind::Marshal => {
                let out = call(
                    bin,
                    &Command::Emit {
                        scenario: scenario_id.to_string(),
                    },
                    None,
                    scratch,
                    stop,
                )?;
                if let Some(reason) = out.unsupported_reason() {
                    return Ok(Verdict::Unsupported(reason));
                }
                if !out.success() {
                    bail!("emit failed: {}", out.describe());
                }
                Ok(Verdict::Passed(
                    harness::verify::verify_signal(&out.stdout, &body)?.notes,
                ))
            }
            Kind::Demarshal => {
                let canonical = wire::canonical_signal(&body);
                let probe = call(bin, &demarshal(scenario_id), Some(&canonical), scratch, stop)?;
                if let Some(reason) = probe.unsupported_reason() {
                    return Ok(Verdict::Unsupported(reason));
                }
                harness::verify::verify_digest(digest_of(bin, scenario_id, &canonical, scratch, stop)?, &body)?;
                let changed = payload::perturbed(&body);
                let got = digest_of(bin, scenario_id, &wire::canonical_signal(&changed), scratch, stop)?;
                if got != changed.digest() {
                    bail!("the digest did not follow a perturbed payload: the adapter does not read every field it is given");
                }
                Ok(Verdict::Passed(Vec::new()))
            }
            Kind::Ipc(_) => bail!("IPC scenarios are verified inside each cell, against a live service"),
        }
    })();
    Checked {
        adapter: adapter.to_string(),
        scenario: scenario_id.to_string(),
        verdict: verdict.unwrap_or_else(|e| Verdict::Failed(format!("{e:#}"))),
    }
}
