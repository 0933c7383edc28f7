//! dbus-rs 0.9 through its typed argument traits (the codec is in `codec`,
//! shared with dbus-tokio-0.7) and its blocking connection API (`ipc`).

harness::adapter_main!(
    id: "dbus-0.9",
    library: "dbus",
    runtime: "blocking: libdbus on the calling thread",
    codec: codec::DbusRs,
    ipc: ipc::DbusIpc
);

mod apps;
#[path = "../../../adapter-shared/dbus/codec.rs"]
mod codec;
mod ipc;
mod props;
#[path = "../../../adapter-shared/dbus/service.rs"]
mod service;
mod storm;
