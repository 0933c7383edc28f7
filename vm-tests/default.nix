# NixOS VM tests: the matrix against the real system bus of a NixOS machine,
# one test per bus of matrix.toml with `nixos_implementation` (dbus-daemon:
# "dbus", dbus-broker: "broker"). Each boots one VM with a fixed size, runs
# `dbus-matrix run --system-bus` there, checks the results file and copies it
# out.
# - `checks` (`nix flake check`, needs KVM) are correctness tests: every
#   adapter of matrix.toml runs a handful of cells (`scenarios` below) over
#   the VM's real system bus in the smoke profile; every adapter x scenario
#   must have a cell, none may fail, every adapter must have an ok cell.
#   Minutes, not the benchmark: the run has 120 s, the whole test 600 s
#   (boot included). The run limit comes from a measurement: the same script
#   against real dbus-daemon and dbus-broker system buses on a 2-core host
#   (nix/tests/vm_script_test.py) took 8-13 s per bus, whole script; 120 s
#   leaves a guest about 10 times that.
# - `bench` runs the full profile and is only ever run by `nix run .#vm-bench`,
#   outside the sandbox: a timing is never a cached build result.
{ pkgs, matrix, buses, runner, revision, util }:
let
  # Fixed, so that runs on different hosts compare: the results record them
  # (the runner reads cpus, memory and CPU model inside the VM).
  vm = {
    cores = 2;
    memoryMiB = 4096;
  };

  # One marshalling cell and the three IPC shapes (method call, property,
  # signal) per adapter: each library's IPC path over the system bus, once.
  # The user the matrix runs as inside the VM (users.users.<user>.isNormalUser).
  user = "bench";

  checkScenarios = [ "marshal/mixed" "call/void" "property/get" "signal/emit-receive" ];

  # The checks run runner.forChecks, whose recorded revision is a constant:
  # no check derivation depends on the commit (self.rev). The benchmark runs
  # runner.default and records the flake's revision.
  mkTest = { bus, profile, globalTimeout, runTimeout, scenarios, runnerPackage, revision }:
    let
      params = {
        inherit profile revision scenarios;
        # A correctness run (a scenario selection): no cell may fail.
        strict = scenarios != null;
        # The adapters the flake builds (not those unavailable in Nix, whose
        # cells are unsupported with the reason, and which have no ok cell).
        adapters = map (a: a.id) matrix.nixAdapters;
        # The adapters unavailable in Nix: in the runner's plan, every cell
        # unsupported with the reason.
        unavailable = map (a: a.id) (builtins.filter (a: (a.unavailable_in or { }) ? nix) matrix.adapters);
        # Adapters the runner plans no IPC cells for (matrix.toml `baseline`).
        baselines = map (a: a.id) (builtins.filter (a: a.baseline or false) matrix.nixAdapters);
        # The VM's normal user, who runs the matrix (not root: a library may
        # refuse uid 0, as tokio-dbus 0.2 does, and desktops run as users).
        inherit user;
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
        environment.systemPackages = [ runnerPackage ];
        users.users.${user}.isNormalUser = true;
      };

      # The parameters as JSON, then the script (vm-tests/run-matrix.py).
      testScript = ''
        import json
        import re

        params = json.loads(${builtins.toJSON (builtins.toJSON params)})
      '' + builtins.readFile ./run-matrix.py;

      passthru.dbusMatrix = params;
    };

  forBuses = profile: settings:
    util.mapToAttrs (bus: "vm-${bus.id}") (bus: mkTest ({ inherit bus profile; } // settings)) matrix.nixosBuses;
in
{
  checks = forBuses "smoke" {
    globalTimeout = 600;
    runTimeout = 120;
    scenarios = checkScenarios;
    runnerPackage = runner.forChecks;
    revision = runner.checkRevision;
  };
  bench = forBuses "full" {
    globalTimeout = 48 * 3600;
    runTimeout = null;
    scenarios = null;
    runnerPackage = runner.default;
    inherit revision;
  };
}
