//! The build of version-axis rows: a copy of the workspace
//! (`benches/target/pinned/src`, without the workspace-hack, as `run --patch`
//! and `build-times` make it), in which the adapter's own Cargo.toml asks for
//! the pinned release of its library (`zbus = "~6.1"` for `zbus@6.1`); cargo
//! resolves it from the registry (the copy's lockfile moves, the tracked one
//! does not) and builds into `benches/target/pinned/target`, kept between
//! runs. The release cargo resolved is read from the copy's lockfile and
//! recorded; the binary goes to `benches/target/pinned/bin/<row id>` (written
//! beside and renamed: a running row's binary is never overwritten in place).
//! Two runs build one after the other: an exclusive `flock` on
//! `benches/target/pinned/.lock` is held while the copy is made and built.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;

use anyhow::{bail, Context, Result};
use harness::results::PinRecord;

use super::Row;
use crate::matrix::pinned::{Pin, Pinned};
use crate::matrix::{AdapterEntry, Matrix};
use crate::output::errln;
use crate::unhacked::{self, cargo_program};

/// Held while this process builds in `target/pinned`.
struct BuildLock(File);

impl BuildLock {
    fn take(path: &Path) -> Result<BuildLock> {
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        // SAFETY: a valid descriptor, owned by `file` for the lock's life.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            bail!("cannot lock {}: {}", path.display(), std::io::Error::last_os_error());
        }
        Ok(BuildLock(file))
    }
}

impl Drop for BuildLock {
    fn drop(&mut self) {
        // SAFETY: as above; closing would release it too.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Builds every row; the result is in `rows`' order.
pub fn build(
    matrix: &Matrix,
    ws: &Path,
    profile: &str,
    rows: &[(&Row, &AdapterEntry)],
    interrupted: &AtomicBool,
) -> Result<Vec<Pinned>> {
    let root = ws.join("target").join("pinned");
    std::fs::create_dir_all(root.join("bin")).with_context(|| format!("cannot create {}", root.display()))?;
    let _lock = BuildLock::take(&root.join(".lock"))?;
    let copy_dir = root.join("src");
    if copy_dir.exists() {
        std::fs::remove_dir_all(&copy_dir).with_context(|| format!("cannot remove {}", copy_dir.display()))?;
    }
    errln!(
        "pinned: copying the workspace {} to {}",
        ws.display(),
        copy_dir.display()
    );
    let copy = unhacked::workspace_copy(&cargo_program(), ws, &copy_dir)?;
    let target = root.join("target");
    let out_dir = target.join(if profile == "dev" { "debug" } else { profile });
    let matrix_dir = matrix.path.parent().unwrap_or(Path::new("")).to_path_buf();
    let mut originals: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut built = Vec::new();
    for (row, a) in rows {
        let manifest = unhacked::rebase(&matrix_dir.join(&a.path).join("Cargo.toml"), ws, &copy);
        if !manifest.starts_with(&copy) {
            bail!(
                "row {}: adapter {} is not in the workspace {}",
                row.id,
                a.id,
                ws.display()
            );
        }
        let original = match originals.get(&manifest) {
            Some(t) => t.clone(),
            None => {
                let t = std::fs::read_to_string(&manifest)
                    .with_context(|| format!("cannot read {}", manifest.display()))?;
                originals.insert(manifest.clone(), t.clone());
                t
            }
        };
        let edited = with_requirement(&original, &row.pin)
            .with_context(|| format!("row {}: adapter {}'s Cargo.toml", row.id, a.id))?;
        std::fs::write(&manifest, edited).with_context(|| format!("cannot write {}", manifest.display()))?;
        errln!(
            "pinned: building {} ({} with {} {})",
            row.id,
            a.id,
            row.pin.crate_name,
            row.pin.requirement()
        );
        let mut cmd = Command::new(cargo_program());
        cmd.current_dir(&copy)
            .stdin(Stdio::null())
            .args([
                "build",
                "--profile",
                profile,
                "--color",
                "never",
                "-p",
                a.package.as_str(),
            ])
            .arg("--target-dir")
            .arg(&target);
        for var in ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR"] {
            cmd.env_remove(var);
        }
        bus::die_with_parent(&mut cmd);
        let Some(status) =
            crate::process::exec::status_unless_interrupted(&mut cmd, interrupted).context("cannot run cargo build")?
        else {
            bail!("interrupted while building the version-axis rows");
        };
        if !status.success() {
            bail!(
                "building {} ({} with {} {}) failed ({status}): cargo's messages are above (a release the \
                 registry lacks, or one the adapter's code does not compile against)",
                row.id,
                a.id,
                row.pin.crate_name,
                row.pin.requirement()
            );
        }
        let lock = std::fs::read_to_string(copy.join("Cargo.lock")).context("the copy's Cargo.lock")?;
        let version = resolved(&lock, &row.pin).with_context(|| format!("row {}", row.id))?;
        let bin = root.join("bin").join(&row.id);
        let fresh = root.join("bin").join(format!(".{}.{}", row.id, std::process::id()));
        std::fs::copy(out_dir.join(&a.package), &fresh).with_context(|| {
            format!(
                "the build of {} left no binary {}",
                row.id,
                out_dir.join(&a.package).display()
            )
        })?;
        std::fs::rename(&fresh, &bin).with_context(|| format!("cannot move the binary to {}", bin.display()))?;
        errln!("pinned: {} runs {} {version}", row.id, row.pin.crate_name);
        built.push(Pinned {
            of: a.id.clone(),
            bin,
            record: PinRecord {
                of: a.id.clone(),
                crate_name: row.pin.crate_name.clone(),
                requirement: row.pin.requirement(),
                version,
            },
        });
        std::fs::write(&manifest, &original).with_context(|| format!("cannot write {}", manifest.display()))?;
    }
    Ok(built)
}

/// The manifest with the direct dependency on the pin's crate (under its own
/// name or renamed with `package`) held to the pin's requirement; its
/// features and other keys kept.
pub fn with_requirement(manifest: &str, pin: &Pin) -> Result<String> {
    let mut doc: toml::Table = toml::from_str(manifest).context("not TOML")?;
    let deps = doc
        .get_mut("dependencies")
        .and_then(|d| d.as_table_mut())
        .context("no [dependencies]")?;
    let key = deps
        .iter()
        .find(|(k, v)| {
            k.as_str() == pin.crate_name || v.get("package").and_then(|p| p.as_str()) == Some(pin.crate_name.as_str())
        })
        .map(|(k, _)| k.clone())
        .with_context(|| format!("no direct dependency on {} to pin", pin.crate_name))?;
    let req = toml::Value::String(pin.requirement());
    match deps.get_mut(&key).expect("found") {
        v @ toml::Value::String(_) => *v = req,
        toml::Value::Table(t) if t.contains_key("workspace") => {
            bail!("{key} comes from the workspace's dependencies: pin a crate the adapter names itself")
        }
        toml::Value::Table(t) => {
            t.insert("version".into(), req);
        }
        _ => bail!("dependency {key}: neither a version nor a table"),
    }
    toml::to_string(&doc).context("cannot write the manifest")
}

/// The one version of the pin's crate in a lockfile that the pin admits.
pub fn resolved(lock: &str, pin: &Pin) -> Result<String> {
    let doc: toml::Table = toml::from_str(lock).context("Cargo.lock is not TOML")?;
    let found: Vec<String> = doc
        .get("package")
        .and_then(|p| p.as_array())
        .into_iter()
        .flatten()
        .filter(|p| p.get("name").and_then(|n| n.as_str()) == Some(pin.crate_name.as_str()))
        .filter_map(|p| p.get("version").and_then(|v| v.as_str()))
        .filter(|v| pin.admits(v))
        .map(str::to_string)
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!(
            "cargo resolved no {} {} (Cargo.lock of the build)",
            pin.crate_name,
            pin.requirement()
        ),
        many => bail!("several {} {}: {many:?}", pin.crate_name, pin.requirement()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_requirement_is_replaced_and_the_rest_kept() {
        let pin = Pin::parse("zbus@6.1").unwrap();
        let table = "[package]\nname = \"a\"\n\n[dependencies]\nanyhow = \"1\"\nzbus = { version = \"=6.2.1\", default-features = false, features = [\"p2p\"] }\n";
        let out: toml::Table = toml::from_str(&with_requirement(table, &pin).unwrap()).unwrap();
        let z = &out["dependencies"]["zbus"];
        assert_eq!(z["version"].as_str(), Some("~6.1"));
        assert_eq!(z["default-features"].as_bool(), Some(false));
        assert_eq!(z["features"].as_array().unwrap().len(), 1);
        assert_eq!(out["dependencies"]["anyhow"].as_str(), Some("1"));
        let plain = with_requirement("[dependencies]\nzbus = \"=6.2.1\"\n", &pin).unwrap();
        assert!(plain.contains("zbus = \"~6.1\""), "{plain}");
        let renamed = with_requirement("[dependencies]\nz6 = { package = \"zbus\", version = \"6\" }\n", &pin).unwrap();
        assert!(renamed.contains("~6.1"), "{renamed}");
        assert!(with_requirement("[dependencies]\nzbus.workspace = true\n", &pin).is_err());
        assert!(with_requirement("[dependencies]\nanyhow = \"1\"\n", &pin).is_err());
    }

    #[test]
    fn the_resolved_version_is_the_one_the_pin_admits() {
        let lock = "version = 4\n[[package]]\nname = \"zbus\"\nversion = \"5.19.0\"\n[[package]]\nname = \"zbus\"\nversion = \"6.1.0\"\n";
        assert_eq!(resolved(lock, &Pin::parse("zbus@6.1").unwrap()).unwrap(), "6.1.0");
        assert!(resolved(lock, &Pin::parse("zbus@6.2").unwrap()).is_err());
        assert_eq!(resolved(lock, &Pin::parse("zbus@=5.19.0").unwrap()).unwrap(), "5.19.0");
    }
}
