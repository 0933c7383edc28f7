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
#[path = "../../../adapter-shared/dbus/props.rs"]
mod props;
#[path = "../../../adapter-shared/dbus/service.rs"]
mod service;
#[path = "../../../adapter-shared/dbus/sink.rs"]
mod sink;
mod storm;
#[path = "../../../adapter-shared/dbus/storm_messages.rs"]
mod storm_messages;
