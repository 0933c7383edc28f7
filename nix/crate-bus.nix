# A bus daemon that nixpkgs does not package (busd): built by the flake itself
# from the .crate that crates.io serves, the one matrix.toml names for host
# mode too (`cargo = "NAME@VERSION"`, `crate_sha256`).
#
# crane.downloadCargoPackage fetches and unpacks the .crate (fetchurl with
# sha256 = crate_sha256, the checksum crates.io's index and Cargo.lock record).
# crane.buildPackage builds it with the Cargo.lock the .crate ships, of which
# nix/<name>/Cargo.lock is a verbatim copy (nix/tests/run.sh compares them):
# crane vendors every dependency from its checksums through
# `cargoVendorDir = vendorCargoDeps { cargoLock; }`: given only the lock, it
# reads nothing else. Its default, vendorCargoDeps of all the arguments,
# also reads `src` (findCargoFiles: readDir, for .cargo/config*) even when
# cargoLock is given (crane's lib/vendorCargoDeps.nix, stored 7d5b46c1), and
# `src` here is a derivation: import from derivation, which fails
# `nix flake check --no-build` with allow-import-from-derivation = false.
{ craneLib, bus }:
let
  spec = builtins.match "([A-Za-z0-9_-]+)@([0-9][0-9A-Za-z.+-]*)" bus.cargo;
  name = builtins.elemAt spec 0;
  version = builtins.elemAt spec 1;

  src = craneLib.downloadCargoPackage {
    inherit name version;
    checksum = bus.crate_sha256;
    source = "registry+https://github.com/rust-lang/crates.io-index";
  };
in
if spec == null then throw "matrix.toml: bus ${bus.id}: cargo = \"${bus.cargo}\" is not NAME@VERSION"
else if !(bus ? crate_sha256) then throw "matrix.toml: bus ${bus.id}: cargo without crate_sha256"
else
  craneLib.buildPackage {
    inherit src version;
    pname = name;
    cargoLock = ./. + "/${name}/Cargo.lock";
    cargoVendorDir = craneLib.vendorCargoDeps { cargoLock = ./. + "/${name}/Cargo.lock"; };
    # The daemon only; the whole dependency graph is built once, here.
    cargoArtifacts = null;
    cargoExtraArgs = "--locked --bin ${name}";
    strictDeps = true;
    # Its own test suite starts buses and needs the session environment.
    doCheck = false;
    meta.mainProgram = name;
  }
