fn main() {
    lockfile::emit_library_version("dbus", "0.9.");
}
