//! zbus' own executor for the IPC side: `zbus::block_on`, which in this package's
//! build (zbus with `default-rt`, without `tokio`) runs zruntime on the calling
//! thread. adapter-zbus-6-tokio is a Cargo workspace of its own, so cargo never
//! unifies its zbus `tokio` feature into this build.

pub use zbus::block_on;
