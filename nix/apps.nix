# `nix run` entry points. Benchmarks are run here, as programs on the user's
# machine, never as derivations: a timing must not be a cached build result.
# `scripts` are also checks, so `nix flake check` builds them; building runs
# only `bash -n` (writeShellApplication's check at the pin: its shellcheck is
# a passthru test), so `texts` go to the app-shellcheck check
# (nix/checks.nix).
{ pkgs, runner, vmTests }:
let
  # `nix run`: the quick profile on this machine with the pinned adapters and
  # daemons; results in ./results. Extra arguments go to `dbus-matrix run`.
  quickArgs = {
    name = "dbus-matrix-quick";
    text = ''
      exec ${runner.default}/bin/dbus-matrix run --profile quick --out ./results "$@"
    '';
  };

  # `nix run .#compare -- OLD [NEW] [run flags]`: both revisions' matrices
  # and the comparison (nix/compare.sh; `nix` and `git` are the user's).
  compareArgs = {
    name = "dbus-matrix-compare";
    runtimeInputs = [ pkgs.coreutils pkgs.git ];
    text = builtins.readFile ./compare.sh;
  };

  busIds = builtins.attrNames vmTests.bench;
  driverCases = builtins.concatStringsSep "\n" (map
    (name: "    ${name}) echo ${vmTests.bench.${name}.driver}/bin/nixos-test-driver ;;")
    busIds);

  # `nix run .#vm-bench [-- vm-dbus-daemon ...]`: the full profile inside the
  # NixOS VM of each bus (default: all), run by the VM test driver outside the
  # sandbox (needs KVM); results copied to ./results/<test>/, with the test's
  # nix-support/hydra-metrics (a line per ok cell, for Hydra).
  vmBenchArgs = {
    name = "dbus-matrix-vm-bench";
    runtimeInputs = [ pkgs.coreutils ];
    passthru.tests = vmTests.bench;
    text = ''
      driver_for() {
        case "$1" in
      ${driverCases}
          *) echo "unknown VM test '$1'; known: ${toString busIds}" >&2; return 1 ;;
        esac
      }
      if [ "$#" -eq 0 ]; then
        set -- ${toString busIds}
      fi
      for test in "$@"; do
        driver=$(driver_for "$test")
        work=$(mktemp -d)
        echo "==> $test (profile full): $driver" >&2
        status=0
        "$driver" -o "$work" || status=$?
        mkdir -p "results/$test"
        if [ -d "$work/dbus-matrix-results" ]; then
          cp -r "$work/dbus-matrix-results/." "results/$test/"
        fi
        # The test's $out/nix-support/hydra-metrics: a line per ok cell.
        if [ -f "$work/nix-support/hydra-metrics" ]; then
          mkdir -p "results/$test/nix-support"
          cp "$work/nix-support/hydra-metrics" "results/$test/nix-support/hydra-metrics"
        fi
        rm -rf "$work"
        if [ "$status" -ne 0 ]; then
          echo "==> $test: the VM test failed (exit $status); what it produced is in results/$test/" >&2
          exit "$status"
        fi
        echo "==> $test: results in results/$test/" >&2
      done
    '';
  };
  appArgs = { default = quickArgs; vm-bench = vmBenchArgs; compare = compareArgs; };
  scripts = builtins.mapAttrs (_: pkgs.writeShellApplication) appArgs;
  quick = scripts.default;
  compare = scripts.compare;
  vmBench = scripts.vm-bench;
in
{
  inherit scripts;
  # What each script runs, as written (writeShellApplication's `text`).
  texts = builtins.mapAttrs (_: args: args.text) appArgs;

  apps.default = {
    type = "app";
    program = "${quick}/bin/dbus-matrix-quick";
    meta.description = "Run the matrix (quick profile) on this machine with the pinned adapters and daemons";
  };
  # The wrapped runner itself, for its other commands:
  # `nix run .#dbus-matrix -- compare OLD.json NEW.json`.
  apps.dbus-matrix = {
    type = "app";
    program = "${runner.default}/bin/dbus-matrix";
    meta.description = "The dbus-matrix runner, wrapped to use the pinned adapters and daemons";
  };
  apps.compare = {
    type = "app";
    program = "${compare}/bin/dbus-matrix-compare";
    meta.description = "Run the matrix of two revisions (OLD [NEW], default the checkout's HEAD) into separate directories and compare them";
  };
  apps.vm-bench = {
    type = "app";
    program = "${vmBench}/bin/dbus-matrix-vm-bench";
    meta.description = "Run the matrix (full profile) in the NixOS VM of each system bus; results in ./results";
  };
}
