//! `build-times --patch`: beside each selected workspace adapter that
//! reaches a patched crate, a timed build of it against the local source
//! (`<adapter>+patch`), from the same prepared target directory as the
//! released build. The patches go to cargo through `--config` (as `run
//! --patch` gives them, [`crate::patch`]); such a build cannot be `--locked`
//! (a patch rewrites the lockfile of the build's workspace copy), so the
//! copy's lockfile is put back after each, for the next released build.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use anyhow::{bail, Context, Result};
use indicatif::ProgressBar;

use super::cargo_step::{cargo_build, replace_with_copy, AdapterBuild};
use crate::matrix::AdapterEntry;
use crate::patch::Spec;
use crate::{measure::binsize, process::adapter};

/// The patches of a `build-times` and the adapters they reach.
pub struct Patches {
    /// cargo's `--config` arguments.
    args: Vec<String>,
    /// The packages that reach a patched crate.
    reached: Vec<String>,
}

impl Patches {
    /// Asks `cargo metadata` in the workspace copy `ws` which of `selected`
    /// (own-lockfile adapters aside) reach a patched crate; a crate that none
    /// reaches is bad input. The copy's lockfile is kept as it was.
    pub fn plan(ws: &Path, specs: &[Spec], selected: &[&AdapterEntry]) -> Result<Patches> {
        if specs.is_empty() {
            return Ok(Patches {
                args: Vec::new(),
                reached: Vec::new(),
            });
        }
        let specs: Vec<&Spec> = specs.iter().collect();
        let members: Vec<&str> = selected
            .iter()
            .filter(|a| !a.own_lockfile)
            .map(|a| a.package.as_str())
            .collect();
        // `cargo metadata` with the patches writes them into the lockfile: put back, for `--locked`.
        let lock = ws.join("Cargo.lock");
        let locked = std::fs::read(&lock).with_context(|| format!("cannot read {}", lock.display()))?;
        let reached = crate::patch::reached(ws, &specs, &members);
        std::fs::write(&lock, locked).with_context(|| format!("cannot restore {}", lock.display()))?;
        let (args, found) = reached?;
        let unused: Vec<&str> = specs
            .iter()
            .filter(|s| !found.iter().flatten().any(|(n, _)| *n == s.name))
            .map(|s| s.name.as_str())
            .collect();
        if !unused.is_empty() {
            bail!(
                "--patch: no selected workspace adapter ({}) depends on {} at the version its source has",
                members.join(", "),
                unused.join(", ")
            );
        }
        Ok(Patches {
            args,
            reached: members
                .iter()
                .zip(&found)
                .filter(|(_, f)| !f.is_empty())
                .map(|(p, _)| p.to_string())
                .collect(),
        })
    }

    /// How many patched builds there are.
    pub fn count(&self) -> usize {
        self.reached.len()
    }

    /// Whether `a` has a patched build.
    pub fn reach(&self, a: &AdapterEntry) -> bool {
        self.reached.contains(&a.package)
    }
}

/// Where a patched build happens: the prepared state it starts from.
pub struct Dirs<'a> {
    pub ws: &'a Path,
    pub target: &'a Path,
    pub pristine: &'a Path,
    pub scratch: &'a Path,
}

/// `a` built against the patches, from the prepared state, as `<id>+patch`.
pub fn build(
    d: &Dirs,
    patches: &Patches,
    a: &AdapterEntry,
    jobs: u32,
    bar: &ProgressBar,
    interrupted: &AtomicBool,
) -> Result<AdapterBuild> {
    let id = format!("{}{}", a.id, crate::patch::SUFFIX);
    bar.set_message(format!("{id}: restoring the prepared target directory"));
    replace_with_copy(d.pristine, d.target)?;
    let lock = d.ws.join("Cargo.lock");
    let locked = std::fs::read(&lock).with_context(|| format!("cannot read {}", lock.display()))?;
    let mut args: Vec<&str> = vec!["build", "-p", &a.package];
    args.extend(patches.args.iter().map(String::as_str));
    let built = cargo_build(d.ws, d.target, &args, false, jobs, bar, &id, interrupted);
    std::fs::write(&lock, locked).with_context(|| format!("cannot restore {}", lock.display()))?;
    let (elapsed, compiled) = built.with_context(|| format!("building {id} against the patches failed"))?;
    let bin = adapter::binary(&d.target.join("release"), a)?;
    let version = adapter::describe(&bin, d.scratch, interrupted)
        .map(|d| d.listing.version)
        .with_context(|| format!("the freshly built {} cannot say its version", bin.display()))?;
    bar.println(format!(
        "{id}: {:.1} s, {compiled} crates compiled",
        elapsed.as_secs_f64()
    ));
    Ok(AdapterBuild {
        id,
        package: a.package.clone(),
        library: a.library.clone(),
        version,
        baseline: false,
        seconds: elapsed.as_secs_f64(),
        crates_compiled: compiled,
        loaded_bytes: binsize::loaded_bytes(&bin)?,
    })
}
