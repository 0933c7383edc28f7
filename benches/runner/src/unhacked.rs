//! The workspace as `build-times` and `run --patch` build it: a copy in
//! which cargo-hakari's `workspace-hack` package depends on nothing.
//!
//! The workspace-hack (benches/workspace-hack) unifies the features of every
//! dependency of the workspace so that one dependency build serves every
//! adapter (issue 26, defect 8). That is what the flake and CI want, and the
//! opposite of what `build-times` measures: what one library adds to a build.
//! With the hack, every adapter's build would compile every library's crates.
//! So `build-times` builds in a copy whose hack section is emptied (what
//! `cargo hakari disable` writes), with the lockfile brought in line offline
//! (`cargo update --workspace`: workspace members only, no version moves).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// `$CARGO` (set when run by cargo itself), else `cargo` from PATH. Only
/// `build-times`, `run --patch` and pinned rows run it: they build a
/// checkout, which is the dev shell's work (`nix develop`), never the `nix
/// run` wrapper's, whose PATH has no cargo.
pub fn cargo_program() -> PathBuf {
    std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from)
}

const HACK_MANIFEST: &str = "workspace-hack/Cargo.toml";
const BEGIN: &str = "### BEGIN HAKARI SECTION";
const END: &str = "### END HAKARI SECTION";

/// Copies the workspace at `checkout` (all but its `target/`) to `into`,
/// empties the workspace-hack's dependencies if there is one, and updates the
/// copy's lockfile offline. Returns `into`, resolved.
pub fn workspace_copy(cargo: &Path, checkout: &Path, into: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(into).with_context(|| format!("cannot create {}", into.display()))?;
    for entry in std::fs::read_dir(checkout).with_context(|| format!("cannot read {}", checkout.display()))? {
        let entry = entry?;
        if entry.file_name() == "target" {
            continue;
        }
        let dst = into.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &dst)
        } else {
            std::fs::copy(entry.path(), &dst).map(|_| ()).map_err(Into::into)
        }
        .with_context(|| format!("cannot copy {} to {}", entry.path().display(), dst.display()))?;
    }
    let hack = into.join(HACK_MANIFEST);
    if hack.is_file() {
        let text = std::fs::read_to_string(&hack).with_context(|| format!("cannot read {}", hack.display()))?;
        std::fs::write(
            &hack,
            without_hack_section(&text).with_context(|| hack.display().to_string())?,
        )
        .with_context(|| format!("cannot write {}", hack.display()))?;
        let out = Command::new(cargo)
            .args(["update", "--workspace", "--offline", "--color", "never"])
            .current_dir(into)
            .stdin(Stdio::null())
            .output()
            .context("cannot run cargo update")?;
        if !out.status.success() {
            bail!(
                "cargo update --workspace --offline in the copy of the workspace failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
    }
    into.canonicalize()
        .with_context(|| format!("cannot resolve {}", into.display()))
}

/// What the untimed preparation builds: the harness and, where there is one,
/// the (emptied) workspace-hack every member depends on, so that neither is
/// counted in an adapter's build.
pub fn shared_packages(ws: &Path) -> Vec<&'static str> {
    let mut args = vec!["build", "-p", "harness"];
    if ws.join(HACK_MANIFEST).is_file() {
        args.extend(["-p", "workspace-hack"]);
    }
    args
}

/// `path` as the same path under `to` where it lies under `from` (an own-lockfile
/// adapter's manifest, so that its path dependency on the harness is the copy's,
/// which the prepared build compiled); otherwise `path` itself.
pub fn rebase(path: &Path, from: &Path, to: &Path) -> PathBuf {
    let resolved = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    match resolved.strip_prefix(from) {
        Ok(rel) => to.join(rel),
        Err(_) => path.to_path_buf(),
    }
}

/// The manifest with nothing between hakari's markers.
fn without_hack_section(text: &str) -> Result<String> {
    let (Some(begin), Some(end)) = (text.find(BEGIN), text.find(END)) else {
        bail!("no `{BEGIN}` … `{END}` section: not a cargo-hakari workspace-hack");
    };
    anyhow::ensure!(begin < end, "`{END}` before `{BEGIN}`");
    Ok(format!("{}{BEGIN}\n{}", &text[..begin], &text[end..]))
}

/// Copies a directory tree, keeping modification times (cargo compares them
/// to decide what is fresh) and symbolic links.
pub fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
            let modified = entry.metadata()?.modified()?;
            std::fs::File::options()
                .write(true)
                .open(&dst)?
                .set_modified(modified)?;
        }
    }
    Ok(())
}

/// The Cargo workspace: `$DBUS_MATRIX_WORKSPACE` if set (a layout other
/// than the repository's, such as the Nix check's source/ beside
/// matrix.toml), else `benches/` next to matrix.toml; or why there is none.
pub fn workspace(matrix: &Path) -> Result<PathBuf> {
    if let Some(ws) = std::env::var_os("DBUS_MATRIX_WORKSPACE") {
        let ws = PathBuf::from(ws);
        if !ws.join("Cargo.toml").is_file() {
            bail!("DBUS_MATRIX_WORKSPACE={}: no Cargo.toml there", ws.display());
        }
        return ws
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", ws.display()));
    }
    let repo = match matrix.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => p.to_path_buf(),
        None => PathBuf::from("."),
    };
    let ws = repo.join("benches");
    if !ws.join("Cargo.toml").is_file() {
        bail!(
            "no benches/Cargo.toml next to {}: build-times builds the adapters from source, so run it from a checkout \
             of the repository (or pass --matrix CHECKOUT/matrix.toml). A Nix-installed dbus-matrix carries only the \
             built binaries, not the sources",
            matrix.display()
        );
    }
    ws.canonicalize()
        .with_context(|| format!("cannot resolve {}", ws.display()))
}

#[cfg(test)]
mod tests {
    use super::without_hack_section;

    #[test]
    fn the_hack_section_is_emptied_and_the_rest_kept() {
        let text = "[package]\nname = \"workspace-hack\"\n\n### BEGIN HAKARI SECTION\n[dependencies]\nlibc = { version = \"0.2\" }\n\n### END HAKARI SECTION\n";
        assert_eq!(
            without_hack_section(text).unwrap(),
            "[package]\nname = \"workspace-hack\"\n\n### BEGIN HAKARI SECTION\n### END HAKARI SECTION\n"
        );
        assert!(without_hack_section("[package]\n").is_err());
    }
}
