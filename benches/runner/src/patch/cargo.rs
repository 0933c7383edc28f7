//! The patched build of Cargo adapters: a copy of the workspace (the
//! tracked Cargo.lock stays as it is; the workspace-hack emptied, as
//! `build-times` does, so that the build compiles only what the adapter
//! needs), `cargo metadata` with the patches to learn which adapters
//! reach a patched crate, then `cargo build` of those into a target
//! directory of their own (`<workspace>/target/patch/target`, kept between
//! runs: a second run rebuilds only what changed), whose binaries are then
//! copied to the patches' own directory (`target/patch/<key>/bin`). The copy
//! and the target directory are shared by every `--patch`: cargo's lock on
//! the target directory serialises the builds of two runs.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;

use anyhow::{bail, Context, Result};
use harness::results::PatchRecord;
use serde_json::Value;

use super::{crate_record, Patched, Spec};
use crate::matrix::{AdapterEntry, Matrix};
use crate::output::errln;
use crate::unhacked::{self, cargo_program};

/// `--config patch.crates-io.NAME.path="PATH"` for every spec.
fn patch_args(specs: &[&Spec]) -> Result<Vec<String>> {
    let mut args = Vec::new();
    for s in specs {
        let path = s
            .path
            .to_str()
            .with_context(|| format!("{} is not UTF-8", s.path.display()))?;
        // A TOML basic string: backslashes and quotes escaped.
        let quoted = path.replace('\\', "\\\\").replace('"', "\\\"");
        args.push("--config".into());
        args.push(format!("patch.crates-io.{}.path=\"{quoted}\"", s.name));
    }
    Ok(args)
}

/// A cargo command in `dir`, its environment cleared of what would move the target directory.
fn cargo(dir: &Path) -> Command {
    let mut cmd = Command::new(cargo_program());
    cmd.current_dir(dir).stdin(Stdio::null());
    for var in ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR"] {
        cmd.env_remove(var);
    }
    bus::die_with_parent(&mut cmd);
    cmd
}

/// Where a patched build happens.
pub struct Dirs<'a> {
    /// The workspace (benches/).
    pub ws: &'a Path,
    /// Its copy and the target directory go here (`target/patch`).
    pub shared: &'a Path,
    /// The patched binaries of these patches.
    pub bins: &'a Path,
    /// The cargo profile of the released binaries.
    pub profile: &'a str,
}

/// Builds the patched rows of `adapters`: adapter id → its patched row.
pub fn build(
    matrix: &Matrix,
    dirs: Dirs,
    adapters: &[&AdapterEntry],
    specs: &[&Spec],
    interrupted: &AtomicBool,
) -> Result<BTreeMap<String, Patched>> {
    let Dirs {
        ws,
        shared,
        bins,
        profile,
    } = dirs;
    for s in specs {
        check_source(s)?;
    }
    let _one_at_a_time = super::build_lock::take(shared, interrupted)?;
    let copy_dir = shared.join("src");
    if copy_dir.exists() {
        std::fs::remove_dir_all(&copy_dir).with_context(|| format!("cannot remove {}", copy_dir.display()))?;
    }
    errln!(
        "patch: copying the workspace {} to {}",
        ws.display(),
        copy_dir.display()
    );
    let copy = unhacked::workspace_copy(&cargo_program(), ws, &copy_dir)?;
    let target = shared.join("target");
    let bin_dir = target.join(if profile == "dev" { "debug" } else { profile });
    let patch = patch_args(specs)?;

    // The one workspace, then each adapter with a lockfile of its own.
    let mut groups: Vec<(Option<PathBuf>, Vec<&AdapterEntry>)> = vec![(None, Vec::new())];
    for a in adapters {
        match matrix.own_lock_manifest(a) {
            None => groups[0].1.push(a),
            Some(m) => groups.push((Some(unhacked::rebase(&m, ws, &copy)), vec![a])),
        }
    }
    let mut rows = BTreeMap::new();
    let mut used: HashSet<String> = HashSet::new();
    for (manifest, members) in groups.into_iter().filter(|g| !g.1.is_empty()) {
        let meta = metadata(&copy, manifest.as_deref(), &patch)?;
        let mut reached: Vec<(&AdapterEntry, Vec<(&Spec, String)>)> = Vec::new();
        for a in members {
            let found = meta.patched_reached_from(&a.package, specs);
            if !found.is_empty() {
                reached.push((a, found));
            }
        }
        if reached.is_empty() {
            continue;
        }
        let mut cmd = cargo(&copy);
        cmd.args(["build", "--profile", profile, "--color", "never"]);
        match &manifest {
            Some(m) => {
                cmd.arg("--manifest-path").arg(m);
            }
            None => {
                for (a, _) in &reached {
                    cmd.args(["-p", &a.package]);
                }
            }
        }
        cmd.args(&patch).arg("--target-dir").arg(&target);
        let ids: Vec<&str> = reached.iter().map(|(a, _)| a.id.as_str()).collect();
        errln!("patch: building {} against {}", ids.join(", "), names(specs));
        let Some(status) =
            crate::process::exec::status_unless_interrupted(&mut cmd, interrupted).context("cannot run cargo build")?
        else {
            bail!("interrupted while building the patched adapters");
        };
        if !status.success() {
            bail!(
                "building {} against {} failed ({status}): cargo's messages are above",
                ids.join(", "),
                names(specs)
            );
        }
        std::fs::create_dir_all(bins).with_context(|| format!("cannot create {}", bins.display()))?;
        for (a, found) in reached {
            let built = bin_dir.join(&a.package);
            let bin = bins.join(&a.package);
            std::fs::copy(&built, &bin)
                .with_context(|| format!("the patched build of {} left no binary at {}", a.id, built.display()))?;
            used.extend(found.iter().map(|(s, _)| s.name.clone()));
            let record = PatchRecord {
                of: a.id.clone(),
                crates: found
                    .into_iter()
                    .map(|(s, version)| crate_record(s, Some(version)))
                    .collect(),
            };
            rows.insert(
                a.id.clone(),
                Patched {
                    of: a.id.clone(),
                    bin,
                    record,
                },
            );
        }
    }
    let unused: Vec<&str> = specs
        .iter()
        .filter(|s| !used.contains(&s.name))
        .map(|s| s.name.as_str())
        .collect();
    if !unused.is_empty() {
        let ids: Vec<&str> = adapters.iter().map(|a| a.id.as_str()).collect();
        bail!(
            "--patch: no selected adapter ({}) depends on {} at the version its source has \
             (a crate that none of them uses, or a source whose version does not meet their requirement, \
             such as an exact `=x.y.z`)",
            if ids.is_empty() {
                "none".to_string()
            } else {
                ids.join(", ")
            },
            unused.join(", ")
        );
    }
    Ok(rows)
}

fn names(specs: &[&Spec]) -> String {
    specs
        .iter()
        .map(|s| format!("{} at {}", s.name, s.path.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The source must be the crate it is named after: `[package] name` of its Cargo.toml.
fn check_source(s: &Spec) -> Result<()> {
    let manifest = s.path.join("Cargo.toml");
    let text = crate::files::read_regular(&manifest).with_context(|| {
        format!(
            "--patch {}={}: no Cargo.toml there (the directory of the crate's source, not of its workspace, \
             or the library of a program adapter selected with --adapters)",
            s.name,
            s.path.display()
        )
    })?;
    let doc: toml::Table = toml::from_str(&text).with_context(|| format!("cannot parse {}", manifest.display()))?;
    let name = doc.get("package").and_then(|p| p.get("name")).and_then(|n| n.as_str());
    match name {
        Some(n) if n == s.name => Ok(()),
        Some(n) => bail!(
            "--patch {}={}: that Cargo.toml is the crate {n:?}, not {:?}",
            s.name,
            s.path.display(),
            s.name
        ),
        None => bail!(
            "--patch {}={}: its Cargo.toml has no [package] name (a workspace root? name the crate's own directory)",
            s.name,
            s.path.display()
        ),
    }
}

/// The crates (name, version) each package reaches.
pub type Reached = Vec<Vec<(String, String)>>;

/// For `build-times --patch`: cargo's `--config` arguments of the patches,
/// and for each of `packages` (members of the workspace copy `copy`) the
/// patched crates it reaches, with their versions. The sources are checked.
pub fn reached(copy: &Path, specs: &[&Spec], packages: &[&str]) -> Result<(Vec<String>, Reached)> {
    for s in specs {
        check_source(s)?;
    }
    let patch = patch_args(specs)?;
    let meta = metadata(copy, None, &patch)?;
    let found = packages
        .iter()
        .map(|p| {
            meta.patched_reached_from(p, specs)
                .into_iter()
                .map(|(s, v)| (s.name.clone(), v))
                .collect()
        })
        .collect();
    Ok((patch, found))
}

/// The resolved graph of `cargo metadata` with the patches.
struct Metadata {
    /// Package id → (name, version, manifest path).
    packages: HashMap<String, (String, String, PathBuf)>,
    /// Package id → the ids it depends on (normal and build dependencies).
    deps: HashMap<String, Vec<String>>,
    members: Vec<String>,
}

fn metadata(copy: &Path, manifest: Option<&Path>, patch: &[String]) -> Result<Metadata> {
    let mut cmd = cargo(copy);
    cmd.args(["metadata", "--format-version", "1", "--color", "never"]);
    if let Some(m) = manifest {
        cmd.arg("--manifest-path").arg(m);
    }
    let out = cmd.args(patch).output().context("cannot run cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata with the patches failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    parse_metadata(&out.stdout)
}

fn parse_metadata(json: &[u8]) -> Result<Metadata> {
    let v: Value = serde_json::from_slice(json).context("cargo metadata printed something that is not JSON")?;
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut packages = HashMap::new();
    for p in v["packages"].as_array().into_iter().flatten() {
        packages.insert(
            s(&p["id"]),
            (s(&p["name"]), s(&p["version"]), PathBuf::from(s(&p["manifest_path"]))),
        );
    }
    let mut deps = HashMap::new();
    for n in v["resolve"]["nodes"].as_array().into_iter().flatten() {
        let ids = n["deps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| {
                d["dep_kinds"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|k| k["kind"].as_str() != Some("dev"))
            })
            .map(|d| s(&d["pkg"]))
            .collect();
        deps.insert(s(&n["id"]), ids);
    }
    let members = v["workspace_members"].as_array().into_iter().flatten().map(s).collect();
    Ok(Metadata {
        packages,
        deps,
        members,
    })
}

impl Metadata {
    /// The specs whose source the member `package` reaches (not through the
    /// workspace-hack), each with its resolved version.
    fn patched_reached_from<'s>(&self, package: &str, specs: &[&'s Spec]) -> Vec<(&'s Spec, String)> {
        let Some(start) = self
            .members
            .iter()
            .find(|id| self.packages.get(*id).is_some_and(|p| p.0 == package))
        else {
            return Vec::new();
        };
        let mut seen: HashSet<&str> = HashSet::new();
        let mut todo = vec![start.as_str()];
        while let Some(id) = todo.pop() {
            if !seen.insert(id) {
                continue;
            }
            for d in self.deps.get(id).into_iter().flatten() {
                if self.packages.get(d).is_some_and(|p| p.0 != "workspace-hack") {
                    todo.push(d);
                }
            }
        }
        specs
            .iter()
            .filter_map(|s| {
                let manifest = s.path.join("Cargo.toml");
                seen.iter()
                    .filter_map(|id| self.packages.get(*id))
                    .find(|(name, _, m)| *name == s.name && *m == manifest)
                    .map(|(_, version, _)| (*s, version.clone()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_an_adapter_reaches_counts_and_not_through_the_hack() {
        let json = br#"{
          "packages": [
            {"id": "a", "name": "adapter-x", "version": "0.1.0", "manifest_path": "/ws/a/Cargo.toml"},
            {"id": "b", "name": "adapter-y", "version": "0.1.0", "manifest_path": "/ws/b/Cargo.toml"},
            {"id": "h", "name": "workspace-hack", "version": "0.1.0", "manifest_path": "/ws/h/Cargo.toml"},
            {"id": "p", "name": "lib", "version": "1.2.3", "manifest_path": "/src/lib/Cargo.toml"},
            {"id": "r", "name": "lib", "version": "0.9.0", "manifest_path": "/reg/lib/Cargo.toml"},
            {"id": "t", "name": "testlib", "version": "1.0.0", "manifest_path": "/src/testlib/Cargo.toml"}
          ],
          "workspace_members": ["a", "b", "h"],
          "resolve": {"nodes": [
            {"id": "a", "deps": [{"pkg": "p", "dep_kinds": [{"kind": null}]},
                                 {"pkg": "t", "dep_kinds": [{"kind": "dev"}]}]},
            {"id": "b", "deps": [{"pkg": "r", "dep_kinds": [{"kind": null}]},
                                 {"pkg": "h", "dep_kinds": [{"kind": null}]}]},
            {"id": "h", "deps": [{"pkg": "p", "dep_kinds": [{"kind": null}]}]},
            {"id": "p", "deps": []}, {"id": "r", "deps": []}, {"id": "t", "deps": []}
          ]}
        }"#;
        let m = parse_metadata(json).unwrap();
        let lib = Spec {
            name: "lib".into(),
            path: "/src/lib".into(),
        };
        let testlib = Spec {
            name: "testlib".into(),
            path: "/src/testlib".into(),
        };
        let specs = [&lib, &testlib];
        let x = m.patched_reached_from("adapter-x", &specs);
        assert_eq!(x.len(), 1, "a dev-dependency is not the adapter's");
        assert_eq!((x[0].0.name.as_str(), x[0].1.as_str()), ("lib", "1.2.3"));
        assert!(
            m.patched_reached_from("adapter-y", &specs).is_empty(),
            "another version of lib, and the patched one only through the workspace-hack"
        );
        assert!(m.patched_reached_from("no-such", &specs).is_empty());
    }
}
