# `nix develop`: the pinned toolchain, the bus daemons and the test tools.
{ pkgs, buses }:
pkgs.mkShell {
  packages = [
    pkgs.rustc
    pkgs.cargo
    pkgs.clippy
    pkgs.rustfmt
    pkgs.pkg-config
    (buses.package "dbus-daemon")
    (buses.package "dbus-broker")
    (buses.package "busd")
    pkgs.valgrind
    pkgs.cargo-nextest
    pkgs.deadnix
    pkgs.nixpkgs-fmt
  ];
  # libdbus-1 for the dbus-0.9 adapter, found by pkg-config.
  buildInputs = [ pkgs.dbus.dev ];
}
