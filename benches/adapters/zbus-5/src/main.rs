//! zbus 5.x: the codec through its documented serde path (`Message::signal(..)?.build(&body)`
//! with `Serialize + zvariant::Type` bodies, `Message::from_bytes` + `Body::deserialize`
//! into borrowed typed values), IPC through `#[interface]` and the blocking API. The code is
//! adapter-shared/zbus/'s, which zbus 4 and 6 compile too; src/compat.rs holds what zbus 5
//! spells its own way.

#[path = "../../../adapter-shared/zbus/apps.rs"]
mod apps;
#[path = "../../../adapter-shared/zbus/builders.rs"]
mod builders;
#[path = "../../../adapter-shared/zbus/codec.rs"]
mod codec;
mod compat;
#[path = "../../../adapter-shared/zbus/compat_4_6.rs"]
mod compat_common;
#[path = "../../../adapter-shared/zbus/fds_4_5.rs"]
mod fds;
#[path = "../../../adapter-shared/zbus/ipc_blocking.rs"]
mod ipc;
#[path = "../../../adapter-shared/zbus/props.rs"]
mod props;
#[path = "../../../adapter-shared/zbus/service.rs"]
mod service;
#[path = "../../../adapter-shared/zbus/startup.rs"]
mod startup;
#[path = "../../../adapter-shared/zbus/storm.rs"]
mod storm;
#[path = "../../../adapter-shared/zbus/zvariant_5_6.rs"]
mod zv;

harness::adapter_main!(
    id: "zbus-5",
    library: "zbus",
    runtime: "zbus::blocking over async_io::block_on; one internal executor thread per connection (async-io)",
    codec: compat::Zbus,
    ipc: ipc::ZbusIpc
);
