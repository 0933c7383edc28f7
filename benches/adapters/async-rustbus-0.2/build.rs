fn main() {
    lockfile::emit_library_version("async-rustbus", "0.2.");
}
