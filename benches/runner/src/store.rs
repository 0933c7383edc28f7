//! Reading and writing results files. Writes are atomic (temp file, fsync,
//! rename, fsync of the directory), so a results file is always valid, even
//! if the runner is killed while writing.

use std::fs::File;
use std::io::Write;
use std::path::Path;

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
    write().with_context(|| format!("cannot write results to {}", path.display()))
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
            },
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
