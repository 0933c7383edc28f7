# stdenv of the stand-in: mkDerivation makes a derivation that the host's
# bash builds with ./setup.sh (the generic builder) and the initial path
# (host coreutils, findutils, sed, grep, tar, gzip, ..., gcc); the platform
# attributes come from the real nixpkgs lib (lib.systems.elaborate).
{ lib, system, shell, initialPath, cc }:
let
  platform = lib.systems.elaborate system;
  dependencyAttrs = [ "nativeBuildInputs" "buildInputs" "depsBuildBuild" "propagatedBuildInputs" "propagatedNativeBuildInputs" ];
  cleanDependencies = args: builtins.mapAttrs
    (name: value: if builtins.elem name dependencyAttrs then builtins.filter (d: d != null) (lib.flatten value) else value)
    args;

  mkDerivation = fnOrAttrs:
    let
      args0 = if builtins.isFunction fnOrAttrs then lib.fix fnOrAttrs else fnOrAttrs;
      args = cleanDependencies args0;
      env = args.env or { };
      outputs = args.outputs or [ "out" ];
      name = args.name or "${args.pname}-${args.version}";
      passthru = args.passthru or { };
      drv = derivation (builtins.removeAttrs args [ "passthru" "meta" "env" "pos" ] // env // {
        inherit name system outputs;
        builder = shell;
        args = [ "-e" ./default-builder.sh ];
        standinSetup = ./setup.sh;
        standinInitialPath = initialPath;
      });
      # overrideAttrs (prev: { ... }) or (final: prev: { ... }); `final` is
      # approximated by the previous attributes.
      overrideAttrs = f:
        let r = f args0; in
        mkDerivation (args0 // (if builtins.isFunction r then r args0 else r));
    in
    if args.__structuredAttrs or false then throw "stand-in stdenv.mkDerivation (${name}): __structuredAttrs is not implemented"
    else drv // passthru // { meta = args.meta or { }; inherit passthru overrideAttrs; };
in
{
  inherit mkDerivation shell cc;
  hostPlatform = platform;
  buildPlatform = platform;
  targetPlatform = platform;
  inherit (platform) isLinux isDarwin system;
  # nixpkgs' writeShellApplication checks its script with this.
  shellDryRun = "${shell} -n -O extglob";
}
