//! The runner's one kind of temporary directory: private (0700), named for
//! what it holds and whose it is (`dbus-matrix-{what}-{pid}-{n}`, so tests and
//! people can tell a leftover's owner), removed with its contents on drop, and
//! locked while the runner lives so the next run can remove it if the runner
//! was killed ([`remove_dead_runs`]). The bus crate's directories are the same
//! kind: [`bus::PrivateDir`].

use std::path::Path;

use anyhow::{Context, Result};

pub struct Scratch(bus::PrivateDir);

impl Scratch {
    /// A new, empty directory; `what` names its use (`run`, `exec-test`, ...).
    pub fn new(what: &str) -> Result<Scratch> {
        bus::PrivateDir::create(what).map(Scratch).with_context(|| {
            format!(
                "cannot create a scratch directory in {}",
                std::env::temp_dir().display()
            )
        })
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

/// Removes what runs that are gone (killed, even by SIGKILL) left in the
/// temporary directory, saying so on stderr. A live run's directories are kept.
pub fn remove_dead_runs() {
    for dir in bus::private_dir::remove_dead(&std::env::temp_dir()) {
        crate::output::errln!("removed {}: left by a dbus-matrix process that is gone", dir.display());
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
