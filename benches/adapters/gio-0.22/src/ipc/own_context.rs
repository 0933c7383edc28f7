//! A connection whose exported objects answer on a thread of their own. GDBus runs an
//! object's callbacks on the thread-default main context of the thread that registered
//! it; the rest of this adapter registers on GLib's global default context and iterates
//! it on the calling thread. That cannot answer a call the calling thread itself makes
//! and blocks on (`call_sync`, `DBusProxy::new_sync`'s `GetAll`), as an application
//! calling a service it serves in the same process does. [`Served`] connects, lets the
//! caller register objects and names, then iterates a main context of its own on a
//! thread until it is dropped, as a service in another process would.

use std::sync::mpsc;
use std::thread::JoinHandle;

use anyhow::{anyhow, Context, Result};
use gio::DBusConnection;
use glib::{MainContext, MainLoop};
use harness::ipc::Transport;

use super::connect;

/// The serving connection and the thread that answers for it.
pub(crate) struct Served {
    pub(crate) conn: DBusConnection,
    main_loop: MainLoop,
    thread: Option<JoinHandle<()>>,
}

impl Served {
    /// Connects to `t`, runs `register` on the new thread (its objects and names are
    /// answered there), and returns once they are in place.
    pub(crate) fn start<R>(t: &Transport, register: R) -> Result<Served>
    where
        R: FnOnce(&DBusConnection) -> Result<()> + Send + 'static,
    {
        let (ready, started) = mpsc::channel::<Result<(DBusConnection, MainLoop)>>();
        let t = t.clone();
        let thread = std::thread::spawn(move || {
            let context = MainContext::new();
            let served = context.with_thread_default(|| -> Result<MainLoop> {
                let conn = connect(&t).context("connecting the serving connection")?;
                register(&conn)?;
                let main_loop = MainLoop::new(Some(&context), false);
                let _ = ready.send(Ok((conn, main_loop.clone())));
                Ok(main_loop)
            });
            match served {
                Ok(Ok(main_loop)) => main_loop.run(),
                Ok(Err(e)) => {
                    let _ = ready.send(Err(e));
                }
                Err(e) => {
                    let _ = ready.send(Err(anyhow!("the serving thread's main context: {e}")));
                }
            }
        });
        let (conn, main_loop) = started
            .recv()
            .map_err(|_| anyhow!("the serving thread ended before it was ready"))??;
        Ok(Served {
            conn,
            main_loop,
            thread: Some(thread),
        })
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.main_loop.quit();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
