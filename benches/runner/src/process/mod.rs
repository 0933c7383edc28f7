//! The adapter processes: starting them and talking to them ([`adapter`]),
//! running a child to its end under a limit ([`exec`]), and the temporary
//! directories they work in ([`scratch`]). Which CPUs they run on is the
//! leaf [`crate::placement`], which matrix.toml's profiles also read.

pub mod adapter;
pub mod exec;
pub mod scratch;
