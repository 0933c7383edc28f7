# The source every Cargo build sees: the workspace, benches/, with the files
# crane's filterCargoSources keeps (Rust and TOML files, Cargo.lock; it also
# keeps .cargo/config*, and benches/ has none: nix/workspace.nix checks), plus the data files the runner's tests read
# (runner/tests/fixtures/, runner/tests/snapshots/) and the program adapters
# they run (programs/), and without target/. The workspace is the root of the
# source, as crane expects it (its dependency build places Cargo.lock at the
# root of its dummy source).
#
# A lib.fileset source, not builtins.path with a filter: crane reads the
# source's files while evaluating (buildDepsOnly's dummy source), and reads
# `origSrc` (here benches/ in the flake's own source) when the source is a
# lib.sources/lib.fileset one; a filtered store path is not there to read on
# a store that has never built it (`nix flake check --no-build` on a fresh
# store: "path '/nix/store/…-source' is not valid", crane#118).
{ lib }:
let
  root = ../benches;
  cargoSources = lib.fileset.fileFilter
    (file: file.hasExt "rs" || file.hasExt "toml" || file.name == "Cargo.lock")
    root;
in
lib.fileset.toSource {
  inherit root;
  fileset = lib.fileset.difference
    (lib.fileset.unions [
      cargoSources
      ../benches/runner/tests/fixtures
      ../benches/runner/tests/snapshots
      # The program adapters (matrix.toml `program`), which the runner's tests run.
      ../benches/programs
    ])
    (lib.fileset.maybeMissing ../benches/target);
}
