//! zbus 2.x (zvariant 3): the codec (adapter-shared/zbus/codec_1.rs, which zbus-1 compiles
//! too) writes and reads messages with zbus 2's header types and zvariant; IPC through
//! `#[dbus_interface]` and the blocking API: adapter-shared/zbus/ipc_2_3.rs, which zbus-3
//! compiles too, with zbus 2's match rules and name requests (src/bus_rules.rs).

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
