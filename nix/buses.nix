# The bus daemons: the package of each bus of matrix.toml (its `nix`, an
# attribute of nixpkgs, or its `cargo`, a crate the flake builds itself:
# nix/crate-bus.nix), the variables that pin them for the runner, and the
# system-bus policy the NixOS VM tests install.
{ pkgs, craneLib, matrix, util }:
let
  # Each attribute of nixpkgs named here is in nix/tests/stub-nixpkgs/model.json.
  packageOf = bus:
    if bus ? nix then pkgs.${bus.nix}
    else if bus ? cargo then import ./crate-bus.nix { inherit craneLib bus; }
    else throw "matrix.toml: bus ${bus.id} has neither `nix` nor `cargo`";
  packages = util.mapToAttrs (bus: bus.id) packageOf (builtins.filter (bus: bus ? nix || bus ? cargo) matrix.buses);
  package = id: packages.${id};

  # Same values as LIMITS in benches/bus/src/config.rs (the private buses), so
  # the system bus in the VM runs the matrix under the same limits; above
  # all max_match_rules_per_connection, 512 by default on a system bus and
  # 10000 in signal/nonmatching-rules/10000. dbus-daemon applies <limit> from
  # system.d files; dbus-broker has its own accounting and ignores them.
  limits = [
    [ "max_incoming_bytes" 1000000000 ]
    [ "max_outgoing_bytes" 1000000000 ]
    [ "max_message_size" 134217728 ]
    [ "max_completed_connections" 2048 ]
    [ "max_connections_per_user" 2048 ]
    [ "max_match_rules_per_connection" 20000 ]
    [ "max_replies_per_connection" 50000 ]
    [ "max_names_per_connection" 64 ]
    [ "reply_timeout" 30000 ]
  ];
  limitLines = builtins.concatStringsSep "\n" (map
    (l: "  <limit name=\"${builtins.elemAt l 0}\">${toString (builtins.elemAt l 1)}</limit>")
    limits);

  # The name adapter `id`'s server owns: service_name() in
  # benches/runner/src/run/bus_session.rs (matrix ids are checked to be [A-Za-z0-9.-]).
  serviceName = id: "io.killing.spark.Bench.${builtins.replaceStrings [ "-" "." ] [ "_" "_" ] id}";
  # One rule per callable name: dbus-broker has no send_destination_prefix. Each
  # adapter's service, and the names its client process owns in the application
  # families (callable_names() in benches/runner/src/run/bus_session.rs).
  sendLines = builtins.concatStringsSep "\n" (builtins.concatMap
    (a: map (n: "    <allow send_destination=\"${n}\"/>")
      [ (serviceName a.id) "${serviceName a.id}.Sink" "${serviceName a.id}.Proxied" ])
    matrix.adapters);
in
{
  inherit package packages serviceName;

  # The runner takes each daemon from these (else from PATH); the wrapped
  # runner and the cargo-nextest check set them to the pinned packages.
  daemonEnv = {
    DBUS_MATRIX_DBUS_DAEMON = "${package "dbus-daemon"}/bin/dbus-daemon";
    DBUS_MATRIX_DBUS_BROKER_LAUNCH = "${package "dbus-broker"}/bin/dbus-broker-launch";
    DBUS_MATRIX_BUSD = "${package "busd"}/bin/busd";
  };

  # For services.dbus.packages: lets every local user own and call the
  # benchmark services (io.killing.spark.Bench.<adapter>) on the system bus.
  systemPolicy = pkgs.writeTextDir "share/dbus-1/system.d/dbus-matrix.conf" ''
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <!-- dbus-matrix: the benchmark services on the system bus (NixOS VM tests). -->
    <busconfig>
      <policy context="default">
        <allow own_prefix="io.killing.spark"/>
    ${sendLines}
      </policy>
    ${limitLines}
    </busconfig>
  '';
}
