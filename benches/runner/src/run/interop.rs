//! The interop check (not timed): every client adapter calls every server
//! adapter's service on one bus, a few scenarios each. A check is the
//! client's `repeat --iterations 1` against the other adapter's server: the
//! client verifies the reply (the same verification as before timing), so a
//! server that answers wrongly, or a client that cannot read a correct
//! answer, fails the pair with the client's message.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Result};
use harness::contract::{self, Command};
use harness::results::{InteropCheck, InteropPair, InteropStatus, InteropTable};

use crate::matrix::{AdapterEntry, Matrix};
use crate::placement::Placement;
use crate::process::adapter::{self, Described};
use crate::process::scratch::Scratch;
use crate::run::BusSession;

/// What every pair is checked with by default: two calls with arguments or
/// replies of different shapes, an empty one, and a property read.
pub const DEFAULT_CHECKS: [&str; 4] = ["call/void", "call/in-out-string", "call/relation-set", "property/get"];

/// A check's process is killed after this long (it connects and calls once).
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a failure's reason may be in the table (the client's last words).
const REASON_CHARS: usize = 240;

/// Which pairs to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Pairs {
    /// Every client against every server.
    All,
    /// Each adapter against itself and against the reference, both ways.
    Reference,
}

pub struct Options<'a> {
    pub matrix: &'a Matrix,
    pub adapters: Vec<String>,
    pub checks: Vec<String>,
    pub bus: String,
    pub pairs: Pairs,
    /// The other side of every pair with `Pairs::Reference`.
    pub reference: Option<String>,
    pub bin_dir: PathBuf,
    /// A line on stderr per client.
    pub progress: bool,
}

/// One adapter taking part: its entry, binary and listing.
struct Party<'a> {
    entry: &'a AdapterEntry,
    bin: PathBuf,
    described: Result<Described, String>,
}

impl Party<'_> {
    /// Why this adapter cannot do `scenario` on this bus, if its listing says so.
    fn unsupported(&self, scenario: &str, p2p: bool) -> Option<String> {
        match &self.described {
            Err(e) => Some(format!("cannot list itself: {e}")),
            Ok(d) if p2p => d.unsupported_p2p.get(scenario).cloned(),
            Ok(d) => d.unsupported.get(scenario).cloned(),
        }
    }
}

/// Runs the checks; `Err` for bad input (unknown ids, a scenario that is
/// not IPC, a bus that cannot start) and interruption.
pub fn check(opts: &Options, interrupted: &AtomicBool) -> Result<InteropTable> {
    for s in &opts.checks {
        let op = harness::scenario::find(s).and_then(|s| s.ipc_op());
        if op.is_none() || s.starts_with("baseline/") || s == "property/cold-start" {
            bail!("--checks: {s:?} is not a client-server IPC scenario");
        }
    }
    if let Some(id) = &opts.reference {
        crate::matrix::roles::check_reference(opts.matrix, "--reference", id)?;
    }
    let selected: Vec<&AdapterEntry> = opts
        .matrix
        .select_adapters(&opts.adapters)?
        .into_iter()
        .filter(|a| !a.baseline)
        .collect();
    if selected.is_empty() {
        bail!("--adapters selects no library (the baseline never takes part): there is no pair to check");
    }
    let mut involved = selected.clone();
    let reference = match opts.pairs {
        Pairs::All => None,
        Pairs::Reference => {
            let Some(id) = opts
                .reference
                .clone()
                .or_else(|| opts.matrix.roles.as_ref().map(|r| r.reference.clone()))
            else {
                bail!("--pairs reference needs a reference adapter: matrix.toml [roles] reference, or --reference")
            };
            if !involved.iter().any(|a| a.id == id) {
                involved.extend(opts.matrix.select_adapters(std::slice::from_ref(&id))?);
            }
            Some(id)
        }
    };
    let bus = opts
        .matrix
        .select_buses(std::slice::from_ref(&opts.bus))?
        .into_iter()
        .next()
        .expect("one bus selected");
    let scratch = Scratch::new("interop")?;
    crate::run::check_socket_room(&[bus], &involved, scratch.path())?;
    let mut parties = Vec::new();
    // Every missing binary named at once, before any adapter is asked.
    let binaries = adapter::binaries(&opts.bin_dir, &involved)?;
    for (a, bin) in involved.iter().zip(binaries) {
        let described = adapter::describe(&bin, scratch.path(), interrupted).map_err(|e| format!("{e:#}"));
        if let Ok(d) = &described {
            adapter::check_identity(a, &bin, d)?;
        }
        parties.push(Party {
            entry: a,
            bin,
            described,
        });
    }
    let mut session = BusSession::start(bus, &involved, scratch.path(), Placement::default())?;
    let p2p = session.is_p2p();
    let wanted = |client: &str, server: &str| match &reference {
        None => true,
        Some(r) => client == server || client == r || server == r,
    };
    // Servers are started once each, on first use, and live until the end.
    let mut servers: HashMap<String, Result<harness::ipc::Transport, String>> = HashMap::new();
    let mut pairs = Vec::new();
    for client in &parties {
        if opts.progress {
            crate::output::errln!("interop: {} as client", client.entry.id);
        }
        for server in &parties {
            if !wanted(&client.entry.id, &server.entry.id) {
                continue;
            }
            let transport = servers
                .entry(server.entry.id.clone())
                .or_insert_with(|| session.server(server.entry, &server.bin))
                .clone();
            let mut checks = Vec::new();
            for scenario in &opts.checks {
                if interrupted.load(Ordering::SeqCst) {
                    bail!("interrupted");
                }
                checks.push(one_check(
                    client,
                    server,
                    scenario,
                    p2p,
                    &transport,
                    scratch.path(),
                    interrupted,
                )?);
            }
            pairs.push(InteropPair {
                client: client.entry.id.clone(),
                server: server.entry.id.clone(),
                checks,
            });
        }
    }
    Ok(InteropTable {
        bus: bus.id.clone(),
        checks: opts.checks.clone(),
        adapters: parties.iter().map(|p| p.entry.id.clone()).collect(),
        pairs,
    })
}

/// One scenario from `client` to `server`: unsupported when either listing
/// says so, else the client's `repeat` once.
fn one_check(
    client: &Party,
    server: &Party,
    scenario: &str,
    p2p: bool,
    transport: &Result<harness::ipc::Transport, String>,
    scratch: &std::path::Path,
    interrupted: &AtomicBool,
) -> Result<InteropCheck> {
    let check = |status, reason: Option<String>| InteropCheck {
        scenario: scenario.to_string(),
        status,
        reason: reason.map(|r| short(&r)),
    };
    for (side, party) in [("client", client), ("server", server)] {
        if let Some(reason) = party.unsupported(scenario, p2p) {
            let reason = format!("the {side} ({}): {reason}", party.entry.id);
            return Ok(check(InteropStatus::Unsupported, Some(reason)));
        }
    }
    let transport = match transport {
        Ok(t) => t.clone(),
        Err(e) => return Ok(check(InteropStatus::Failed, Some(format!("the server: {e}")))),
    };
    let repeat = Command::Repeat(contract::Repeat {
        scenario: scenario.to_string(),
        iterations: 1,
        windows: 0,
        transport: Some(transport),
        ack_fifo: None,
    });
    let out = crate::process::adapter::run(&client.bin, &repeat, None, scratch, CHECK_TIMEOUT, interrupted, None)?;
    Ok(if let Some(reason) = out.unsupported_reason() {
        check(
            InteropStatus::Unsupported,
            Some(format!("the client ({}): {reason}", client.entry.id)),
        )
    } else if out.success() {
        check(InteropStatus::Passed, None)
    } else {
        check(InteropStatus::Failed, Some(out.describe()))
    })
}

/// A reason on one line, at most [`REASON_CHARS`] characters.
fn short(reason: &str) -> String {
    let one_line = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(REASON_CHARS) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reasons_are_one_short_line() {
        assert_eq!(super::short("a\n  b\tc"), "a b c");
        let long = "x".repeat(1000);
        assert_eq!(super::short(&long).chars().count(), super::REASON_CHARS + 1);
    }
}
