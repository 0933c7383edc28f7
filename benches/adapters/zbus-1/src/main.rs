//! zbus 1.x (zvariant 2): the codec in src/codec.rs (zbus 1's header types and
//! zvariant 2); IPC through zbus 1's synchronous API (src/ipc.rs), issue 31's
//! application families (src/apps.rs, with adapter-shared/zbus/startup_1_3.rs) and
//! subscription families (src/subscriptions.rs, src/storm.rs).

mod apps;
#[path = "../../../adapter-shared/zbus/codec_1.rs"]
mod codec;
mod fds;
mod ipc;
mod props;
#[path = "../../../adapter-shared/zbus/startup_1_3.rs"]
mod startup;
mod storm;
mod subscriptions;

harness::adapter_main!(
    id: "zbus-1",
    library: "zbus",
    runtime: "blocking: the calling thread (zbus 1's Connection reads and writes its socket itself; no executor, no threads); the server's ObjectServer on one thread per connection",
    codec: codec::Zbus,
    ipc: ipc::ZbusIpc
);
