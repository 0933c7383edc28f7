# `nix fmt`: nixpkgs-fmt on the whole tree when given no paths. Nix >= 2.25
# runs the formatter with no arguments (NixOS/nix#11438; older Nix passed
# `.`), and nixpkgs-fmt without a path formats stdin, so a bare `nix fmt`
# would wait on the terminal. `nix fmt -- FILE...` formats those files.
{ pkgs }:
pkgs.writeShellApplication {
  name = "dbus-matrix-fmt";
  runtimeInputs = [ pkgs.nixpkgs-fmt ];
  text = ''
    if [ "$#" -eq 0 ]; then
      set -- .
    fi
    exec nixpkgs-fmt "$@"
  '';
}
