//! Reading and writing results files. Writes are atomic (temp file, fsync,
//! rename, fsync of the directory), so a results file is always valid, even
//! if the runner is killed while writing; a failed write (a full disk)
//! removes its temp file. A new file's name is taken with an exclusive
//! create, so two runs never share a file. Whoever writes a file holds
//! its write lock ([`lock`]); temp files of writers that died (SIGKILL) are
//! removed by the next reader of that file, or by the next writer in the
//! directory, which also removes the lock sidecars nobody holds. Only files
//! of ours: named as we name them, this user's, holding what we write.

mod lock;
mod validate;

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use harness::results::{ResultsFile, FORMAT_NAME, SCHEMA_VERSION};

pub use lock::WriteLock;

/// The directory a results file is in (`.` for a bare name).
fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The temp file of a write of `path` by process `pid`.
fn temp_name(path: &Path, pid: u32) -> PathBuf {
    dir_of(path).join(format!(
        ".{}.tmp-{pid}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("results")
    ))
}

/// Removes the temp files in `dir` that a writer of ours left when it died
/// (SIGKILL): named `.NAME.tmp-PID` with PID gone, owned by this user, and
/// holding the start of a results file (or nothing yet). Readers pass the
/// file they read (`only`) and touch no other file's temps; other programs'
/// files of the same shape are never ours.
pub fn remove_stale_temps(dir: &Path, only: Option<&Path>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let only = only.and_then(Path::file_name);
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((stem, pid)) = stale_temp(name.as_bytes()) else {
            continue;
        };
        if only.is_some_and(|o| o.as_bytes() != stem) {
            continue;
        }
        let ours = entry.metadata().is_ok_and(|m| m.is_file() && m.uid() == uid);
        if ours && !process_alive(pid) && begins_as_ours(&entry.path()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether a file holds the start of a results file as [`write_atomic`]
/// writes it (`format` comes first), or nothing yet.
fn begins_as_ours(path: &Path) -> bool {
    let prefix = format!("{{\n  \"format\": \"{FORMAT_NAME}\"");
    let mut head = Vec::new();
    let read = File::open(path).and_then(|f| f.take(prefix.len() as u64).read_to_end(&mut head));
    read.is_ok() && prefix.as_bytes().starts_with(&head)
}

/// The results file's name and the writer's pid of a temp file name `.NAME.tmp-PID`.
fn stale_temp(name: &[u8]) -> Option<(&[u8], i32)> {
    let text = std::str::from_utf8(name).ok()?;
    let (stem, pid) = text.strip_prefix('.')?.rsplit_once(".tmp-")?;
    if stem.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok().filter(|p| *p > 0).map(|p| (stem.as_bytes(), p))
}

fn process_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Takes the write lock of an existing results file that is about to be
/// rewritten (`run --resume`, `interop --into`, `build-times --into`),
/// after checking that it can be: a regular file, not a symbolic link
/// (the write would replace the link, not its target), writable, in a
/// writable directory. So a write that cannot succeed fails before the work.
pub fn lock_existing(path: &Path) -> Result<WriteLock> {
    let meta = std::fs::symlink_metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if meta.file_type().is_symlink() {
        bail!(
            "{} is a symbolic link: writing would replace the link with a file; name its target instead",
            path.display()
        );
    }
    if !meta.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    if meta.permissions().readonly() {
        // Refused even where the rename would succeed (root): its owner made it read-only.
        bail!(
            "cannot write {}: the file is not writable (mode {:o}); make it writable to record into it",
            path.display(),
            meta.mode() & 0o7777
        );
    }
    for (what, p) in [("file", path), ("directory", dir_of(path))] {
        let c = std::ffi::CString::new(p.as_os_str().as_bytes()).context("a path with a NUL byte")?;
        // SAFETY: a valid C string.
        if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
            let e = std::io::Error::last_os_error();
            bail!(
                "cannot write {}: the {what} {} is not writable ({e})",
                path.display(),
                p.display()
            );
        }
    }
    let held = lock::lock(path)?;
    remove_stale_temps(dir_of(path), Some(path));
    Ok(held)
}

/// `--into FILE` of `interop` and `build-times`: the file's write lock
/// taken and the file read once, before the work, so that a bad file, one
/// that cannot be written, or one being written is reported before anything
/// runs; `None` without `--into`. Hold the lock until the figures are in.
pub fn lock_for_into(into: Option<&Path>) -> Result<Option<WriteLock>> {
    let Some(f) = into else { return Ok(None) };
    let held = lock_existing(f)?;
    load(f)?;
    Ok(Some(held))
}

pub fn write_atomic(path: &Path, results: &ResultsFile) -> Result<()> {
    let dir = dir_of(path);
    let tmp = temp_name(path, std::process::id());
    let write = || -> Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(&serde_json::to_vec_pretty(results)?)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()?;
        Ok(())
    };
    write().map_err(|e| {
        // Whatever failed, no partial temp file stays behind (gone already after the rename).
        let _ = std::fs::remove_file(&tmp);
        e.context(format!("cannot write results to {}", path.display()))
    })
}

/// Writes a new results file `<stem>.json` in `dir`, or `<stem>-2.json`,
/// `<stem>-3.json`, ... when that name is taken: the name is claimed with an
/// exclusive create (O_EXCL), so runs started in the same second into one
/// directory each get their own file; its write lock is taken before the
/// first write.
pub fn create_new(dir: &Path, stem: &str, results: &ResultsFile) -> Result<(PathBuf, WriteLock)> {
    remove_stale_temps(dir, None);
    lock::remove_stale_sidecars(dir);
    for n in 1u32.. {
        let path = match n {
            1 => dir.join(format!("{stem}.json")),
            n => dir.join(format!("{stem}-{n}.json")),
        };
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(_) => {
                let written = lock::lock(&path).and_then(|held| write_atomic(&path, results).map(|()| held));
                return match written {
                    Ok(held) => Ok((path, held)),
                    Err(e) => {
                        let _ = std::fs::remove_file(&path);
                        Err(e)
                    }
                };
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }
    unreachable!("some suffix is free")
}

/// Loads a results file, with errors a user can act on for files that are
/// truncated, foreign, of a newer schema, or holding what cannot be a
/// measurement ([`validate`]). Removes the directory's stale temp files.
pub fn load(path: &Path) -> Result<ResultsFile> {
    remove_stale_temps(dir_of(path), Some(path));
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.is_empty() {
        bail!(
            "{} is empty (0 bytes): not a results file (a write of it was cut short, or it was emptied)",
            path.display()
        );
    }
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        anyhow::anyhow!(
            "{} is not valid JSON ({e}); it may be truncated or not a dbus-matrix results file",
            path.display()
        )
    })?;
    if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT_NAME) {
        bail!(
            "{} is not a dbus-matrix results file (no \"format\": \"{FORMAT_NAME}\")",
            path.display()
        );
    }
    let version = value.get("schema_version").and_then(|v| v.as_u64()).unwrap_or(0);
    if version > SCHEMA_VERSION as u64 {
        bail!(
            "{} has schema_version {version}, newer than this dbus-matrix understands ({SCHEMA_VERSION}); use a newer dbus-matrix",
            path.display()
        );
    }
    let results: ResultsFile = serde_json::from_value(value)
        .with_context(|| format!("{} does not match the results schema", path.display()))?;
    validate::check(path, &results)?;
    Ok(results)
}

#[cfg(test)]
mod tests {
    use harness::results::{Environment, ResultsFile, RunInfo, FORMAT_NAME, SCHEMA_VERSION};

    fn results() -> ResultsFile {
        ResultsFile {
            format: FORMAT_NAME.into(),
            schema_version: SCHEMA_VERSION,
            run: RunInfo {
                started_at: "2026-11-24T00:00:00Z".into(),
                finished_at: None,
                profile: "smoke".into(),
                revision: "r".into(),
                tool_version: "0".into(),
                command: Vec::new(),
                placement: None,
                complete: false,
                resumes: Vec::new(),
                runner_revision: None,
                matrix: None,
            },
            plan: None,
            environment: Environment {
                rustc: "rustc".into(),
                cpu_model: "cpu".into(),
                cpus: 1,
                memory_bytes: 0,
                kernel: "k".into(),
                os: "os".into(),
                hostname_hash: "0".into(),
                mode: "host".into(),
                valgrind: None,
            },
            adapters: Vec::new(),
            buses: Vec::new(),
            cells: Vec::new(),
            interop: None,
        }
    }

    #[test]
    fn temp_file_names_give_their_writer() {
        assert_eq!(super::stale_temp(b".r.json.tmp-12"), Some((&b"r.json"[..], 12)));
        assert_eq!(
            super::stale_temp(b".a.tmp-b.json.tmp-7"),
            Some((&b"a.tmp-b.json"[..], 7))
        );
        for not_ours in [
            &b"r.json.tmp-12"[..],
            b".r.json.lock",
            b".r.json.tmp-",
            b".r.json.tmp-1x",
            b"..tmp-3",
        ] {
            assert_eq!(
                super::stale_temp(not_ours),
                None,
                "{}",
                String::from_utf8_lossy(not_ours)
            );
        }
    }

    /// A write that fails after the temporary file exists (here the rename:
    /// the target is a directory; a full disk fails the write itself) leaves
    /// no temporary file behind.
    #[test]
    fn write_atomic_failure_leaves_no_temp_file() {
        let dir = std::env::temp_dir().join(format!("dbus-matrix-store-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let target = dir.join("results.json");
        std::fs::create_dir_all(target.join("occupied")).unwrap();
        let err = super::write_atomic(&target, &results()).unwrap_err();
        assert!(format!("{err:#}").contains("cannot write results"), "{err:#}");
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(left, ["results.json"], "a temporary file was left behind");
    }

    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    fn names_in(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Issue 42 (11): a reader deleted every `.X.tmp-N` file in the directory.
    #[test]
    fn readers_remove_only_the_stale_temps_of_the_file_they_read() {
        let dir = std::env::temp_dir().join(format!("dbus-matrix-store-readers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("r.json");
        super::write_atomic(&file, &results()).unwrap();
        let ours = serde_json::to_vec_pretty(&results()).unwrap();
        let (a, b, c) = (dead_pid(), dead_pid(), dead_pid());
        std::fs::write(dir.join(format!(".r.json.tmp-{a}")), &ours[..40]).unwrap();
        std::fs::write(dir.join(format!(".r.json.tmp-{b}")), "another program's file").unwrap();
        std::fs::write(dir.join(format!(".other.json.tmp-{c}")), &ours).unwrap();
        super::load(&file).unwrap();
        assert_eq!(
            names_in(&dir),
            [
                format!(".other.json.tmp-{c}"),
                format!(".r.json.tmp-{b}"),
                "r.json".into()
            ],
            "the reader removed what was not its file's"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Issue 42 (12): a SIGKILLed writer's lock sidecar stayed for good.
    #[test]
    fn a_new_results_file_removes_sidecars_nobody_holds() {
        let dir = std::env::temp_dir().join(format!("dbus-matrix-store-sidecars-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(".killed.json.lock"), "pid 1: dbus-matrix run\n").unwrap();
        std::fs::write(dir.join(".notes.lock"), "another program's file").unwrap();
        let held = super::lock::lock(&dir.join("busy.json")).unwrap();
        let (path, new) = super::create_new(&dir, "r", &results()).unwrap();
        drop(new);
        assert_eq!(path, dir.join("r.json"));
        assert_eq!(
            names_in(&dir),
            [".busy.json.lock", ".notes.lock", "r.json"],
            "a held sidecar, or another program's file, was removed, or a stale one kept"
        );
        drop(held);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
