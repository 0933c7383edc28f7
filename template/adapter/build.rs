fn main() {
    // The exact version from Cargo.lock, reported by `list` and in every result.
    lockfile::emit_library_version("mylib", "1.");
}
