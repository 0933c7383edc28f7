//! Reading and writing results files. Writes are atomic (temp file, fsync,
//! rename, fsync of the directory), so a results file is always valid, even
//! if the runner is killed while writing; a failed write (a full disk)
//! removes its temp file. A new file's name is taken with an exclusive
//! create, so two runs never share a file.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use harness::results::{ResultsFile, FORMAT_NAME, SCHEMA_VERSION};

pub fn write_atomic(path: &Path, results: &ResultsFile) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("results"),
        std::process::id()
    ));
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
/// directory each get their own file.
pub fn create_new(dir: &Path, stem: &str, results: &ResultsFile) -> Result<PathBuf> {
    for n in 1u32.. {
        let path = match n {
            1 => dir.join(format!("{stem}.json")),
            n => dir.join(format!("{stem}-{n}.json")),
        };
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(_) => {
                if let Err(e) = write_atomic(&path, results) {
                    let _ = std::fs::remove_file(&path);
                    return Err(e);
                }
                return Ok(path);
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }
    unreachable!("some suffix is free")
}

/// Loads a results file, with errors a user can act on for files that are
/// truncated, foreign, or of a newer schema.
pub fn load(path: &Path) -> Result<ResultsFile> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
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
    serde_json::from_value(value).with_context(|| format!("{} does not match the results schema", path.display()))
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
}
