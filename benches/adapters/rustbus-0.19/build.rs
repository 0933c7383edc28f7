fn main() {
    lockfile::emit_library_version("rustbus", "0.19.");
}
