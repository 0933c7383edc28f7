//! What a patched source is, as the results record it: the git revision of
//! its checkout and whether the checkout had uncommitted changes.

use std::path::Path;
use std::process::{Command, Stdio};

/// A source directory's git facts.
pub struct Git {
    pub revision: String,
    pub dirty: bool,
}

/// `None` where `dir` is not in a git checkout (or git is missing).
pub fn git(dir: &Path) -> Option<Git> {
    let run = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let revision = run(&["rev-parse", "HEAD"])?;
    let status = run(&["status", "--porcelain"])?;
    Some(Git {
        revision,
        dirty: !status.is_empty(),
    })
}
