// Records which rustc built the runner (the workspace, adapters included, is
// built in one go, so this is the adapters' rustc too), and the git revision
// it was built from, so that a results file says what produced it even when
// its matrix.toml lies outside any checkout.
use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let dir = std::env::var("CARGO_MANIFEST_DIR").ok()?;
    let o = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DBUS_MATRIX_RUSTC={}", version.trim());
    println!("cargo:rerun-if-env-changed=RUSTC");

    // A build without .git (the Nix build, a source tarball) takes the
    // revision from the environment, else says `unknown`.
    let revision = git(&["rev-parse", "HEAD"])
        .or_else(|| std::env::var("DBUS_MATRIX_REVISION").ok())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DBUS_MATRIX_BUILT_FROM={revision}");
    println!("cargo:rerun-if-env-changed=DBUS_MATRIX_REVISION");
    // Rerun when HEAD moves: HEAD itself, the branch it points at, packed refs
    // (only files that exist: a missing one would rerun this on every build).
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--path-format=absolute", "--git-path", &name]) {
            if Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
}
