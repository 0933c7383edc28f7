//! dbus-tokio 0.7: dbus-rs 0.9 driven by Tokio. dbus-tokio adds no codec of its
//! own (messages are dbus-rs' `Message`s, marshalled by libdbus), so the codec
//! cells run adapter-shared/dbus/codec.rs, which dbus-0.9 compiles too. IPC:
//! see `ipc`.

harness::adapter_main!(
    id: "dbus-tokio-0.7",
    library: "dbus-tokio",
    runtime: "tokio 1.x current-thread runtime (block_on on the calling thread; no worker threads): \
              it polls each connection's dbus-tokio IOResource task, client and server alike",
    codec: codec::DbusRs,
    ipc: ipc::DbusTokioIpc::default()
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
mod subs;
