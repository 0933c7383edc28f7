# `nix develop`: the pinned toolchain, the bus daemons and the test tools.
{ pkgs }:
pkgs.mkShell {
  packages = [
    pkgs.rustc
    pkgs.cargo
    pkgs.clippy
    pkgs.rustfmt
    pkgs.pkg-config
    pkgs.dbus
    pkgs.dbus-broker
    pkgs.busd
    pkgs.valgrind
    pkgs.cargo-nextest
    pkgs.deadnix
    pkgs.nixpkgs-fmt
  ];
  # libdbus-1 for the dbus-0.9 adapter, found by pkg-config.
  buildInputs = [ pkgs.dbus.dev ];
}
