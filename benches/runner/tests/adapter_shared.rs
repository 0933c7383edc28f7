//! What several adapters compile lives in benches/adapter-shared/, not in one
//! adapter's `src/` reached by a sibling: editing one adapter must not silently
//! change another. Every `#[path = "..."]` under benches/adapters/*/src must
//! resolve into benches/adapter-shared/, every Cargo `[[bin]] path` and build
//! script must stay inside its own adapter, and every shared file must be
//! compiled by at least one adapter (no orphan that nothing builds).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use crate::common::*;

/// `a/b/../c` → `a/c`, without touching the file system (the target may not exist).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The string of every `#[path = "..."]` (also inside `cfg_attr(..., path = "...")`) in `text`.
fn path_attributes(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with("//") || !line.starts_with("#[") {
            continue;
        }
        // `path` as a whole word followed by `= "`: not `default_path = "..."`.
        for (at, _) in line.match_indices("path") {
            let before = line[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let rest = line[at + 4..].trim_start();
            let Some(rest) = rest.strip_prefix('=') else { continue };
            let Some(rest) = rest.trim_start().strip_prefix('"') else {
                continue;
            };
            let end = rest.find('"').expect("a closed string in #[path]");
            found.push(rest[..end].to_owned());
        }
    }
    found
}

/// Every `#[path]` in a Rust file under benches/adapters and benches/adapter-shared, as
/// (file, the file it names). rustc resolves the path of a module declared outside an
/// inline `mod { }` block against the directory of the file that declares it.
fn path_edges(ws: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut files = Vec::new();
    rust_files(&ws.join("adapters"), &mut files);
    rust_files(&ws.join("adapter-shared"), &mut files);
    let mut edges = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for target in path_attributes(&text) {
            let to = normalise(&file.parent().unwrap().join(&target));
            edges.push((file.clone(), to));
        }
    }
    edges
}

#[test]
fn the_path_attribute_parser_finds_both_forms() {
    let text = "#[path = \"../a.rs\"]\nmod a;\n// #[path = \"no.rs\"]\n#[proxy(default_path = \"/x\")]\n\
                #[cfg_attr(feature = \"x\", path = \"b.rs\")]\nmod b;\n";
    assert_eq!(path_attributes(text), ["../a.rs", "b.rs"]);
}

#[test]
fn every_path_attribute_in_an_adapter_points_into_adapter_shared() {
    let ws = workspace();
    let shared = normalise(&ws.join("adapter-shared"));
    let edges = path_edges(&ws);
    let wrong: Vec<String> = edges
        .iter()
        .filter(|(_, to)| !to.starts_with(&shared) || !to.is_file())
        .map(|(from, to)| format!("{} -> {}", from.strip_prefix(&ws).unwrap().display(), to.display()))
        .collect();
    assert!(
        wrong.is_empty(),
        "#[path] outside benches/adapter-shared/ (or to no file):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_adapter_manifest_builds_its_own_sources() {
    let ws = workspace();
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(ws.join("adapters")).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let manifest: toml::Table = text.parse().unwrap();
        let mut paths: Vec<String> = Vec::new();
        if let Some(bins) = manifest.get("bin").and_then(|b| b.as_array()) {
            paths.extend(bins.iter().filter_map(|b| b.get("path")?.as_str().map(str::to_owned)));
        }
        if let Some(build) = manifest
            .get("package")
            .and_then(|p| p.get("build"))
            .and_then(|b| b.as_str())
        {
            paths.push(build.to_owned());
        }
        for p in paths {
            if !normalise(&dir.join(&p)).starts_with(&dir) {
                wrong.push(format!("{}: {p}", dir.strip_prefix(&ws).unwrap().display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "adapter manifests that build another adapter's files:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_shared_file_is_compiled_by_some_adapter() {
    let ws = workspace();
    let shared = normalise(&ws.join("adapter-shared"));
    let mut files = Vec::new();
    rust_files(&shared, &mut files);
    assert!(!files.is_empty(), "no Rust file under {}", shared.display());
    let reached: BTreeSet<PathBuf> = path_edges(&ws).into_iter().map(|(_, to)| to).collect();
    let orphans: Vec<String> = files
        .iter()
        .map(|f| normalise(f))
        .filter(|f| !reached.contains(f))
        .map(|f| f.strip_prefix(&ws).unwrap().display().to_string())
        .collect();
    assert!(
        orphans.is_empty(),
        "shared files no adapter compiles:\n{}",
        orphans.join("\n")
    );
}
