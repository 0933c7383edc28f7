//! zbus 3.x: the codec through its documented serde path (`MessageBuilder::build(&body)` with
//! `Serialize + zvariant::Type` bodies, `Message::from_bytes` + `Message::body` into borrowed
//! typed values): adapter-shared/zbus/codec.rs, which zbus 4, 5 and 6 compile too, with
//! src/compat.rs for what zbus 3 spells its own way. IPC through `#[dbus_interface]` and the
//! blocking API: adapter-shared/zbus/ipc_2_3.rs, shared with zbus 2 (zbus 3's macros are
//! not zbus 4's), with zbus 3's match rules and name requests (src/bus_rules.rs).

mod bus_rules;
#[path = "../../../adapter-shared/zbus/codec.rs"]
mod codec;
mod compat;
#[path = "../../../adapter-shared/zbus/fds_2_3.rs"]
mod fds;
#[path = "../../../adapter-shared/zbus/ipc_2_3.rs"]
mod ipc;
#[path = "../../../adapter-shared/zbus/zvariant_3_4.rs"]
mod zv;

use codec::UnitsRef;

harness::adapter_main!(
    id: "zbus-3",
    library: "zbus",
    runtime: "zbus::blocking over async_io::block_on; one internal executor thread per connection (async-io)",
    codec: compat::Zbus::new().expect("building the signal header"),
    ipc: ipc::ZbusIpc
);
