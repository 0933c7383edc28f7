fn main() {
    lockfile::emit_library_version("zbus", "6.");
}
