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
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                // Another name would fail the same way: say why now (the OS's reason).
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot create a private directory in {}: {e}", base.display()),
                    ))
                }
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
            // Not one of ours, made by a version without locks, or killed
            // while being created (before its lock was in place).
            if killed_while_created(&path) && std::fs::remove_dir_all(&path).is_ok() {
                removed.push(path);
            }
            continue;
        };
        if try_flock(&lock).is_ok() && std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// A directory whose creator died before its lock was in place: it holds
/// nothing but (maybe) the lock file being prepared, and the pid in its
/// name (`{PREFIX}{what}-{pid}-{n}`) is no process's.
fn killed_while_created(path: &Path) -> bool {
    let pending = format!("{LOCK}.new");
    let only_pending = std::fs::read_dir(path).is_ok_and(|entries| {
        entries
            .flatten()
            .all(|e| e.file_name().to_str() == Some(pending.as_str()))
    });
    let pid = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.rsplit('-').nth(1))
        .and_then(|p| p.parse::<libc::pid_t>().ok())
        .filter(|p| *p > 0);
    // SAFETY: signal 0 only checks that the process exists.
    let dead = pid.is_some_and(
        |p| unsafe { libc::kill(p, 0) } != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH),
    );
    only_pending && dead
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

    /// Killed while created: only `.owner-lock.new`, or nothing, in the
    /// directory of a dead pid. A live pid's is kept.
    #[test]
    fn a_directory_killed_while_created_is_removed() {
        let base = std::env::temp_dir().join(format!("private-dir-test-base-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        // A pid that is no process's: past the kernel's limit.
        let dead_pid = 4_194_305;
        let dead = base.join(format!("{PREFIX}run-{dead_pid}-0"));
        std::fs::create_dir_all(&dead).unwrap();
        std::fs::write(dead.join(format!("{LOCK}.new")), b"").unwrap();
        let empty = base.join(format!("{PREFIX}run-{dead_pid}-1"));
        std::fs::create_dir_all(&empty).unwrap();
        let live = base.join(format!("{PREFIX}run-{}-0", std::process::id()));
        std::fs::create_dir_all(&live).unwrap();
        std::fs::write(live.join(format!("{LOCK}.new")), b"").unwrap();
        let mut removed = remove_dead(&base);
        removed.sort();
        assert_eq!(removed, [dead.clone(), empty.clone()]);
        assert!(live.is_dir(), "a live process's directory was removed");
        let _ = std::fs::remove_dir_all(&base);
    }
}
