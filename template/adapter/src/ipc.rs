//! The IPC side: serve the benchmark service (harness::ipc's table), call it,
//! receive `Ping`, read `Items` in a fresh process. Only library calls here.

use anyhow::Result;
use harness::ipc::{self as h, IpcOp, Subscriber, Transport};

pub struct MyLibIpc;

type Op<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;

impl h::Ipc for MyLibIpc {
    // Only library facts, e.g. "mylib cannot serve a peer-to-peer connection".
    // Ops that need a bus (Hello, signals, match rules) are refused peer to
    // peer by the harness already (harness::ipc::needs_bus).
    fn unsupported_ipc(&self, _op: IpcOp, _p2p: bool) -> Option<String> {
        None
    }

    fn serve(&mut self, transport: &Transport, ready: &mut dyn FnMut()) -> Result<()> {
        // Own transport.service_name() on the bus (or listen on the p2p socket),
        // export h::OBJECT_PATH / h::INTERFACE, call `ready()`, serve forever.
        let _ = (transport, ready);
        todo!()
    }

    fn subscriber(&mut self, transport: &Transport, extra_rules: usize) -> Result<Subscriber> {
        // Connect, AddMatch h::ping_rule() and h::nonmatching_rule(0..extra_rules);
        // the closure waits for the next Ping and returns the digest of its text.
        let _ = (transport, extra_rules);
        todo!()
    }

    fn client<'a>(&'a mut self, transport: &Transport, op: IpcOp) -> Result<Op<'a>> {
        // Connect once; each call of the closure performs `op` and returns the
        // digest of what came back (IpcOp::expected_digest says what it must be).
        let _ = (transport, op);
        todo!()
    }

    fn cold_start(&mut self, transport: &Transport) -> Result<Vec<(String, String)>> {
        // Connect and read the Items property through the library's property API.
        let _ = transport;
        todo!()
    }
}
