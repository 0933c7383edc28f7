# The source every Cargo build sees: the workspace under benches/ (what crane's
# filterCargoSources keeps: Rust and TOML files and Cargo.lock) plus the two
# repository files its tests read, ../../matrix.toml and
# docs/results.schema.json. Named "source", so that after unpacking the
# workspace is at source/benches (crane's FAQ "workspace not at source root").
{ craneLib, util }:
let
  root = toString ../.;
  relative = path: builtins.substring (builtins.stringLength root + 1) (builtins.stringLength (toString path)) (toString path);
  keep = path: type:
    let
      rel = relative path;
    in
    builtins.elem rel [ "matrix.toml" "docs" "docs/results.schema.json" "benches" ]
    || (util.hasPrefix "benches/" rel
    && rel != "benches/target"
    && !(util.hasPrefix "benches/target/" rel)
    && craneLib.filterCargoSources path type);
in
builtins.path {
  name = "source";
  path = ../.;
  filter = keep;
}
