# A stand-in for nixpkgs, for nix/tests/build-for-real.sh: nixpkgs' real
# `lib` (a checkout of nix-community/nixpkgs.lib that the script places in
# ./nixpkgs-lib of its copy of this directory; never committed) and a small
# package set whose builders run the same phases with the host's programs
# (./pkgs.nix). crane runs unmodified on top of it. Impure by nature: the
# host's tools are found through DBUS_MATRIX_STANDIN_HOST (`nix build --impure`).
{
  description = "dbus-matrix: a stand-in for nixpkgs (real lib, host tools)";

  outputs = _:
    let
      lib = import ./nixpkgs-lib/lib;
      system = "x86_64-linux";
    in
    {
      inherit lib;
      legacyPackages.${system} = import ./pkgs.nix { inherit lib system; };
    };
}
