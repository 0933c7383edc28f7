//! zbus 2.x (zvariant 3): the codec (zbus-1's src/codec.rs, whose text builds on both) writes and
//! reads messages with zbus 2's header types and zvariant; IPC through
//! `#[dbus_interface]` and the blocking API: zbus-3's src/ipc.rs, whose API zbus 2
//! shares, with zbus 2's match rules and name requests (src/bus_rules.rs).

mod bus_rules;
#[path = "../../../adapter-shared/zbus/codec_1.rs"]
mod codec;
#[path = "../../../adapter-shared/zbus/fds_2_3.rs"]
mod fds;
#[path = "../../../adapter-shared/zbus/ipc_2_3.rs"]
mod ipc;

use codec::UnitsRef;

harness::adapter_main!(
    id: "zbus-2",
    library: "zbus",
    runtime: "zbus::blocking over async_io::block_on; one internal executor thread per connection (async-io)",
    codec: codec::Zbus,
    ipc: ipc::ZbusIpc
);
