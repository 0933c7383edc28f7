# The source every Cargo build sees: the workspace, benches/, with what crane's
# filterCargoSources keeps (Rust and TOML files, Cargo.lock), plus the data
# files the runner's tests read (runner/tests/fixtures/, runner/tests/snapshots/)
# and the program adapters they run (programs/),
# and without target/. The workspace is the root of the source, as crane expects it (its
# dependency build places Cargo.lock at the root of its dummy source).
{ craneLib, util }:
let
  root = toString ../benches;
  relative = path:
    let s = toString path; in
    builtins.substring (builtins.stringLength root + 1) (builtins.stringLength s) s;
in
builtins.path {
  name = "source";
  path = ../benches;
  filter = path: type:
    let
      rel = relative path;
    in
    rel != "target" && !(util.hasPrefix "target/" rel) && (
      craneLib.filterCargoSources path type
      || util.hasPrefix "runner/tests/fixtures/" rel
      || util.hasPrefix "runner/tests/snapshots/" rel
      # The program adapters (matrix.toml `program`), which the runner's tests run.
      || rel == "programs" || util.hasPrefix "programs/" rel
    );
}
