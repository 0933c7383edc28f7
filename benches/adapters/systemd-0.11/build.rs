fn main() {
    lockfile::emit_library_version("systemd", "0.11.");
}
