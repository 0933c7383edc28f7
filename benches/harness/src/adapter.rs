//! The contract every adapter crate implements. An adapter is a binary whose
//! `main` is `harness::adapter_main!(...)`; the harness supplies the CLI, the
//! verification and the timing, so adapters contain only library code.

use anyhow::Result;

use crate::digest::Digest;
use crate::payload::Body;
use crate::scenario::{Scenario, Shape};

/// Who an adapter is. `version` is the exact version from Cargo.lock,
/// captured at build time by the `lockfile` crate.
#[derive(Clone, Debug)]
pub struct AdapterInfo {
    /// The id used in matrix.toml, e.g. `zbus-6`.
    pub id: &'static str,
    /// The crate being measured, e.g. `zbus`.
    pub library: &'static str,
    pub version: &'static str,
    /// How the adapter drives the library: the executor and its threads, or
    /// that calls block on the calling thread (e.g. `tokio 1.x multi-thread
    /// runtime, 2 worker threads`). Recorded with the results and shown in
    /// the reports: the runtime is a variable of async libraries' figures.
    pub runtime: &'static str,
}

pub trait Codec {
    /// The complete wire bytes (header + body). Libraries that own their
    /// buffer return it as is; nothing forces a copy.
    type Wire: AsRef<[u8]>;

    /// `marshal/*`: build the test signal (path, interface, member from
    /// `harness::payload`, serial 1, little endian, no destination) carrying
    /// `body`, from these plain values to complete wire bytes. Conversion into
    /// the library's own value types belongs inside this call.
    fn marshal(&mut self, body: &Body) -> Result<Self::Wire>;

    /// `demarshal/*`: parse `bytes` (the canonical test signal) into the
    /// library's typed values and feed every body field, in wire order, into
    /// `digest` (see `Unit::digest_into` for the order). `shape` says which
    /// types to expect.
    fn demarshal(&mut self, bytes: &[u8], shape: Shape, digest: &mut Digest) -> Result<()>;

    /// `Some(reason)` when this library cannot do `scenario` at all. The
    /// reason is shown in the results; an unsupported cell is never dropped.
    fn unsupported(&self, _scenario: &Scenario) -> Option<String> {
        None
    }
}
