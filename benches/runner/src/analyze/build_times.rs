//! `dbus-matrix build-times`: what each adapter's library adds to a build.
//!
//! In one fresh temporary target directory the code every adapter shares (the
//! `harness` package and its dependencies) is built once, untimed, after
//! `cargo fetch` (so no download is timed). Each adapter is then built with
//! `cargo build --release --locked -p <package>` from exactly that state (a
//! copy of the prepared directory with its file times kept, so cargo sees the
//! shared crates as fresh), and the wall time of that build, the crates it
//! compiled (cargo's `Compiling` lines) and the binary's loaded size are
//! recorded. An adapter with a lockfile of its own is built with
//! `--manifest-path` into the same target directory: whatever its lockfile
//! resolves differently from the workspace's (the harness' dependencies too)
//! is compiled in its build and counted there.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Context, Result};
use harness::results::ResultsFile;
use serde::Serialize;

use super::build_patched;
pub use super::cargo_step::AdapterBuild;
use super::cargo_step::{cargo_build, replace_with_copy};
use crate::matrix::{AdapterEntry, Matrix};
use crate::process::scratch::Scratch;
pub use crate::unhacked::workspace;
use crate::unhacked::{self, cargo_program};
use crate::{measure::binsize, process::adapter, progress, store};

pub struct Options<'a> {
    pub matrix: &'a Matrix,
    pub adapters: Vec<String>,
    /// Cargo's `-j`; None: the number of CPUs.
    pub jobs: Option<u32>,
    pub progress: bool,
    /// `--patch`: each selected adapter that reaches a patched crate is also
    /// built against the source, as `<id>+patch`, from the same prepared state.
    pub patches: Vec<crate::patch::Spec>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    /// `rustc --version` in the workspace (what cargo builds with).
    pub rustc: String,
    /// `cargo --version`.
    pub cargo: String,
    pub jobs: u32,
    pub cpus: usize,
    pub cpu_model: String,
    /// The untimed build of the shared code (harness and its dependencies).
    pub prepare_seconds: f64,
    pub adapters: Vec<AdapterBuild>,
}

fn version_of(program: &Path, dir: &Path) -> Result<String> {
    let out = Command::new(program)
        .arg("--version")
        .current_dir(dir)
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                anyhow::anyhow!(
                    "{} not found: build-times needs a Rust toolchain on PATH (https://rustup.rs), or set $CARGO/$RUSTC",
                    program.display()
                )
            } else {
                anyhow::anyhow!("cannot run {}: {e}", program.display())
            }
        })?;
    if !out.status.success() {
        bail!(
            "`{} --version` failed: {}",
            program.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `cargo fetch --locked` in the workspace, or for one manifest (an adapter
/// with a lockfile of its own), so that no download is timed.
fn fetch(ws: &Path, manifest: Option<&Path>) -> Result<()> {
    let mut cmd = Command::new(cargo_program());
    cmd.args(["fetch", "--locked"]);
    if let Some(m) = manifest {
        cmd.arg("--manifest-path").arg(m);
    }
    let what = manifest.unwrap_or(ws).display().to_string();
    let out = cmd
        .current_dir(ws)
        .stdin(Stdio::null())
        .output()
        .context("cannot run `cargo fetch`")?;
    if !out.status.success() {
        bail!(
            "`cargo fetch --locked` for {what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn path_str(p: &Path) -> Result<&str> {
    p.to_str().with_context(|| format!("{} is not UTF-8", p.display()))
}

pub fn measure(opts: Options, interrupted: &AtomicBool) -> Result<Report> {
    let mut selected: Vec<&AdapterEntry> = opts.matrix.select_adapters(&opts.adapters)?;
    // Programs (adapters in other languages) have no Cargo build to time.
    selected.retain(|a| !a.is_program());
    anyhow::ensure!(
        !selected.is_empty(),
        "build-times: no Cargo adapter selected (programs are not built by cargo)"
    );
    let checkout = workspace(&opts.matrix.path)?;
    let cargo = version_of(&cargo_program(), &checkout)?;
    let rustc_program = std::env::var_os("RUSTC").map_or_else(|| PathBuf::from("rustc"), PathBuf::from);
    let rustc = version_of(&rustc_program, &checkout)?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = opts.jobs.unwrap_or(cpus as u32);
    anyhow::ensure!(jobs >= 1, "--jobs must be at least 1");

    let scratch = Scratch::new("build-times")?;
    let target = scratch.path().join("target");
    let pristine = scratch.path().join("prepared");
    let bar = progress::bar(selected.len() as u64 + 1, opts.progress);

    bar.set_message("fetching crates (untimed)");
    let own_locks: Vec<PathBuf> = selected
        .iter()
        .filter_map(|a| opts.matrix.own_lock_manifest(a))
        .collect();
    fetch(&checkout, None)?;
    for manifest in &own_locks {
        fetch(&checkout, Some(manifest))?;
    }
    // Each adapter builds its own dependencies, as a project using the library
    // would: in a copy of the workspace without the workspace-hack's unified
    // dependencies (which would put every library's crates into every build).
    bar.set_message("copying the workspace without the workspace-hack's dependencies");
    let ws = unhacked::workspace_copy(&cargo_program(), &checkout, &scratch.path().join("workspace"))?;
    // `--patch`: which adapters reach a patched crate, known before anything is built.
    let patches = build_patched::Patches::plan(&ws, &opts.patches, &selected)?;
    bar.set_message("preparing: building harness and its dependencies (untimed)");
    let (prepare, _) = cargo_build(
        &ws,
        &target,
        &unhacked::shared_packages(&ws),
        true,
        jobs,
        &bar,
        "preparing (untimed)",
        interrupted,
    )
    .context("building the shared code (the harness package) failed")?;
    bar.inc(1);
    let builds_planned = selected.len() + patches.count();
    if builds_planned > 1 {
        bar.set_message("keeping a copy of the prepared target directory");
        replace_with_copy(&target, &pristine)?;
    }

    let mut builds = Vec::new();
    for (i, a) in selected.iter().enumerate() {
        if interrupted.load(Ordering::SeqCst) {
            bail!("interrupted");
        }
        if i > 0 {
            bar.set_message(format!("{}: restoring the prepared target directory", a.id));
            replace_with_copy(&pristine, &target)?;
        }
        bar.set_message(format!("{}: building", a.id));
        let manifest = opts
            .matrix
            .own_lock_manifest(a)
            .map(|m| unhacked::rebase(&m, &checkout, &ws));
        let build_args: Vec<&str> = match &manifest {
            Some(m) => vec!["build", "--manifest-path", path_str(m)?],
            None => vec!["build", "-p", &a.package],
        };
        let (elapsed, compiled) = cargo_build(&ws, &target, &build_args, true, jobs, &bar, &a.id, interrupted)
            .with_context(|| format!("building adapter {} (package {}) failed", a.id, a.package))?;
        let bin = adapter::binary(&target.join("release"), a)?;
        let version = adapter::describe(&bin, scratch.path(), interrupted)
            .map(|d| d.listing.version)
            .with_context(|| format!("the freshly built {} cannot say its version", bin.display()))?;
        builds.push(AdapterBuild {
            id: a.id.clone(),
            package: a.package.clone(),
            library: a.library.clone(),
            version,
            baseline: a.baseline,
            seconds: elapsed.as_secs_f64(),
            crates_compiled: compiled,
            loaded_bytes: binsize::loaded_bytes(&bin)?,
        });
        bar.println(format!(
            "{}: {:.1} s, {compiled} crates compiled",
            a.id,
            elapsed.as_secs_f64()
        ));
        bar.inc(1);
        if patches.reach(a) {
            builds.push(build_patched::build(
                &build_patched::Dirs {
                    ws: &ws,
                    target: &target,
                    pristine: &pristine,
                    scratch: scratch.path(),
                },
                &patches,
                a,
                jobs,
                &bar,
                interrupted,
            )?);
        }
    }
    bar.finish_and_clear();
    Ok(Report {
        rustc,
        cargo,
        jobs,
        cpus,
        cpu_model: crate::environment::detect().cpu_model,
        prepare_seconds: prepare.as_secs_f64(),
        adapters: builds,
    })
}

fn library_label(b: &AdapterBuild) -> String {
    if b.baseline {
        format!("{} (baseline) {}", b.library, b.version)
    } else {
        format!("{} {}", b.library, b.version)
    }
}

pub fn markdown(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Build time of each adapter: `cargo build --release --locked -j {}` in a target directory where only the \
         shared code (harness and its dependencies, {:.0} s) was built; {}, {} ({} CPUs)\n",
        r.jobs, r.prepare_seconds, r.rustc, r.cpu_model, r.cpus
    );
    out.push_str("| adapter | library | build | crates compiled | binary size |\n|---|---|---:|---:|---:|\n");
    for b in &r.adapters {
        let _ = writeln!(
            out,
            "| {} | {} | {:.1} s | {} | {:.1} MB |",
            b.id,
            library_label(b),
            b.seconds,
            b.crates_compiled,
            b.loaded_bytes as f64 / 1e6
        );
    }
    out.push_str(
        "\nBuild: wall time of the adapter's build (its library, the dependencies the harness does not share, the \
         adapter, linking; with the workspace's thin LTO and one codegen unit every adapter also pays for optimising \
         the shared code into its binary: the baseline, raw, shows that floor); crates compiled: cargo's `Compiling` \
         lines; binary size: code and data (ELF PT_LOAD segments).\n",
    );
    out
}

/// Records the build figures in a results file's adapters (atomically).
/// Adapters the file does not have are skipped with a note on stderr; a
/// library version other than the file's is an error (another checkout).
pub fn record_into(path: &Path, r: &Report) -> Result<()> {
    let mut results: ResultsFile = store::load(path)?;
    let mut mismatched = Vec::new();
    let mut recorded = 0;
    for b in &r.adapters {
        match results.adapters.iter_mut().find(|a| a.id == b.id) {
            None => crate::output::errln!("skipped: adapter {} is not in {}", b.id, path.display()),
            Some(a) if a.version != b.version && a.version != "unknown" => {
                mismatched.push(format!("{}: {} in the file, {} built here", b.id, a.version, b.version))
            }
            Some(a) => {
                a.build = Some(b.record(r.jobs));
                recorded += 1;
            }
        }
    }
    if !mismatched.is_empty() {
        bail!(
            "{} was measured with other library versions than this checkout builds ({}); nothing recorded: run \
             build-times in the checkout of revision {}",
            path.display(),
            mismatched.join("; "),
            results.run.revision
        );
    }
    if recorded == 0 {
        bail!(
            "{} has none of the adapters measured ({}); nothing recorded",
            path.display(),
            r.adapters.iter().map(|b| b.id.as_str()).collect::<Vec<_>>().join(", ")
        );
    }
    if results.environment.rustc != r.rustc {
        crate::output::errln!(
            "note: {} was run with {}, the build times with {}",
            path.display(),
            results.environment.rustc,
            r.rustc
        );
    }
    store::write_atomic(path, &results)?;
    crate::output::errln!("recorded build times of {recorded} adapters in {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unhacked::copy_tree;
    use harness::results::BuildRecord;
    use std::time::Duration;

    #[test]
    fn copies_keep_times_and_links() {
        let dir = Scratch::new("build-times-test").unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(a.join("sub")).unwrap();
        std::fs::write(a.join("sub/f"), b"x").unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + Duration::from_nanos(1_600_000_000_123_456_789);
        std::fs::File::options()
            .write(true)
            .open(a.join("sub/f"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        std::os::unix::fs::symlink("sub/f", a.join("link")).unwrap();
        copy_tree(&a, &b).unwrap();
        assert_eq!(std::fs::read(b.join("sub/f")).unwrap(), b"x");
        assert_eq!(std::fs::metadata(b.join("sub/f")).unwrap().modified().unwrap(), old);
        assert_eq!(std::fs::read_link(b.join("link")).unwrap(), Path::new("sub/f"));
    }

    fn report(builds: &[(&str, &str)]) -> Report {
        Report {
            rustc: "rustc 1.95".into(),
            cargo: "cargo 1.95".into(),
            jobs: 2,
            cpus: 2,
            cpu_model: "Some CPU".into(),
            prepare_seconds: 60.0,
            adapters: builds
                .iter()
                .map(|(id, version)| AdapterBuild {
                    id: id.to_string(),
                    package: format!("adapter-{id}"),
                    library: id.to_string(),
                    version: version.to_string(),
                    baseline: false,
                    seconds: 12.5,
                    crates_compiled: 3,
                    loaded_bytes: 2_000_000,
                })
                .collect(),
        }
    }

    #[test]
    fn recorded_only_for_the_same_versions() {
        let dir = Scratch::new("build-times-test").unwrap();
        let file = dir.path().join("r.json");
        store::write_atomic(&file, &crate::export::test_fixtures::tiny()).unwrap();
        let original = std::fs::read(&file).unwrap();

        // Another version than the file's: an error, and the file is untouched.
        let err = format!("{:#}", record_into(&file, &report(&[("a-1", "1.0.1")])).unwrap_err());
        assert!(err.contains("a-1: 1.0.0 in the file, 1.0.1 built here"), "{err}");
        assert_eq!(std::fs::read(&file).unwrap(), original);
        // None of the file's adapters.
        assert!(record_into(&file, &report(&[("zz", "1.0.0")])).is_err());
        assert_eq!(std::fs::read(&file).unwrap(), original);

        // Adapters missing from the file are skipped, the others recorded.
        record_into(&file, &report(&[("a-1", "1.0.0"), ("zz", "1.0.0")])).unwrap();
        let r = store::load(&file).unwrap();
        let build = |id: &str| r.adapters.iter().find(|a| a.id == id).unwrap().build.clone();
        assert_eq!(
            build("a-1"),
            Some(BuildRecord {
                seconds: 12.5,
                crates_compiled: 3,
                jobs: 2
            })
        );
        assert_eq!(build("b-2"), None);
    }

    #[test]
    fn markdown_table() {
        let md = markdown(&report(&[("a-1", "1.0.0")]));
        assert!(md.contains("| a-1 | a-1 1.0.0 | 12.5 s | 3 | 2.0 MB |"), "{md}");
        assert!(md.contains("-j 2") && md.contains("rustc 1.95"), "{md}");
    }

    #[test]
    fn no_workspace_is_explained() {
        let dir = Scratch::new("build-times-test").unwrap();
        let err = workspace(&dir.path().join("matrix.toml")).unwrap_err().to_string();
        assert!(err.contains("no benches/Cargo.toml") && err.contains("Nix"), "{err}");
    }
}
