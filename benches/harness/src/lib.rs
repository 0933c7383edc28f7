//! dbus-matrix harness: everything adapters share.
//!
//! - [`scenario`]: the scenario ids and what they carry;
//! - [`payload`]: the canonical values, as plain Rust values;
//! - [`wire`]: the reference D-Bus codec (canonical bytes, decoding);
//! - [`verify`]: checks run before anything is timed;
//! - [`adapter`]: the [`adapter::Codec`] trait adapters implement;
//! - [`ipc`]: the benchmark service and the [`ipc::Ipc`] trait for IPC scenarios;
//! - [`contract`]: the adapter commands as data, and the protocol words;
//! - [`cli`]: what an adapter binary does with each command, and criterion timing;
//! - [`results`]: the results schema; [`raw_samples`]: the sample form of
//!   adapters that cannot run criterion; [`stats`]: medians, the bootstrap;
//! - [`digest`], [`alloc`]: field digests and the counting allocator.

pub mod adapter;
pub mod address;
pub mod alloc;
pub mod canon;
pub mod cli;
pub mod contract;
pub mod digest;
pub mod interpreter;
pub mod ipc;
pub mod payload;
pub mod raw_samples;
pub mod results;
pub mod roles;
pub mod scenario;
pub mod stats;
pub mod verify;
pub mod wire;

pub use adapter::{AdapterInfo, Codec};
pub use digest::Digest;
pub use payload::{Body, Unit};
pub use scenario::Shape;

/// Defines `main` for an adapter binary and installs the counting allocator.
///
/// ```ignore
/// harness::adapter_main!(
///     id: "zbus-6",
///     library: "zbus",
///     runtime: "zbus::block_on on zbus' own runtime",
///     codec: MyCodec::new(),
///     ipc: MyIpc::new()
/// );
/// ```
/// `version` defaults to `DBUS_MATRIX_LIBRARY_VERSION`, set by the adapter's
/// build script through `lockfile::emit_library_version`. `runtime` says how
/// the adapter drives the library (executor and thread count, or blocking
/// calls on the calling thread). An adapter without a transport passes
/// `ipc: harness::ipc::NoTransport("why")`.
#[macro_export]
macro_rules! adapter_main {
    (id: $id:literal, library: $lib:literal, runtime: $rt:expr, codec: $codec:expr, ipc: $ipc:expr) => {
        $crate::adapter_main!(
            id: $id,
            library: $lib,
            version: env!("DBUS_MATRIX_LIBRARY_VERSION"),
            runtime: $rt,
            codec: $codec,
            ipc: $ipc
        );
    };
    (
        id: $id:literal,
        library: $lib:literal,
        version: $ver:expr,
        runtime: $rt:expr,
        codec: $codec:expr,
        ipc: $ipc:expr
    ) => {
        #[global_allocator]
        static ALLOCATOR: $crate::alloc::CountingAllocator = $crate::alloc::CountingAllocator;

        fn main() -> std::process::ExitCode {
            $crate::cli::main(
                $crate::adapter::AdapterInfo { id: $id, library: $lib, version: $ver, runtime: $rt },
                || $codec,
                || $ipc,
            )
        }
    };
}
