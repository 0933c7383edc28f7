//! Everything the runner prints on stdout goes through [`print`]: a reader
//! that went away (`dbus-matrix list | head -1`) ends the output, quietly.
//! Rust ignores SIGPIPE, so `print!` would panic on EPIPE; here the command
//! goes on and exits with its own status (a regression is still exit 1).

use std::fmt;
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once stdout's reader is gone; nothing more is written.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `args` to stdout and flushes. A closed pipe is not an error (the
/// reader had what it wanted); any other write error is.
pub fn print(args: fmt::Arguments<'_>) -> std::io::Result<()> {
    if CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        other => other,
    }
}

/// Writes to stderr, ignoring a closed stderr (there is nowhere left to say so).
pub fn eprint(args: fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// `print!` through [`print`]: evaluates to `std::io::Result<()>`.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::print(format_args!($($arg)*))
    };
}

/// `println!` through [`print`]: evaluates to `std::io::Result<()>`.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that cannot panic.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::eprint(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {errln, out, outln};
