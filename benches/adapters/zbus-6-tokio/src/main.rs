//! zbus 6.x on Tokio: the zbus-6 adapter's code (adapter-shared/zbus/, as adapter-zbus-6
//! compiles it) with zbus' `tokio` feature instead of its own runtime; src/runtime.rs owns
//! the Tokio current-thread runtime every connection runs on.

#[path = "../../../adapter-shared/zbus/apps.rs"]
mod apps;
#[path = "../../../adapter-shared/zbus/builders.rs"]
mod builders;
#[path = "../../../adapter-shared/zbus/codec.rs"]
mod codec;
#[path = "../../../adapter-shared/zbus/compat_6.rs"]
mod compat;
#[path = "../../../adapter-shared/zbus/compat_4_6.rs"]
mod compat_common;
#[path = "../../../adapter-shared/zbus/fds_6.rs"]
mod fds;
#[path = "../../../adapter-shared/zbus/ipc_async.rs"]
mod ipc;
#[path = "../../../adapter-shared/zbus/props.rs"]
mod props;
mod runtime;
#[path = "../../../adapter-shared/zbus/service.rs"]
mod service;
#[path = "../../../adapter-shared/zbus/startup.rs"]
mod startup;
#[path = "../../../adapter-shared/zbus/storm.rs"]
mod storm;
#[path = "../../../adapter-shared/zbus/zvariant_5_6.rs"]
mod zv;

harness::adapter_main!(
    id: "zbus-6-tokio",
    library: "zbus",
    runtime: "tokio 1.x current-thread runtime (zbus' `tokio` feature, no default-rt), one per process, run by block_on on the calling thread: connections' tasks run only while a thread is inside block_on (the p2p server's per-peer threads share it)",
    codec: compat::Zbus,
    ipc: ipc::ZbusIpc
);
