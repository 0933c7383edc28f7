//! The adapters of the repository's matrix.toml, for tests that go over every
//! adapter: they read the list from there (as the runner and Nix do) and name
//! only their exceptions, so a new `[[adapter]]` is tested without editing them.

use std::process::Command;

use super::{adapter_command, bin_dir, repo_matrix, repo_root};

/// Adapters without a transport: codec only, or the raw baseline.
pub const WITHOUT_A_TRANSPORT: [&str; 2] = ["dbus-message-parser-4", "raw"];

/// One `[[adapter]]` entry.
pub struct RepoAdapter {
    pub id: String,
    /// The Cargo package, which is also the binary's name.
    pub package: String,
    /// `program = "FILE"` (another language), relative to `path`.
    pub program: Option<String>,
    pub path: String,
}

impl RepoAdapter {
    /// How to run it: a Rust binary next to the runner, or a program from its
    /// source directory with the interpreter the runner supplies (never the
    /// first `python3` on PATH: pyenv's lacks the adapters' libraries).
    pub fn command(&self) -> Command {
        match &self.program {
            Some(p) => adapter_command(&repo_root().join(&self.path).join(p)),
            None => Command::new(bin_dir().join(&self.package)),
        }
    }
}

/// Every `[[adapter]]` of matrix.toml, in its order.
pub fn repo_adapters() -> Vec<RepoAdapter> {
    let m: toml::Value = toml::from_str(&std::fs::read_to_string(repo_matrix()).unwrap()).unwrap();
    let field = |a: &toml::Value, k: &str| a.get(k).and_then(|v| v.as_str()).map(str::to_owned);
    m["adapter"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| RepoAdapter {
            id: field(a, "id").unwrap(),
            package: field(a, "package").unwrap(),
            program: field(a, "program"),
            path: field(a, "path").unwrap(),
        })
        .collect()
}

/// Every adapter of matrix.toml but those [`WITHOUT_A_TRANSPORT`].
pub fn adapters_with_a_transport() -> Vec<RepoAdapter> {
    let all = repo_adapters();
    for id in WITHOUT_A_TRANSPORT {
        assert!(all.iter().any(|a| a.id == id), "{id} is no longer in matrix.toml");
    }
    all.into_iter()
        .filter(|a| !WITHOUT_A_TRANSPORT.contains(&a.id.as_str()))
        .collect()
}
