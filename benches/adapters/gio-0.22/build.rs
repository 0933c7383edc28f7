fn main() {
    lockfile::emit_library_version("gio", "0.22.");
}
