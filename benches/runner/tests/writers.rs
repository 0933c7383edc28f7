//! One writer per results file: while a run (or a resume) writes a file, a
//! resume of it, `interop --into` it and `build-times --into` it are
//! refused at once (exit 2) naming the holder; the holder's records stay.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// Waits until `setup`'s fault-hang adapter is timing (the run is busy
/// with a cell, its results file written and locked).
fn wait_for_hang(setup: &FaultSetup) {
    let start = Instant::now();
    while processes_mentioning(&format!("{} bench", setup.bin("fault-hang"))).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "the hang cell never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A run of this test, interrupted when dropped (also when the test fails).
struct Running(Option<Child>);

impl Running {
    fn id(&self) -> u32 {
        self.0.as_ref().unwrap().id()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = self.0.take() {
            interrupt(child);
        }
    }
}

/// SIGINT, then the run's status (130).
fn interrupt(mut child: Child) -> Option<i32> {
    // SAFETY: a child of this test.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait().unwrap().code()
}

#[test]
fn a_second_writer_is_refused_naming_the_holder() {
    let setup = fault_setup("writers", &["fault-ok", "fault-hang"], &["marshal/mixed"]);
    let out = setup.out();
    let mut run = Running(Some(
        setup
            .command(&["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()])
            .args(["--cell-timeout", "60"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    ));
    wait_for_hang(&setup);
    let file = results_file(&out);
    let f = file.to_str().unwrap();
    let holder = format!("pid {}", run.id());
    let refused = |args: &[&str], who: &str| {
        let o = setup.command(args).output().unwrap();
        let msg = text(&o);
        assert_eq!(o.status.code(), Some(2), "{who} while the run writes the file:\n{msg}");
        assert!(
            msg.contains("being written") && msg.contains(&holder),
            "{who}: names the holder ({holder}):\n{msg}"
        );
    };
    // A short timeout: without the lock, the resume would measure the hang cell again.
    refused(&["run", "--quiet", "--resume", f, "--cell-timeout", "2"], "a resume");
    refused(&["interop", "--quiet", "--into", f], "interop --into");
    refused(&["build-times", "--quiet", "--into", f], "build-times --into");
    assert_eq!(interrupt(run.0.take().unwrap()), Some(130));
    let start = Instant::now();
    while !processes_mentioning(&setup.bin("fault-hang")).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(30), "the run left its adapter");
        std::thread::sleep(Duration::from_millis(20));
    }

    // Two resumes at once: the second is refused, the first keeps its record.
    let mut first = Running(Some(
        setup
            .command(&["run", "--quiet", "--resume", f])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    ));
    wait_for_hang(&setup);
    let holder = format!("pid {}", first.id());
    let o = setup
        .command(&["run", "--quiet", "--resume", f, "--cell-timeout", "2"])
        .output()
        .unwrap();
    let msg = text(&o);
    assert_eq!(o.status.code(), Some(2), "a second resume at once:\n{msg}");
    assert!(msg.contains(&holder), "names the first resume ({holder}):\n{msg}");
    assert_eq!(interrupt(first.0.take().unwrap()), Some(130));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(
        v["run"]["resumes"].as_array().map(Vec::len),
        Some(1),
        "the first resume's record is kept, the refused one wrote nothing:\n{:#}",
        v["run"]
    );
    let leftovers: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "lock or temp files left behind: {leftovers:?}");
}

/// `--into` a symbolic link, a read-only file, or a file in a read-only
/// directory is refused before any work, and the file is left as it was.
#[test]
fn into_refuses_what_it_cannot_rewrite_before_the_work() {
    use std::os::unix::fs::PermissionsExt;
    let setup = fault_setup("writers-into", &["fault-ok"], &["marshal/mixed"]);
    let fixture = workspace().join("runner/tests/fixtures/run-1.json");
    let dir = setup.dir.path();
    let target = dir.join("target.json");
    std::fs::copy(&fixture, &target).unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let read_only = dir.join("read-only.json");
    std::fs::copy(&fixture, &read_only).unwrap();
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o444)).unwrap();
    let locked_dir = dir.join("locked");
    std::fs::create_dir(&locked_dir).unwrap();
    let in_locked = locked_dir.join("r.json");
    std::fs::copy(&fixture, &in_locked).unwrap();
    std::fs::set_permissions(&locked_dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    // root may write in any directory: that case needs another user.
    let root = unsafe { libc::geteuid() } == 0;
    let mut cases = vec![(&link, "symbolic link"), (&read_only, "not writable")];
    if !root {
        cases.push((&in_locked, "not writable"));
    }
    for (file, why) in cases {
        let before = std::fs::read(file).unwrap();
        for cmd in ["interop", "build-times"] {
            let o = setup
                .command(&[cmd, "--quiet", "--into", file.to_str().unwrap()])
                .output()
                .unwrap();
            let msg = text(&o);
            assert_eq!(o.status.code(), Some(2), "{cmd} --into {}:\n{msg}", file.display());
            assert!(
                msg.contains(why),
                "{cmd} --into {}: says {why:?}:\n{msg}",
                file.display()
            );
        }
        assert_eq!(std::fs::read(file).unwrap(), before);
    }
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    std::fs::set_permissions(&locked_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
}
