//! The runner's one kind of temporary directory: private (0700), named for
//! what it holds and whose it is (`dbus-matrix-{what}-{pid}-{n}`, so tests and
//! people can tell a leftover's owner), removed with its contents on drop.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{bail, Result};

pub struct Scratch(PathBuf);

impl Scratch {
    /// A new, empty directory; `what` names its use (`run`, `exec-test`, ...).
    pub fn new(what: &str) -> Result<Scratch> {
        // Never reuse a name within the process: one directory per owner.
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let base = std::env::temp_dir();
        for _ in 0..1000 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let p = base.join(format!("dbus-matrix-{what}-{}-{n}", std::process::id()));
            if std::fs::DirBuilder::new().mode(0o700).create(&p).is_ok() {
                return Ok(Scratch(p));
            }
        }
        bail!("cannot create a scratch directory in {}", base.display())
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::Scratch;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn private_distinct_and_removed_on_drop() {
        let a = Scratch::new("scratch-test").unwrap();
        let b = Scratch::new("scratch-test").unwrap();
        assert_ne!(a.path(), b.path());
        let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let name = a.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with(&format!("dbus-matrix-scratch-test-{}-", std::process::id())));
        std::fs::write(a.path().join("f"), b"x").unwrap();
        let kept = a.path().to_path_buf();
        drop(a);
        assert!(!kept.exists());
    }
}
