//! Tokio as the executor of the IPC side (package adapter-zbus-6-tokio): with
//! zbus' `tokio` feature and no `default-rt`, a connection runs on the Tokio
//! runtime current where it is built, with no thread of zbus' own.
//!
//! One current-thread runtime for the process, the flavour `zbus::block_on` uses
//! with the `tokio` feature, owned here so that the flavour does not depend on
//! which zbus features another package of the same build turns on. Its tasks
//! (each connection's socket reader, the object server) run on a thread while it
//! is inside `block_on`; several threads may be inside at once (the p2p server's
//! per-peer threads), and one of them at a time runs the tasks.

use std::future::Future;
use std::sync::LazyLock;

use tokio::runtime::{Builder, Runtime};

static RUNTIME: LazyLock<Runtime> = LazyLock::new(|| {
    Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .expect("starting a Tokio current-thread runtime")
});

pub fn block_on<F: Future>(future: F) -> F::Output {
    RUNTIME.block_on(future)
}
