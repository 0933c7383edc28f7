// Records which rustc built the runner (the workspace, adapters included, is
// built in one go, so this is the adapters' rustc too).
fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DBUS_MATRIX_RUSTC={}", version.trim());
    println!("cargo:rerun-if-env-changed=RUSTC");
}
