//! The temporary directories of dbus-matrix (buses, the runner's scratch):
//! private (0700), named `dbus-matrix-{what}-{pid}-{n}` so people can tell
//! whose a leftover is, removed on drop, and locked while their process lives.
//!
//! Each holds a lock file with an `flock` that its process keeps until the
//! directory is dropped; the kernel releases it when the process dies, even by
//! SIGKILL. A directory whose lock can be taken is therefore a dead run's and
//! [`remove_dead`] removes it; a live one (a concurrent run) is never touched.
//! The lock file appears already locked (created under another name, locked,
//! then renamed), so a directory being created is never taken for a dead one.

use std::fs::{DirBuilder, File};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// Every name starts with this.
pub const PREFIX: &str = "dbus-matrix-";
/// The lock file in each directory.
const LOCK: &str = ".owner-lock";

/// The directories of this process that exist now, for [`remove_live`].
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

pub struct PrivateDir {
    path: PathBuf,
    /// Holds the flock for as long as the directory is ours.
    _lock: File,
}

impl PrivateDir {
    /// A new, empty (but for its lock) directory in the temporary directory;
    /// `what` names its use (`run`, `dbus-broker`, ...).
    pub fn create(what: &str) -> io::Result<PrivateDir> {
        // Never reuse a name within the process: a directory seen as removed
        // must not come back as another's.
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let base = base();
        for _ in 0..1000 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("{PREFIX}{what}-{}-{n}", std::process::id()));
            if DirBuilder::new().mode(0o700).create(&path).is_err() {
                continue;
            }
            let lock = match lock_in(&path) {
                Ok(lock) => lock,
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&path);
                    return Err(e);
                }
            };
            if let Ok(mut live) = LIVE.lock() {
                live.push(path.clone());
            }
            return Ok(PrivateDir { path, _lock: lock });
        }
        Err(io::Error::other(format!(
            "cannot create a private directory in {}",
            base.display()
        )))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the directory now (dropping does too); true when it is gone.
    pub fn remove(&self) -> bool {
        let _ = std::fs::remove_dir_all(&self.path);
        !self.path.exists()
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        self.remove();
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|p| p != &self.path);
        }
    }
}

/// Where the directories are made: the temporary directory, absolute (a
/// relative $TMPDIR is taken from the working directory now), so a path we
/// hand to another program never begins with `-`.
pub fn base() -> PathBuf {
    let tmp = std::env::temp_dir();
    std::path::absolute(&tmp).unwrap_or(tmp)
}

/// Creates the locked lock file in `dir`.
fn lock_in(dir: &Path) -> io::Result<File> {
    let pending = dir.join(format!("{LOCK}.new"));
    let file = File::create(&pending)?;
    try_flock(&file)?;
    std::fs::rename(&pending, dir.join(LOCK))?;
    Ok(file)
}

/// Takes the exclusive lock, or fails at once (`WouldBlock`) when it is held.
fn try_flock(file: &File) -> io::Result<()> {
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Removes every live directory of this process. For a process about to end
/// without unwinding (a second Ctrl-C); drops do this otherwise.
pub fn remove_live() {
    let live = match LIVE.lock() {
        Ok(live) => live.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    for path in live {
        // A directory can gain a file while it is removed: try again.
        for _ in 0..3 {
            if std::fs::remove_dir_all(&path).is_ok() || !path.exists() {
                break;
            }
        }
    }
}

/// Removes the directories of dead processes in `base` (ours: our uid, our
/// prefix, our lock file, the lock free) and returns them.
pub fn remove_dead(base: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if !entry.file_name().to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        // symlink_metadata: never follow a link out of the temporary directory.
        let ours = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == uid);
        if !ours {
            continue;
        }
        let Ok(lock) = File::open(path.join(LOCK)) else {
            continue; // not one of ours, or made by a version without locks
        };
        if try_flock(&lock).is_ok() && std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_directory_is_kept_and_a_dead_one_removed() {
        let live = PrivateDir::create("private-dir-test").unwrap();
        let base = live.path().parent().unwrap().to_path_buf();
        assert!(live.path().join(LOCK).is_file());
        assert!(!remove_dead(&base).contains(&live.path().to_path_buf()));
        assert!(live.path().is_dir(), "a live directory was removed");

        // A dead process's: the same layout, the lock held by nobody.
        let dead = base.join(format!("{PREFIX}private-dir-test-dead-{}", std::process::id()));
        std::fs::create_dir_all(&dead).unwrap();
        std::fs::write(dead.join(LOCK), b"").unwrap();
        std::fs::write(dead.join("bus"), b"").unwrap();
        assert!(remove_dead(&base).contains(&dead));
        assert!(!dead.exists());

        let kept = live.path().to_path_buf();
        drop(live);
        assert!(!kept.exists());
    }
}
