# NixOS VM tests: the matrix against the real system bus of a NixOS machine,
# one test per bus of matrix.toml with `nixos_implementation` (dbus-daemon:
# "dbus", dbus-broker: "broker"). Each boots one VM with a fixed size, runs
# `dbus-matrix run --system-bus` there, checks the results file and copies it
# out. `checks` run the smoke profile (`nix flake check`); `bench` runs the full
# profile and is only ever run by `nix run .#vm-bench`, outside the sandbox.
{ pkgs, matrix, buses, runner, revision, util }:
let
  # Fixed, so that runs on different hosts compare: the results record them
  # (the runner reads cpus, memory and CPU model inside the VM).
  vm = {
    cores = 2;
    memoryMiB = 4096;
  };

  mkTest = { bus, profile, globalTimeout, runTimeout }:
    let
      params = {
        inherit profile revision;
        bus = bus.id;
        implementation = bus.nixos_implementation;
        inherit (vm) cores;
        memory_mib = vm.memoryMiB;
        # Seconds the run may take inside the VM (null: no limit).
        run_timeout = runTimeout;
      };
    in
    pkgs.testers.runNixOSTest {
      name = "dbus-matrix-${bus.id}-${profile}";
      inherit globalTimeout;

      nodes.machine = {
        virtualisation.cores = vm.cores;
        virtualisation.memorySize = vm.memoryMiB;
        services.dbus.implementation = bus.nixos_implementation;
        services.dbus.packages = [ buses.systemPolicy ];
        environment.systemPackages = [ runner.default ];
      };

      # The parameters as JSON, then the script (vm-tests/run-matrix.py).
      testScript = ''
        import json

        params = json.loads(${builtins.toJSON (builtins.toJSON params)})
      '' + builtins.readFile ./run-matrix.py;

      passthru.dbusMatrix = params;
    };

  forBuses = profile: settings:
    util.mapToAttrs (bus: "vm-${bus.id}") (bus: mkTest ({ inherit bus profile; } // settings)) matrix.nixosBuses;
in
{
  checks = forBuses "smoke" { globalTimeout = 3600; runTimeout = 2700; };
  bench = forBuses "full" { globalTimeout = 48 * 3600; runTimeout = null; };
}
