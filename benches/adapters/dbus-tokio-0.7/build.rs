fn main() {
    // The exact version from Cargo.lock, reported by `list` and in every result.
    lockfile::emit_library_version("dbus-tokio", "0.7.");
}
