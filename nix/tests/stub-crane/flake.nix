# Test stub of crane for offline evaluation (nix/tests/run.sh): mkLib with
# only the functions dbus-matrix's flake calls, as stub derivations that
# record their arguments (cargoExtraArgs, cargoArtifacts, ...).
{
  description = "dbus-matrix test stub: the part of crane the flake uses";

  outputs = _: {
    mkLib = pkgs: import ./lib.nix { inherit pkgs; };
  };
}
