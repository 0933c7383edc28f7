//! One writer per results file. Whoever writes a results file (`run`, `run
//! --resume`, `interop --into`, `build-times --into`) holds an advisory
//! `flock` on a sidecar, `.NAME.lock` next to it, from before it reads the
//! file until its last write; a second writer is refused at once, naming
//! the holder (pid and command line, which the holder writes into the
//! sidecar). The sidecar, not the results file: every write replaces the
//! results file (a rename), and a lock on a replaced inode would lock nothing.
//!
//! The kernel releases the lock when its holder dies, even by SIGKILL; the
//! holder removes the sidecar when done. A sidecar removed between another
//! process's open and flock is noticed (its inode is no longer the path's)
//! and opened again.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

/// Held while a results file is written; released (and its sidecar
/// removed) on drop.
pub struct WriteLock {
    sidecar: PathBuf,
    file: File,
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        // Removed while still held: a waiting process then finds the inode
        // it locked gone from the path and opens the path again.
        let _ = std::fs::remove_file(&self.sidecar);
        let _ = self.file.set_len(0);
    }
}

/// The sidecar of `results`: `.NAME.lock` in its directory.
pub fn sidecar(results: &Path) -> PathBuf {
    let name = results.file_name().and_then(|n| n.to_str()).unwrap_or("results");
    super::dir_of(results).join(format!(".{name}.lock"))
}

/// Takes the write lock of `results`, or fails at once naming its holder.
pub fn lock(results: &Path) -> Result<WriteLock> {
    let sidecar = sidecar(results);
    loop {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            // Never through a link (it would empty the link's target) and
            // never waiting on a FIFO's other end.
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&sidecar);
        let file = match file {
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => bail!(
                "the lock file {} of {} is a symbolic link; refusing to write through it (remove it if no \
                 dbus-matrix is writing {})",
                sidecar.display(),
                results.display(),
                results.display()
            ),
            other => other.with_context(|| {
                format!(
                    "cannot write in the directory of {} (creating its lock file {})",
                    results.display(),
                    sidecar.display()
                )
            })?,
        };
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            bail!(
                "the lock file {} of {} is not a regular file; refusing to use it (remove it if no \
                 dbus-matrix is writing {})",
                sidecar.display(),
                results.display(),
                results.display()
            );
        }
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != ErrorKind::WouldBlock {
                return Err(e).with_context(|| format!("cannot lock {}", sidecar.display()));
            }
            bail!(
                "{} is being written by another dbus-matrix process ({}); two writers would lose each \
                 other's records: wait until it ends (or stop it), then try again",
                results.display(),
                holder(&file)
            );
        }
        let locked = file.metadata().context("the lock file")?;
        let current = std::fs::metadata(&sidecar);
        if !current.is_ok_and(|m| m.ino() == locked.ino() && m.dev() == locked.dev()) {
            continue; // its last holder removed it after our open: ours is a stale inode
        }
        let mut lock = WriteLock { sidecar, file };
        let command: Vec<String> = std::env::args().collect();
        let me = format!("pid {}: {}\n", std::process::id(), command.join(" "));
        let wrote = lock
            .file
            .set_len(0)
            .and_then(|()| (&lock.file).write_all(me.as_bytes()))
            .and_then(|()| lock.file.flush());
        // (A full disk fails here first: say where.)
        wrote.with_context(|| {
            format!(
                "cannot write the lock file {} of {}",
                lock.sidecar.display(),
                results.display()
            )
        })?;
        return Ok(lock);
    }
}

/// Removes the sidecars in `dir` that nobody holds (their writer was
/// SIGKILLed): `.NAME.lock`, this user's regular file, holding what a writer
/// writes (`pid N: …`) or nothing, and free to lock. Removing one under a
/// process that is between its open and its flock is safe: [`lock`] notices
/// the inode gone from the path and opens the path again.
pub fn remove_stale_sidecars(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with('.') && name.ends_with(".lock") && name.len() >= ".x.lock".len()) {
            continue;
        }
        let path = entry.path();
        let Ok(file) = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
        else {
            continue;
        };
        if !file.metadata().is_ok_and(|m| m.is_file() && m.uid() == uid) {
            continue;
        }
        let mut text = String::new();
        let _ = (&file).take(4096).read_to_string(&mut text);
        if !(text.is_empty() || text.starts_with("pid ")) {
            continue;
        }
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// What the holder wrote into the sidecar (it writes right after taking
/// the lock, so wait a little for it).
fn holder(file: &File) -> String {
    for _ in 0..20 {
        let mut text = String::new();
        let mut f = file;
        let _ = std::io::Seek::rewind(&mut f);
        let _ = f.read_to_string(&mut text);
        let text = text.trim();
        if !text.is_empty() {
            return text.to_string();
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    "its pid and command are unknown".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_and_freed_on_drop() {
        let dir = std::env::temp_dir().join(format!("dbus-matrix-lock-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("r.json");
        let held = lock(&file).unwrap();
        assert!(sidecar(&file).is_file());
        // flock locks belong to the open file description: a second open, even
        // in this process, conflicts.
        let err = format!("{:#}", lock(&file).err().expect("a second lock was taken"));
        assert!(err.contains(&format!("pid {}", std::process::id())), "{err}");
        drop(held);
        assert!(!sidecar(&file).exists(), "the sidecar stayed behind");
        let again = lock(&file).unwrap();
        drop(again);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Issue 42 (2): a sidecar that is a link emptied the link's target.
    #[test]
    fn a_sidecar_that_is_a_link_or_a_fifo_is_refused_naming_it_and_nothing_is_written() {
        let dir = std::env::temp_dir().join(format!("dbus-matrix-lock-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("r.json");
        let victim = dir.join("precious.txt");
        std::fs::write(&victim, "a user's data\n").unwrap();
        std::os::unix::fs::symlink(&victim, sidecar(&file)).unwrap();
        let err = format!("{:#}", lock(&file).err().expect("a lock was taken through a link"));
        assert!(err.contains("symbolic link") && err.contains(".r.json.lock"), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "a user's data\n");
        std::fs::remove_file(sidecar(&file)).unwrap();
        let fifo = std::ffi::CString::new(sidecar(&file).into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let err = format!("{:#}", lock(&file).err().expect("a lock was taken on a FIFO"));
        assert!(
            err.contains("not a regular file") && err.contains(".r.json.lock"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
