fn main() {
    lockfile::emit_library_version("dbus-bytestream", "0.1.");
}
