# crane.mkLib pkgs, as far as dbus-matrix uses it. Argument names are those of
# crane's API (lib/*.nix there); an argument not listed is an error here.
{ pkgs }:
let
  stub = import ./stub.nix { inherit (pkgs.stdenv.hostPlatform) system; };

  # Common to crane's derivation builders (mkCargoDerivation passes the rest
  # on to mkDerivation; upper-case names are environment variables).
  commonArgs = [
    "src"
    "sourceRoot"
    "cargoToml"
    "cargoLock"
    "postUnpack"
    "preCheck"
    "pname"
    "version"
    "strictDeps"
    "nativeBuildInputs"
    "buildInputs"
    "cargoArtifacts"
    "cargoExtraArgs"
    "doCheck"
    "postInstall"
    "meta"
    "passthru"
  ];

  builder = fn: { suffix, allowed ? [ ], required ? [ ] }: args0:
    let
      args = stub.checkArgs "crane.${fn}"
        {
          allowed = commonArgs ++ allowed;
          required = [ "src" "pname" "version" ] ++ required;
          env = true;
        }
        args0;
    in
    stub.mkDrv {
      kind = "crane.${fn}";
      name = "${args.pname}${suffix}-${args.version}";
      inherit args;
      passthru = args.passthru or { };
    };
in
{
  buildDepsOnly = builder "buildDepsOnly" { suffix = "-deps"; };
  buildPackage = builder "buildPackage" { suffix = ""; };
  cargoBuild = builder "cargoBuild" { suffix = ""; required = [ "cargoArtifacts" ]; };
  cargoClippy = builder "cargoClippy" { suffix = "-clippy"; allowed = [ "cargoClippyExtraArgs" ]; required = [ "cargoArtifacts" ]; };
  cargoFmt = builder "cargoFmt" { suffix = "-fmt"; allowed = [ "rustFmtExtraArgs" ]; };
  cargoNextest = builder "cargoNextest" { suffix = "-nextest"; allowed = [ "cargoNextestExtraArgs" ]; required = [ "cargoArtifacts" ]; };

  # crane's lib/downloadCargoPackage.nix: { name, version, checksum, ... }
  # (and urlForCargoPackage.nix, which it calls, needs `source` to pick the
  # registry): the unpacked .crate, fetched with sha256 = checksum.
  downloadCargoPackage = args0:
    let
      args = stub.checkArgs "crane.downloadCargoPackage"
        {
          allowed = [ "name" "version" "checksum" "source" ];
          required = [ "name" "version" "checksum" "source" ];
        }
        args0;
    in
    if builtins.match "[0-9a-f]{64}" args.checksum == null then throw "stub: crane.downloadCargoPackage: checksum is not a hex sha256"
    else if args.source != "registry+https://github.com/rust-lang/crates.io-index" then throw "stub: crane.downloadCargoPackage: source ${args.source} is not crates.io"
    else
      stub.mkDrv {
        kind = "crane.downloadCargoPackage";
        name = "cargo-package-${args.name}-${args.version}";
        inherit args;
      };

  # What crane's filterCargoSources keeps: directories, Rust and TOML files,
  # Cargo.lock and .cargo/config.
  filterCargoSources = path: type:
    let
      base = baseNameOf (toString path);
      parent = baseNameOf (dirOf (toString path));
    in
    type == "directory"
    || builtins.match ".*\\.(rs|toml)" base != null
    || base == "Cargo.lock"
    || (parent == ".cargo" && base == "config");
}
