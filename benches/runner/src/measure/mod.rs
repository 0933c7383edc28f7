//! What is counted beside timing: a cell's process costs (CPU time, memory,
//! context switches: [`costs`]), what processes cost while idle ([`idle`]), instructions under callgrind
//! ([`instructions`]), and an adapter binary's loaded size ([`binsize`]).

pub mod binsize;
pub mod costs;
pub mod idle;
pub mod instructions;
pub mod ipc_instructions;
