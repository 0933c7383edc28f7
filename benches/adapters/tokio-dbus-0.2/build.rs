fn main() {
    lockfile::emit_library_version("tokio-dbus", "0.2.");
}
