# Small helpers built on builtins only, so that the flake needs no `lib` from
# nixpkgs (and the stub nixpkgs in nix/tests needs none either).
{
  # { name = key x; value = value x; } for every x of a list.
  mapToAttrs = key: value: xs:
    builtins.listToAttrs (map (x: { name = key x; value = value x; }) xs);

  # One attribute per system.
  forSystems = systems: f:
    builtins.listToAttrs (map (system: { name = system; value = f system; }) systems);

  hasPrefix = prefix: s:
    builtins.substring 0 (builtins.stringLength prefix) s == prefix;

  # POSIX shell single quoting.
  escapeShellArg = s: "'" + builtins.replaceStrings [ "'" ] [ "'\\''" ] (toString s) + "'";
}
