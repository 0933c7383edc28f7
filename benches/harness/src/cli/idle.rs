//! `connect/idle-connections/<n>`: the operation the harness builds from the
//! adapter's [`Ipc::idle_connection`]: open `n` connections and hold them, so
//! the runner can read what they cost the bus daemon while they are open.

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use anyhow::{Context, Result};

use crate::digest::Digest;
use crate::ipc::{Ipc, Transport};

type Held = Rc<RefCell<Vec<Box<dyn Any>>>>;
/// One operation: its digest, or why it failed.
type Hold<'a> = Box<dyn FnMut() -> Result<u64> + 'a>;
/// Closes what the operation holds.
type LetGo<'a> = Box<dyn FnMut() + 'a>;

/// The operation (close the previous batch, open `n`, digest their count)
/// and what lets go of the batch it holds (called before a `repeat` window,
/// so the window starts with none open).
pub(super) fn holder<'a, I: Ipc>(ipc: &'a mut I, transport: Transport, n: usize) -> (Hold<'a>, LetGo<'a>) {
    let held: Held = Rc::default();
    let batch = held.clone();
    let hold = move || {
        let mut batch = batch.borrow_mut();
        batch.clear();
        batch.reserve(n);
        for i in 0..n {
            let c = ipc
                .idle_connection(&transport)
                .with_context(|| format!("opening connection {} of {n}", i + 1))?;
            batch.push(c);
        }
        let mut d = Digest::new();
        d.len(batch.len());
        Ok(d.finish())
    };
    let let_go = move || held.borrow_mut().clear();
    (Box::new(hold), Box::new(let_go))
}
