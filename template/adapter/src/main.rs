//! mylib 1.x: the only code a new library needs. The harness supplies the
//! command line (`harness::contract`), verification, timing, the subscribe
//! loop and the reasons a cell needs a bus; this file calls the library.

use anyhow::Result;
use harness::{Body, Codec, Digest, Shape};

mod ipc;

// A library without a transport passes `ipc: harness::ipc::NoTransport("why")`
// and has no ipc.rs (see benches/adapters/raw and dbus-message-parser-4).
harness::adapter_main!(
    id: "mylib-1",
    library: "mylib",
    // How the adapter drives the library: executor and threads, or blocking calls.
    runtime: "blocking: the calling thread",
    codec: MyLib,
    ipc: ipc::MyLibIpc
);

struct MyLib;

impl Codec for MyLib {
    /// Whatever the library returns that derefs to the wire bytes (no copy forced).
    type Wire = Vec<u8>;

    fn marshal(&mut self, body: &Body) -> Result<Vec<u8>> {
        // Build the test signal (harness::payload::{PATH, INTERFACE, MEMBER},
        // serial 1, little endian) carrying `body`, through the library's own types.
        let _ = body;
        todo!("mylib::Message::signal(..).append(..).to_bytes()")
    }

    fn demarshal(&mut self, bytes: &[u8], shape: Shape, digest: &mut Digest) -> Result<()> {
        // Parse with the library and feed every body field, in wire order, into
        // `digest` (see harness::payload::Unit::digest_into for the order).
        let _ = (bytes, shape, digest);
        todo!("mylib::Message::parse(bytes)")
    }

    // fn unsupported(&self, scenario) -> Option<String>: a scenario the library
    // cannot express at all, with the reason shown in the results.
}
