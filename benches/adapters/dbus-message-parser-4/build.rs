fn main() {
    lockfile::emit_library_version("dbus-message-parser", "4.");
}
