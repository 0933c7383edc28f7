//! What an adapter binary does with each [`Command`] of the contract
//! (`crate::contract`): the harness supplies it, so adapters hold only
//! library code.
//!
//! - [`listing`]: `list`, and why a scenario is unsupported;
//! - [`service`]: `serve`, `subscribe`, `cold-start` (the long-running sides of IPC);
//! - [`prepare`]: building and verifying the operation of a cell before timing;
//! - [`floor`]: the raw-socket floor, the harness's own IPC operation;
//! - [`timing`]: `bench` and `repeat`: criterion, single operations, windows;
//! - [`criterion_output`]: reading criterion's estimates back from disk.

mod criterion_output;
mod floor;
mod idle;
mod listing;
mod prepare;
mod service;
mod timing;

use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::{ensure, Context, Result};

use crate::adapter::{AdapterInfo, Codec};
use crate::contract::{self, Command};
use crate::digest::Digest;
use crate::ipc::{Ipc, Transport};
use crate::scenario::{Kind, Scenario};

pub use criterion_output::read_criterion_output;
pub use listing::{Listing, ScenarioSupport, RAW_SOCKET_REASON};
pub use timing::dbus_matrix_measured_region;

/// Entry point used by `adapter_main!`: bad arguments exit 2 (clap), errors 1,
/// an unsupported scenario [`contract::EXIT_UNSUPPORTED`].
pub fn main<C: Codec, I: Ipc>(
    info: AdapterInfo,
    make_codec: impl FnOnce() -> C,
    make_ipc: impl FnOnce() -> I,
) -> ExitCode {
    let command = Command::parse();
    match run(&info, make_codec(), make_ipc(), command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run<C: Codec, I: Ipc>(info: &AdapterInfo, mut codec: C, mut ipc: I, command: Command) -> Result<ExitCode> {
    let unsupported = || ExitCode::from(contract::EXIT_UNSUPPORTED);
    match command {
        Command::List => listing::print(info, &codec, &ipc)?,
        Command::Serve { transport } => service::serve(&mut ipc, &transport)?,
        Command::Subscribe(s) => service::subscribe(&mut ipc, &s)?,
        Command::ColdStart { transport } => service::cold_start(&mut ipc, &transport)?,
        Command::Emit { scenario } => {
            let Some(s) = supported(info, &codec, &ipc, &scenario, None)? else {
                return Ok(unsupported());
            };
            emit(&mut codec, s)?
        }
        Command::Demarshal { scenario } => {
            let Some(s) = supported(info, &codec, &ipc, &scenario, None)? else {
                return Ok(unsupported());
            };
            demarshal(&mut codec, s)?
        }
        Command::Bench(b) => {
            let Some(s) = supported(info, &codec, &ipc, &b.scenario, b.transport.as_ref())? else {
                return Ok(unsupported());
            };
            timing::bench(info, &mut codec, &mut ipc, s, &b)?
        }
        Command::Repeat(r) => {
            let Some(s) = supported(info, &codec, &ipc, &r.scenario, r.transport.as_ref())? else {
                return Ok(unsupported());
            };
            timing::repeat(&mut codec, &mut ipc, s, &r)?
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The scenario `id`, or `None` (its reason printed as the contract says)
/// when this adapter cannot do it on `transport`.
fn supported<C: Codec, I: Ipc>(
    info: &AdapterInfo,
    codec: &C,
    ipc: &I,
    id: &str,
    transport: Option<&Transport>,
) -> Result<Option<&'static Scenario>> {
    let scenario = listing::find_scenario(id)?;
    match listing::unsupported_reason(info, codec, ipc, scenario, transport) {
        Some(reason) => {
            eprintln!("{}", contract::unsupported_line(&reason));
            Ok(None)
        }
        None => Ok(Some(scenario)),
    }
}

/// `emit`: the wire bytes of a marshal scenario on stdout.
fn emit<C: Codec>(codec: &mut C, scenario: &Scenario) -> Result<()> {
    ensure!(
        scenario.kind == Kind::Marshal,
        "emit takes a marshal scenario, not {}",
        scenario.id
    );
    let wire = codec.marshal(&scenario.body()).context("marshal failed")?;
    std::io::stdout().write_all(wire.as_ref())?;
    Ok(())
}

/// `demarshal`: wire bytes from stdin, the digest (hex) on stdout.
fn demarshal<C: Codec>(codec: &mut C, scenario: &Scenario) -> Result<()> {
    ensure!(
        scenario.kind == Kind::Demarshal,
        "demarshal takes a demarshal scenario, not {}",
        scenario.id
    );
    let mut bytes = Vec::new();
    std::io::stdin().read_to_end(&mut bytes)?;
    let mut digest = Digest::new();
    codec
        .demarshal(&bytes, scenario.shape(), &mut digest)
        .context("demarshal failed")?;
    println!("{:016x}", digest.finish());
    Ok(())
}
