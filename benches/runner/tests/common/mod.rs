//! Shared by the runner's integration tests. They drive the real
//! `dbus-matrix` binary and real adapter binaries, which must be built in
//! the same profile first: `cargo build --profile ci --workspace` then
//! `cargo nextest run --cargo-profile ci` (scripts/test.sh does both; the
//! release profile works too).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use harness::results::{CellStatus, ResultsFile};

mod cells;
mod program_matrix;
mod repo_adapters;
mod signals;
mod unavailable;
pub use cells::*;
pub use program_matrix::*;
pub use repo_adapters::*;
pub use signals::*;
pub use unavailable::*;

/// A path nextest sets at run time (the workspace where the tests run now,
/// e.g. the Nix check's /build/source), else the one of compile time: the
/// check runs test binaries built in another derivation, and
/// scripts/test.sh's sandbox step runs them from a copy of the workspace.
fn run_time_path(var: &str, compile_time: &str) -> PathBuf {
    std::env::var_os(var).map_or_else(|| PathBuf::from(compile_time), PathBuf::from)
}

/// The interpreter a program adapter runs with (`programs/<dir>/<file>`):
/// the one the runner supplies for the name its shebang gives
/// (harness::interpreter: Debian's `/usr/bin/python3` in a checkout on
/// Debian, `DBUS_MATRIX_PYTHON3` where set), or the interpreter a patched
/// shebang names (the Nix check's). Tests run their Python and Ruby with it,
/// and write it into the shebangs of the scripts they make, so they run what
/// the adapters run, never another `python3` first on PATH (pyenv's, without
/// the adapters' libraries).
pub fn interpreter_of(program: &str) -> PathBuf {
    let path = workspace().join("programs").join(program);
    if let Some(interpreter) = harness::interpreter::of_program(&path) {
        return interpreter;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let line = text.lines().next().unwrap_or_default();
    let interpreter = line
        .strip_prefix("#!")
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("{} has no shebang: {line:?}", path.display()));
    PathBuf::from(interpreter)
}

/// The command that starts the adapter `bin` as the runner starts it: a
/// program that names its interpreter by name runs with the one the runner
/// supplies (harness::interpreter), and every adapter gets the resolved
/// interpreters in its environment, as launchers expect.
pub fn adapter_command(bin: &Path) -> Command {
    let mut cmd = match harness::interpreter::of_program(bin) {
        Some(interpreter) => {
            let mut c = Command::new(interpreter);
            c.arg(bin);
            c
        }
        None => Command::new(bin),
    };
    cmd.envs(harness::interpreter::environment());
    cmd
}

pub fn runner_bin() -> PathBuf {
    run_time_path("CARGO_BIN_EXE_dbus-matrix", env!("CARGO_BIN_EXE_dbus-matrix"))
}

/// Where the adapters are: `$DBUS_MATRIX_BIN_DIR` or next to the runner.
pub fn bin_dir() -> PathBuf {
    let dir = std::env::var_os("DBUS_MATRIX_BIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| runner_bin().parent().unwrap().to_path_buf());
    assert!(
        dir.join("adapter-raw").is_file(),
        "adapter binaries are missing from {}: run `cargo build --profile ci --workspace` (or --release) in benches/ first",
        dir.display()
    );
    dir
}

/// The Cargo workspace (benches/, or the Nix check's source/).
pub fn workspace() -> PathBuf {
    run_time_path("CARGO_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// Where matrix.toml and docs/ are: the directory above the workspace.
pub fn repo_root() -> PathBuf {
    workspace().join("..").canonicalize().unwrap()
}

pub fn repo_matrix() -> PathBuf {
    repo_root().join("matrix.toml")
}

pub fn dbus_matrix(args: &[&str]) -> Command {
    let mut c = Command::new(runner_bin());
    c.arg("--bin-dir").arg(bin_dir()).args(args);
    c.env_remove("DBUS_MATRIX_MATRIX");
    c.env_remove("DBUS_MATRIX_WORKSPACE");
    c
}

/// `dbus-matrix run --profile smoke --quiet --out OUT ARGS…` on the
/// repository's matrix.toml and adapters.
pub fn smoke_run_of_repo(out: &Path, args: &[&str]) -> Command {
    let mut c = smoke_run_of(&repo_matrix(), out);
    c.args(args);
    c
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("dbus-matrix-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The one results file in `dir`.
pub fn results_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(
        files.len(),
        1,
        "expected one results file in {}: {files:?}",
        dir.display()
    );
    files[0].clone()
}

/// Validates against docs/results.schema.json and the invariants the schema
/// cannot express; returns the parsed file.
pub fn validate(path: &Path) -> ResultsFile {
    let schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo_root().join("docs/results.schema.json")).unwrap()).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let validator = jsonschema::validator_for(&schema).expect("the schema itself is valid");
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{} violates the schema:\n{}",
        path.display(),
        errors.join("\n")
    );
    let r: ResultsFile = serde_json::from_value(doc).unwrap();
    for c in &r.cells {
        assert!(
            r.adapters.iter().any(|a| a.id == c.adapter),
            "cell of unknown adapter {}",
            c.adapter
        );
        if let Some(m) = c.measurement() {
            let e = &m.wall.median_ns;
            assert!(
                e.lower <= e.point && e.point <= e.upper,
                "{} {}: CI does not contain the median",
                c.adapter,
                c.scenario
            );
        }
    }
    let mut keys: Vec<_> = r.cells.iter().map(|c| c.key()).collect();
    keys.sort();
    let n = keys.len();
    keys.dedup();
    assert_eq!(n, keys.len(), "duplicate cells");
    r
}

pub fn status_of(r: &ResultsFile, adapter: &str, scenario: &str) -> CellStatus {
    r.cells
        .iter()
        .find(|c| c.adapter == adapter && c.scenario == scenario)
        .unwrap_or_else(|| panic!("no cell {adapter} {scenario}"))
        .status()
}

/// A matrix of fault adapters (symlinks to the fault-adapter binary, which
/// misbehaves according to the name it is run under).
pub struct FaultSetup {
    pub dir: TempDir,
    pub matrix: PathBuf,
    pub bin_dir: PathBuf,
}

pub fn fault_setup(tag: &str, adapters: &[&str], scenarios: &[&str]) -> FaultSetup {
    fault_setup_with_buses(tag, adapters, scenarios, &[])
}

pub fn fault_setup_with_buses(tag: &str, adapters: &[&str], scenarios: &[&str], buses: &[&str]) -> FaultSetup {
    let dir = TempDir::new(tag);
    let bins = dir.path().join("bin");
    std::fs::create_dir_all(&bins).unwrap();
    let fault_bin = bin_dir().join("fault-adapter");
    assert!(
        fault_bin.is_file(),
        "fault-adapter is not built: cargo build --release --workspace"
    );
    let mut toml = String::from("schema = 1\n");
    // The crate every fault adapter is built from (the runner checks that `path` exists).
    let crate_dir = workspace().join("testing/fault-adapter");
    let crate_dir = crate_dir.display();
    for a in adapters {
        std::os::unix::fs::symlink(&fault_bin, bins.join(a)).unwrap();
        toml += &format!("[[adapter]]\nid = \"{a}\"\npackage = \"{a}\"\npath = \"{crate_dir}\"\nlibrary = \"fault\"\n");
    }
    for s in scenarios {
        toml += &format!("[[scenario]]\nid = \"{s}\"\n");
    }
    for b in buses {
        toml += &format!("[[bus]]\nid = \"{b}\"\n");
    }
    toml += "[profile.smoke]\nsample_size = 10\nwarm_up = 0.05\nmeasurement = 0.1\nnresamples = 1000\n";
    let matrix = dir.path().join("matrix.toml");
    std::fs::write(&matrix, toml).unwrap();
    FaultSetup {
        dir,
        matrix,
        bin_dir: bins,
    }
}

impl FaultSetup {
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(runner_bin());
        c.arg("--matrix")
            .arg(&self.matrix)
            .arg("--bin-dir")
            .arg(&self.bin_dir)
            .args(args);
        c
    }

    /// The path an adapter runs under (unique to this test, unlike its name).
    pub fn bin(&self, adapter: &str) -> String {
        self.bin_dir.join(adapter).display().to_string()
    }

    pub fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }
}

/// Processes whose command line mentions `needle` (zombies excluded).
pub fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = e.file_name().to_string_lossy().to_string();
        if !pid.chars().all(|c| c.is_ascii_digit()) || pid == std::process::id().to_string() {
            continue;
        }
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmd.contains(needle) && !stat.contains(") Z ") {
            found.push(format!("{pid}: {cmd}"));
        }
    }
    found
}

/// One smoke run of the setup (`fault-ok` for compare and history); `slowed` makes it do ~1 ms of extra work per
/// operation (FAULT_ADAPTER_AS=fault-slow) under the same adapter id.
pub fn smoke_run(setup: &FaultSetup, name: &str, slowed: bool) -> PathBuf {
    let out = setup.dir.path().join(name);
    let mut c = setup.command(&["run", "--profile", "smoke", "--quiet", "--out", out.to_str().unwrap()]);
    if slowed {
        c.env("FAULT_ADAPTER_AS", "fault-slow");
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{name}:\n{}", text(&o));
    results_file(&out)
}
