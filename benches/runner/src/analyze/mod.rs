//! The operations behind the reading commands (as cargo's `ops` sit apart
//! from its `commands`): [`compare`], [`history`], [`spread`] over results
//! files with their [`stats`] and cell [`selection`], [`build_times`],
//! the [`coverage`] table, [`bisect`]'s answer, and [`verify`] (every adapter does the same work).

pub mod bisect;
pub mod build_patched;
pub mod build_times;
mod cargo_step;
pub mod compare;
pub mod compare_portable;
pub mod compare_pr;
pub mod coverage;
pub mod history;
pub mod selection;
pub mod spread;
pub mod stats;
pub mod verify;
