# dbus-matrix's flake outputs with the stub nixpkgs and crane as inputs,
# called the way Nix calls a flake's `outputs` (with `self`), but without the
# flake machinery: it works on any copy of the tree, tracked by git or not.
{ root ? ../.., rev ? null, dirtyRev ? null, rustcVersion ? "1.95.0" }:
let
  systems = [ "x86_64-linux" "aarch64-linux" ];
  nixpkgs = {
    lib = import ./stub-nixpkgs/lib.nix;
    legacyPackages = builtins.listToAttrs (map
      (system: { name = system; value = import ./stub-nixpkgs/pkgs.nix { inherit system rustcVersion; }; })
      systems);
  };
  crane = (import ./stub-crane/flake.nix).outputs { };
  flake = import (root + "/flake.nix");
  outputs = flake.outputs { inherit self nixpkgs crane; };
  self = outputs // { outPath = root; inherit outputs; }
    // (if rev == null then { } else { inherit rev; })
    // (if dirtyRev == null then { } else { inherit dirtyRev; });
in
outputs // { inherit nixpkgs; flakeInputs = flake.inputs; }
