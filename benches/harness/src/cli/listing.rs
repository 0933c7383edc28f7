//! `list`, and the one place that decides whether an adapter can do a scenario.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::adapter::{AdapterInfo, Codec};
use crate::ipc::{self, Ipc, IpcOp, Transport};
use crate::scenario::{self, Kind, Scenario};

/// What `list` prints.
#[derive(Debug, Serialize, Deserialize)]
pub struct Listing {
    pub id: String,
    pub library: String,
    pub version: String,
    /// [`AdapterInfo::runtime`]; empty from an adapter that does not say.
    #[serde(default)]
    pub runtime: String,
    /// The interpreter that runs a program adapter, with its exact version and
    /// path (`CPython 3.11.2 (/usr/bin/python3)`): a fact of this machine, not
    /// of the adapter, so it is kept apart from `runtime`. Results record it
    /// (appended to the runtime); the committed coverage table never shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpreter: Option<String>,
    pub scenarios: Vec<ScenarioSupport>,
}

impl Listing {
    /// The runtime as results record it: with the interpreter, where there is one.
    pub fn runtime_with_interpreter(&self) -> String {
        match &self.interpreter {
            Some(i) if self.runtime.is_empty() => i.clone(),
            Some(i) => format!("{}; {i}", self.runtime),
            None => self.runtime.clone(),
        }
    }
}

/// Support of one scenario; IPC scenarios also say whether they work peer to peer.
#[derive(Debug, Serialize, Deserialize)]
pub struct ScenarioSupport {
    pub id: String,
    pub supported: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p2p_supported: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p2p_reason: Option<String>,
}

pub(super) fn find_scenario(id: &str) -> Result<&'static Scenario> {
    scenario::find(id).with_context(|| {
        let known: Vec<_> = scenario::all().map(|s| s.id.as_str()).collect();
        format!("unknown scenario {id:?}; known: {}", known.join(", "))
    })
}

/// Why every adapter but the raw baseline lists `baseline/raw-socket/<n>` unsupported.
pub const RAW_SOCKET_REASON: &str = "the raw-socket floor is measured once, by the raw baseline";

/// Why `info`'s adapter cannot do `op` (over p2p or a bus), if it cannot.
/// The raw-socket floor is the harness's own code, run by the baseline only.
/// Peer to peer, an op the library can do on a bus but that needs one is a
/// protocol fact, said here once for every library.
fn ipc_unsupported(info: &AdapterInfo, ipc: &impl Ipc, op: IpcOp, p2p: bool) -> Option<String> {
    match op {
        IpcOp::RawSocket(_) if info.library == "raw" => None,
        IpcOp::RawSocket(_) => Some(RAW_SOCKET_REASON.into()),
        _ => match (p2p, ipc::needs_bus(op)) {
            (true, Some(reason)) if ipc.unsupported_ipc(op, false).is_none() => Some(reason.into()),
            _ => ipc.unsupported_ipc(op, p2p),
        }
        .or_else(|| (!ipc.implements(op)).then(|| ipc::not_implemented(op))),
    }
}

/// Why this adapter cannot do `s` on `transport`, if it cannot.
pub(super) fn unsupported_reason<C: Codec, I: Ipc>(
    info: &AdapterInfo,
    codec: &C,
    ipc: &I,
    s: &Scenario,
    transport: Option<&Transport>,
) -> Option<String> {
    match s.kind {
        Kind::Ipc(op) => {
            let p2p = transport.is_some_and(Transport::is_p2p);
            let on_bus = ipc_unsupported(info, ipc, op, false);
            match s.runner_needs_bus() {
                Some(why) if p2p && on_bus.is_none() => Some(why.to_string()),
                _ => ipc_unsupported(info, ipc, op, p2p),
            }
        }
        _ => codec.unsupported(s),
    }
}

fn support<C: Codec, I: Ipc>(info: &AdapterInfo, codec: &C, ipc: &I, s: &Scenario) -> ScenarioSupport {
    let (reason, p2p_reason) = match s.kind {
        Kind::Ipc(op) => {
            let on_bus = ipc_unsupported(info, ipc, op, false);
            let p2p = match (s.runner_needs_bus(), &on_bus) {
                (Some(why), None) => Some(why.to_string()),
                _ => ipc_unsupported(info, ipc, op, true),
            };
            (on_bus, Some(p2p))
        }
        _ => (codec.unsupported(s), None),
    };
    ScenarioSupport {
        id: s.id.clone(),
        supported: reason.is_none(),
        reason,
        p2p_supported: p2p_reason.as_ref().map(Option::is_none),
        p2p_reason: p2p_reason.flatten(),
    }
}

/// `list`: who this adapter is and what it supports, as JSON on stdout.
pub(super) fn print<C: Codec, I: Ipc>(info: &AdapterInfo, codec: &C, ipc: &I) -> Result<()> {
    let listing = Listing {
        id: info.id.into(),
        library: info.library.into(),
        version: info.version.into(),
        runtime: info.runtime.into(),
        interpreter: None,
        scenarios: scenario::all().map(|s| support(info, codec, ipc, s)).collect(),
    };
    println!("{}", serde_json::to_string_pretty(&listing)?);
    Ok(())
}
