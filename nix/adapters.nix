# One package per adapter of matrix.toml (attribute = adapter id), each built
# with `cargo build -p <package>` on the shared dependency build.
{ craneLib, workspace, matrix }:
let
  mkAdapter = adapter: craneLib.buildPackage (workspace.commonArgs // {
    inherit (workspace) cargoArtifacts;
    pname = adapter.package;
    cargoExtraArgs = "--locked -p ${adapter.package}";
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

  adapterAttr = adapter: { name = adapter.id; value = mkAdapter adapter; };
in
builtins.listToAttrs (map adapterAttr matrix.adapters)
