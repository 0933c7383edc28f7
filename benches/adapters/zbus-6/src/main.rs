//! zbus 6.x: the codec through its documented serde path (`Message::signal(..).build(&body)`
//! with `Serialize + Type` bodies, `Message::from_bytes` + `Body::deserialize` into borrowed
//! typed values; zbus 6 merged zvariant in as `zbus::wire`), IPC through `#[interface]` /
//! `#[proxy]` driven by `zbus::block_on`. The code is adapter-shared/zbus/'s, which zbus 4
//! and 5 compile too (adapter-zbus-6-tokio all of this adapter's); src/runtime.rs is the
//! executor, the one thing the two zbus 6 rows do not share.

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
    id: "zbus-6",
    library: "zbus",
    runtime: "zbus::block_on: zbus' own runtime (zruntime) on the calling thread during a call, on a helper thread in between",
    codec: compat::Zbus,
    ipc: ipc::ZbusIpc
);
