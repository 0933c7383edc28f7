# The runner: `dbus-matrix` (the plain binary) and `default`, the same binary
# wrapped so that it uses only what this flake pins: its adapters, its bus
# daemons and its matrix.toml, and records the flake's revision.
{ pkgs, craneLib, workspace, matrix, adapters, buses, revision, util }:
let
  dbus-matrix = craneLib.buildPackage (workspace.commonArgs // {
    inherit (workspace) cargoArtifacts;
    src = workspace.packageSource ../benches/runner;
    pname = "dbus-matrix";
    cargoExtraArgs = "--locked -p dbus-matrix";
    doCheck = false;
    meta.mainProgram = "dbus-matrix";
  });

  # Every adapter binary of matrix.toml in one bin/.
  adapterBins = pkgs.symlinkJoin {
    name = "dbus-matrix-adapters-${workspace.version}";
    paths = builtins.attrValues adapters;
  };

  # Every program the runner executes by name, from nixpkgs, never from the
  # user's PATH (nix/tests/wrapper_path_test.py lists them from the runner's
  # source and fails on one no package here provides): util-linux (unshare,
  # mount, setpriv: the dbus-broker bus's private mount namespace, tracefs),
  # coreutils (mkdir, cat), bash (sh), valgrind (--instructions). Daemons,
  # adapters and the adapters' interpreters are absolute store paths.
  pathPackages = [ pkgs.util-linux pkgs.coreutils pkgs.bash pkgs.valgrind ];

  env = revision: buses.daemonEnv // {
    PATH = builtins.concatStringsSep ":" (map (p: "${p}/bin") pathPackages);
    DBUS_MATRIX_BIN_DIR = "${adapterBins}/bin";
    DBUS_MATRIX_MATRIX = "${matrix.file}";
    DBUS_MATRIX_REVISION = revision;
    # The adapters are prebuilt and their sources are not beside the store's
    # matrix.toml: the runner does not check the adapters' `path`.
    DBUS_MATRIX_PREBUILT = "1";
  };

  wrapped = name: revision:
    let
      e = env revision;
      setFlags = map (n: "--set ${n} ${util.escapeShellArg e.${n}}") (builtins.attrNames e);
    in
    pkgs.runCommand name
      {
        nativeBuildInputs = [ pkgs.makeWrapper ];
        passthru = { env = e; inherit adapterBins pathPackages; unwrapped = dbus-matrix; };
        meta.mainProgram = "dbus-matrix";
      }
      ''
        makeWrapper ${dbus-matrix}/bin/dbus-matrix $out/bin/dbus-matrix \
          ${builtins.concatStringsSep " \\\n    " setFlags}
      '';

  # What `nix run` runs: its results record the flake's revision.
  default = wrapped "dbus-matrix-wrapped-${workspace.version}" revision;

  # The same runner for the VM checks, with a fixed revision: a check's
  # derivation must not depend on the commit (self.rev), or every commit,
  # a docs-only one too, would boot both VMs again. A check's results are
  # not kept as benchmark results; vm-bench's (`default`) record the revision.
  checkRevision = "flake-check";
  forChecks = wrapped "dbus-matrix-wrapped-check-${workspace.version}" checkRevision;
in
{
  inherit dbus-matrix default forChecks checkRevision;
}
