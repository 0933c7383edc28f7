# matrix.toml, the single source of truth, as Nix data. The rest of nix/ and
# vm-tests/ take adapters and buses from here and never list them by hand.
let
  matrix = builtins.fromTOML (builtins.readFile ../matrix.toml);
in
assert matrix.schema == 1;
{
  # [[adapter]]: id (attribute name of the package), package (Cargo package
  # and binary name), path, library, baseline; `program` for an adapter in
  # another language (nix/programs.nix).
  adapters = matrix.adapter;

  # The adapters the flake builds: not those marked `unavailable_in = { nix =
  # "reason" }` (a library nixpkgs does not have: ruby-dbus). The runner,
  # prebuilt ($DBUS_MATRIX_PREBUILT), shows those rows with the reason and
  # their cells unsupported.
  nixAdapters = builtins.filter (a: !((a.unavailable_in or { }) ? nix)) matrix.adapter;

  # [[bus]]: id, nix (attribute of nixpkgs with the daemon), and for the
  # system-bus implementations NixOS can run, nixos_implementation
  # (the value of services.dbus.implementation).
  buses = matrix.bus;
  nixosBuses = builtins.filter (bus: bus ? nixos_implementation) matrix.bus;

  profiles = matrix.profile;

  # The file itself, copied to the store, for the wrapped runner and the tests.
  file = builtins.path { path = ../matrix.toml; name = "matrix.toml"; };
  # The schema of the results files it produces, for the tests.
  resultsSchema = builtins.path { path = ../docs/results.schema.json; name = "results.schema.json"; };
  # The committed results (a quick run of the whole matrix), which a test renders.
  committedResults = builtins.path { path = ../docs/results; name = "results"; };
}
