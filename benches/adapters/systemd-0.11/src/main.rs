//! sd-bus, systemd's own D-Bus library (the C reference), through the
//! `systemd` crate 0.11 (feature `bus`; `systemd::bus`) and, where that crate
//! has no wrapper, `libsystemd-sys` 0.10 directly (`raw`: connecting to an
//! address, the server end of a peer-to-peer connection, the server's
//! processing loop, match rules, calls
//! without destination, fixed-size arrays in one copy). Links libsystemd
//! (pkg-config `libsystemd`, Debian libsystemd-dev 252).
//!
//! The codec cells are unsupported: sd-bus builds and parses messages only
//! as part of a connection. Checked on libsystemd 252 (its sd-bus.h and the
//! symbols libsystemd.so.0 exports): `sd_bus_message_new_signal` and
//! `sd_bus_message_new` fail with -ENOTCONN on an unstarted bus (`sd_bus_new`)
//! or none; on a started bus a message can be built and sealed
//! (`sd_bus_message_seal(m, 1, 0)`), but no exported function returns the
//! sealed bytes, and none makes a message from bytes. See [`NO_WIRE_BYTES`]
//! and [`NO_PARSE_FROM_BYTES`].
//!
//! Runtime: blocking calls on the calling thread. sd-bus is single-threaded:
//! a connection is driven by whoever uses it (`sd_bus_call`,
//! `sd_bus_process` + `sd_bus_wait`); the peer-to-peer server drives each
//! accepted connection on its own thread.

use anyhow::{bail, Result};
use harness::payload::Body;
use harness::scenario::{Kind, Scenario};
use harness::{Codec, Digest, Shape};

mod apps;
mod ipc;
mod props;
mod raw;
mod server;
mod storm;

harness::adapter_main!(
    id: "systemd-0.11",
    library: "systemd",
    runtime: "blocking: the calling thread (sd-bus is single-threaded: sd_bus_call, or sd_bus_process + sd_bus_wait, \
              on the thread that owns the connection); the peer-to-peer server runs one thread per accepted connection",
    codec: SdBusCodec,
    ipc: ipc::SdBusIpc
);

/// Why `marshal/*` is unsupported.
pub const NO_WIRE_BYTES: &str = "sd-bus (libsystemd 252) gives no access to a message's wire bytes: \
     sd_bus_message_new_signal needs a started bus (-ENOTCONN on an unstarted sd_bus_new object or NULL); \
     on one, the message can be built and sealed with serial 1 (sd_bus_message_seal), but its bytes are \
     reachable only through the internal bus_message_get_blob (not in sd-bus.h, not exported by \
     libsystemd.so.0): sd-bus writes them only to a connection's socket (sd_bus_send). The systemd crate \
     0.11.1 wraps nothing more";

/// Why `demarshal/*` is unsupported.
pub const NO_PARSE_FROM_BYTES: &str = "sd-bus (libsystemd 252) parses only what a connection reads: a message \
     is made from bytes inside sd_bus_process's read path, by the internal bus_message_from_malloc / \
     bus_message_from_header (not in sd-bus.h, not exported by libsystemd.so.0); the public \
     sd_bus_message_new makes an empty message of a type. The systemd crate 0.11.1 offers nothing more";

struct SdBusCodec;

impl Codec for SdBusCodec {
    type Wire = Vec<u8>;

    fn unsupported(&self, scenario: &Scenario) -> Option<String> {
        match scenario.kind {
            Kind::Marshal => Some(NO_WIRE_BYTES.into()),
            Kind::Demarshal => Some(NO_PARSE_FROM_BYTES.into()),
            Kind::Ipc(_) => None,
        }
    }

    fn marshal(&mut self, _body: &Body) -> Result<Vec<u8>> {
        bail!("{NO_WIRE_BYTES}")
    }

    fn demarshal(&mut self, _bytes: &[u8], _shape: Shape, _digest: &mut Digest) -> Result<()> {
        bail!("{NO_PARSE_FROM_BYTES}")
    }
}
