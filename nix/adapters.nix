# One package per adapter of matrix.toml (attribute = adapter id), each built
# with `cargo build -p <package>` on the shared dependency build; or, for an
# adapter whose directory holds a Cargo.lock (a Cargo workspace of its own,
# excluded from benches/: see matrix.toml's header), with
# `--manifest-path <path>/Cargo.toml` against that lockfile, with no shared
# dependency build (its dependencies are other versions). A program adapter
# (`program`: another language) is built by nix/programs.nix. Adapters marked
# unavailable in Nix (matrix.toml `unavailable_in.nix`) have no package.
{ craneLib, workspace, matrix, programs }:
let
  # matrix.toml's `path` is relative to the repository; the Cargo source is benches/.
  workspaceRelative = path:
    let prefix = "benches/"; n = builtins.stringLength prefix; in
    if builtins.substring 0 n path == prefix
    then builtins.substring n (builtins.stringLength path - n) path
    else throw "matrix.toml: adapter path ${path} is not under benches/";

  ownLockfile = adapter: ../. + "/${adapter.path}/Cargo.lock";
  hasOwnLockfile = adapter: builtins.pathExists (ownLockfile adapter);

  manifest = adapter: "${workspaceRelative adapter.path}/Cargo.toml";

  # Its own source: the workspace's manifests with the real files of what it
  # compiles only (nix/package-source.nix).
  buildArgs = adapter: { src = workspace.packageSource (../. + "/${adapter.path}"); } // (
    if hasOwnLockfile adapter then {
      # crane vendors from this lockfile (vendorCargoDeps' cargoLock), not from
      # the workspace's at the root of the source.
      cargoLock = ownLockfile adapter;
      # ...from the lockfile alone, without reading the source (see
      # nix/workspace.nix).
      cargoVendorDir = craneLib.vendorCargoDeps { cargoLock = ownLockfile adapter; };
      cargoArtifacts = null;
      # Built from its own directory, the root of its own workspace: crane's
      # install step runs a bare `cargo metadata` where the build runs, which
      # from the source's root resolves the main workspace, whose crates this
      # vendor directory lacks ("no matching package found", found by
      # nix/tests/build-for-real.sh). The harness and the lockfile crate it
      # uses by path are still beside it in the unpacked source.
      postUnpack = ''
        sourceRoot="$sourceRoot/${workspaceRelative adapter.path}"
      '';
      cargoExtraArgs = "--locked";
    } else {
      inherit (workspace) cargoArtifacts;
      cargoExtraArgs = "--locked -p ${adapter.package}";
    }
  );

  mkAdapter = adapter: craneLib.buildPackage (workspace.commonArgs // buildArgs adapter // {
    pname = adapter.package;
    # The workspace's tests run once, in the cargo-nextest check.
    doCheck = false;
    # crane installs the binaries named in cargo's build log; make sure the
    # adapter's own binary is among them.
    postInstall = ''
      if [ ! -x "$out/bin/${adapter.package}" ]; then
        echo "adapter ${adapter.id}: binary ${adapter.package} was not installed" >&2
        exit 1
      fi
    '';
    meta.mainProgram = adapter.package;
  });

  adapterAttr = adapter: {
    name = adapter.id;
    value = if adapter ? program then programs.package adapter else mkAdapter adapter;
  };
  cargoAdapters = builtins.filter (a: !(a ? program)) matrix.nixAdapters;
in
{
  packages = builtins.listToAttrs (map adapterAttr matrix.nixAdapters);
  # The adapters the workspace build does not contain, for the checks.
  ownLockfile = builtins.filter hasOwnLockfile cargoAdapters;
  inherit buildArgs manifest;
}
