//! One patched build at a time per workspace: every `run --patch` (and
//! `verify --patch`) copies the workspace into the same
//! `target/patch/src` and builds in `target/patch/target`, so a second one
//! would delete the first one's copy under its build. The second waits,
//! saying so, for an advisory `flock` on `target/patch/.build.lock`; the
//! kernel releases it when its holder ends, even by SIGKILL. A signal ends
//! the wait within a tenth of a second.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::output::errln;

/// Held while the patched adapters are copied and built; released on drop.
pub struct BuildLock {
    _file: File,
}

/// Takes the build lock of `shared` (`target/patch`), waiting for another
/// patched build to end; fails when `interrupted` is set while waiting.
pub fn take(shared: &Path, interrupted: &AtomicBool) -> Result<BuildLock> {
    std::fs::create_dir_all(shared).with_context(|| format!("cannot create {}", shared.display()))?;
    let path = shared.join(".build.lock");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&path)
        .with_context(|| format!("cannot open the patched builds' lock {}", path.display()))?;
    let mut said = false;
    loop {
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(BuildLock { _file: file });
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::WouldBlock {
            return Err(e).with_context(|| format!("cannot lock {}", path.display()));
        }
        if interrupted.load(Ordering::SeqCst) {
            bail!("interrupted while waiting for another patched build to end");
        }
        if !said {
            errln!(
                "patch: another dbus-matrix is building patched adapters in {}; waiting for it to end",
                shared.display()
            );
            said = true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Issue 42 (8): a second `run --patch` deleted the first one's copy.
    #[test]
    fn a_second_build_waits_for_the_first_and_a_signal_ends_the_wait() {
        let dir = std::env::temp_dir().join(format!("dbus-matrix-build-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let never = AtomicBool::new(false);
        let first = take(&dir, &never).unwrap();
        let signal = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (dir, signal) = (dir.clone(), signal.clone());
            std::thread::spawn(move || take(&dir, &signal).map(|_| ()))
        };
        std::thread::sleep(Duration::from_millis(300));
        assert!(!waiter.is_finished(), "the second build did not wait");
        signal.store(true, Ordering::SeqCst);
        let err = waiter.join().unwrap().expect_err("the wait went on after a signal");
        assert!(format!("{err:#}").contains("interrupted"), "{err:#}");
        let waiter = {
            let dir = dir.clone();
            std::thread::spawn(move || take(&dir, &AtomicBool::new(false)).map(|_| ()))
        };
        std::thread::sleep(Duration::from_millis(200));
        drop(first);
        waiter
            .join()
            .unwrap()
            .expect("the lock was not taken after the first ended");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
