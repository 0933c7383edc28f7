//! `call/in-flight/<n>` over GDBus: `DBusConnection::call`, the asynchronous
//! call, issued n times (GDBus's worker thread writes each as it is issued;
//! its callback runs on the thread-default main context, here GLib's global
//! default), then that context iterated on the calling thread until every
//! reply has arrived.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use anyhow::{Context, Result};
use gio::DBusCallFlags;
use glib::variant::ToVariant;
use glib::VariantTy;
use harness::ipc::{self as h, Method};

use super::{Service, NO_CANCEL, TIMEOUT_MS};
use crate::variant;

type Replies = Rc<RefCell<Vec<Option<Result<i32>>>>>;

pub(super) fn in_flight(s: &Service, n: usize) -> Result<u64> {
    let replies: Replies = Rc::new(RefCell::new((0..n).map(|_| None).collect()));
    let waiting = Rc::new(Cell::new(n));
    let reply_type = VariantTy::new("(i)").expect("a valid type");
    for i in 0..n {
        let (replies, waiting) = (replies.clone(), waiting.clone());
        s.conn.call(
            s.name.as_deref(),
            h::OBJECT_PATH,
            h::INTERFACE,
            Method::InOutInt.member(),
            Some(&(h::in_flight_arg(i),).to_variant()),
            Some(reply_type),
            DBusCallFlags::NONE,
            TIMEOUT_MS,
            NO_CANCEL,
            move |reply| {
                let value = reply
                    .map_err(anyhow::Error::from)
                    .and_then(|v| variant::get::<(i32,)>(&v).map(|(x,)| x));
                replies.borrow_mut()[i] = Some(value);
                waiting.set(waiting.get() - 1);
            },
        );
    }
    let context = glib::MainContext::default();
    while waiting.get() > 0 {
        context.iteration(true);
    }
    let replies = replies.take();
    let values = replies
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.with_context(|| format!("no reply to in-flight call {i}"))?)
        .collect::<Result<Vec<i32>>>()?;
    Ok(h::in_flight_digest(values))
}
