//! The `call/in-only-bytes/<n>` sink of the dbus-rs adapters (issue 31,
//! `harness::ipc::application`): one `dbus_crossroads` object with `SinkBytes(ay)`
//! that records what it receives. dbus-0.9 serves it on a thread of its own
//! (`Crossroads::serve`), dbus-tokio-0.7 from its connection's I/O task
//! (`start_receive`); the object is the same, so it is written once here.

use dbus_crossroads::{Crossroads, IfaceBuilder};
use harness::ipc::application::{self as app, SharedTally};

use crate::service::ByteArray;

/// A `Crossroads` serving the sink at [`app::SINK_PATH`], recording into `tally`.
pub fn crossroads(tally: SharedTally) -> Crossroads {
    let mut cr = Crossroads::new();
    let iface = cr.register(app::SINK_INTERFACE, |b: &mut IfaceBuilder<SharedTally>| {
        b.method(app::SINK_BYTES, ("data",), (), |_, tally, (data,): (ByteArray,)| {
            app::record(tally, &data.0);
            Ok(())
        });
    });
    cr.insert(app::SINK_PATH, &[iface], tally);
    cr
}
