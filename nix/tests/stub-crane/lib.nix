# crane.mkLib pkgs, as far as dbus-matrix uses it. Argument names are those of
# crane's API (lib/*.nix there); an argument not listed is an error here.
#
# Evaluation-time reads: this stub reads what crane reads while evaluating,
# so that what crane cannot do offline fails here too. crane at our pin
# (b8d87f76) is not stored; read at the nearest stored versions:
# - lib/mkCargoDerivation.nix (16a1f9bd): every builder's
#   `cargoVendorDir = args.cargoVendorDir or (vendorCargoDeps args)`;
#   cargoFmt.nix (2b2b564e) sets cargoVendorDir = null;
# - lib/vendorCargoDeps.nix (7d5b46c1): with `src`, findCargoFiles src
#   (its .cargo/config*), and `cargoLock or (src + "/Cargo.lock")`, read
#   (readFile) and parsed (fromTOML), even when cargoLock is given;
# - lib/findCargoFiles.nix (2b2b564e): builtins.readDir of src, recursively;
# - lib/buildDepsOnly.nix (263fe7c7) and lib/mkDummySrc.nix (02d34848): the
#   dummy source reads `src.origSrc` when src is a lib.sources/lib.fileset
#   source (_isLibCleanSourceWith), else src itself: findCargoFiles, then
#   every Cargo.toml (cleanCargoToml reads it);
# - lib/crateNameFromCargoToml.nix (13c6a4cd): src + "/Cargo.toml", only
#   without pname/version (which the stub requires).
# A derivation's output (downloadCargoPackage's) read this way is import from
# derivation: real Nix must build it during evaluation, an error with
# allow-import-from-derivation = false (nix/tests/run.sh sets it), and so here.
{ pkgs }:
let
  stub = import ./stub.nix { inherit (pkgs.stdenv.hostPlatform) system; };

  findCargoFiles = src:
    let
      walk = parentIsDotCargo: dir:
        let entries = builtins.readDir dir; in
        builtins.concatMap
          (name:
            let
              type = entries.${name};
              cur = dir + "/${name}";
            in
            if type == "directory" then walk (name == ".cargo") cur
            else if name == "Cargo.toml" then [{ path = cur; kind = "cargoTomls"; }]
            else if parentIsDotCargo && (name == "config" || name == "config.toml") then [{ path = cur; kind = "cargoConfigs"; }]
            else [ ])
          (builtins.attrNames entries);
      found = walk false src;
      of = kind: map (f: f.path) (builtins.filter (f: f.kind == kind) found);
    in
    { cargoTomls = of "cargoTomls"; cargoConfigs = of "cargoConfigs"; };

  vendorCargoDeps = args:
    let
      cargoConfigs = if args ? src then (findCargoFiles args.src).cargoConfigs else [ ];
      src = args.src or (throw "stub: crane.vendorCargoDeps: unable to find `src` attribute (give cargoLock or src)");
      cargoLock = args.cargoLock or (src + "/Cargo.lock");
      contents =
        if builtins.pathExists cargoLock then builtins.readFile cargoLock
        else throw "stub: crane.vendorCargoDeps: unable to find Cargo.lock at ${toString src}";
      lock = builtins.fromTOML contents;
      packages = lock.package or (throw "stub: crane.vendorCargoDeps: Cargo.lock missing [[package]] definitions");
    in
    stub.mkDrv {
      kind = "crane.vendorCargoDeps";
      name = "vendor-cargo-deps";
      args = {
        configs = map builtins.readFile cargoConfigs;
        lockPackages = toString (builtins.length packages);
      };
    };

  # What mkDummySrc reads of the source (buildDepsOnly, mkDummySrc): every
  # Cargo.toml under origSrc, and each crate's root and src/ listings.
  dummySrcReads = src:
    let
      origSrc = if src ? _isLibCleanSourceWith then src.origSrc else src;
      files = findCargoFiles origSrc;
      readCrate = p:
        let
          dir = dirOf p;
          root = builtins.readDir dir;
        in
        [ (builtins.fromTOML (builtins.readFile p)) root ]
        ++ (if (root.src or "") == "directory" then [ (builtins.readDir (dir + "/src")) ] else [ ]);
    in
    builtins.deepSeq (map readCrate files.cargoTomls) "read";

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
    "cargoVendorDir"
    # mkCargoDerivation (read at 16a1f9bd and 8306a577):
    # `doInstallCargoArtifacts = args.doInstallCargoArtifacts or true`;
    # buildPackage (06b1f7bd) defaults it to false, cargoNextest (1127ed25)
    # takes it as a named argument, default true.
    "doInstallCargoArtifacts"
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
      # Recorded, so instantiating the derivation forces what crane reads.
      args = args // {
        cargoVendorDir = if fn == "cargoFmt" then null else args.cargoVendorDir or (vendorCargoDeps args);
      } // (if fn == "buildDepsOnly" then { stubDummySrc = dummySrcReads args.src; } else { });
      passthru = args.passthru or { };
    };
in
{
  inherit vendorCargoDeps;

  # crane's lib/mkDummySrc.nix (read at 02d34848): `{ src, cargoLock ? null,
  # extraDummyScript ? "", ... }`; reads origSrc while evaluating (above),
  # and is a runCommand that copies the cleaned Cargo.lock, writes every
  # cleaned Cargo.toml with dummy targets, then runs extraDummyScript.
  mkDummySrc = args0:
    let
      args = stub.checkArgs "crane.mkDummySrc"
        { allowed = [ "src" "cargoLock" "extraDummyScript" ]; required = [ "src" ]; }
        args0;
    in
    stub.mkDrv {
      kind = "crane.mkDummySrc";
      name = "dummy-src";
      args = args // { stubDummySrc = dummySrcReads args.src; };
    };
  buildDepsOnly = builder "buildDepsOnly" { suffix = "-deps"; };
  buildPackage = builder "buildPackage" { suffix = ""; };
  cargoBuild = builder "cargoBuild" { suffix = ""; required = [ "cargoArtifacts" ]; };
  cargoClippy = builder "cargoClippy" { suffix = "-clippy"; allowed = [ "cargoClippyExtraArgs" ]; required = [ "cargoArtifacts" ]; };
  cargoFmt = builder "cargoFmt" { suffix = "-fmt"; allowed = [ "rustFmtExtraArgs" ]; };
  cargoNextest = builder "cargoNextest" { suffix = "-nextest"; allowed = [ "cargoNextestExtraArgs" ]; required = [ "cargoArtifacts" ]; };

  # crane's lib/devShell.nix (read at 004a48e8e96d9a033af974145c4e64659d47c76f):
  # `{ checks ? { }, inputsFrom ? [ ], packages ? [ ], ... }@args`, then
  # mkShell of the rest with inputsFrom = attrValues checks ++ inputsFrom and
  # packages = [ rustc cargo clippy rustfmt ] ++ packages; it removes
  # nativeBuildInputs, so passing it is an error here (it would be lost).
  devShell = args0:
    let
      args = stub.checkArgs "crane.devShell"
        { allowed = [ "checks" "inputsFrom" "packages" "name" "buildInputs" "shellHook" ]; env = true; }
        args0;
    in
    pkgs.mkShell (builtins.removeAttrs args [ "checks" "inputsFrom" ] // {
      inputsFrom = builtins.attrValues (args.checks or { }) ++ (args.inputsFrom or [ ]);
      packages = [ pkgs.rustc pkgs.cargo pkgs.clippy pkgs.rustfmt ] ++ (args.packages or [ ]);
    });

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
