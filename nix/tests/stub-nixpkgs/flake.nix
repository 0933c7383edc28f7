# Test stub of nixpkgs for offline evaluation (nix/tests/run.sh): only the
# attributes dbus-matrix's flake uses, as stub derivations that record their
# arguments. Anything else is a missing attribute, or "stub: ... not
# implemented" for an unknown argument.
{
  description = "dbus-matrix test stub: the part of nixpkgs the flake uses";

  outputs = _: {
    lib = import ./lib.nix;
    legacyPackages = {
      x86_64-linux = import ./pkgs.nix { system = "x86_64-linux"; };
      aarch64-linux = import ./pkgs.nix { system = "aarch64-linux"; };
    };
  };
}
