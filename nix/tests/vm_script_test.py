"""The VM tests' script (vm-tests/run-matrix.py, as vm-tests/default.nix
assembles it) run against a fake NixOS test machine: no VM can boot here, but
the script's own logic (which daemon must run, the runner's exit status, the
validation of the results file) can be exercised, and must reject bad runs.

    python3 nix/tests/vm_script_test.py    (from the repository root; needs nix-instantiate)
"""

import contextlib
import io
import json
import os
import subprocess
import sys

REV = "0123456789abcdef0123456789abcdef01234567"


def test_scripts():
    """{test name: testScript} of every VM test check, from the flake with the stubs."""
    expr = (
        f'let f = import ./nix/tests/with-stubs.nix {{ rev = "{REV}"; }}; '
        "c = f.checks.x86_64-linux; in "
        "builtins.listToAttrs (map (n: { name = n; value = c.${n}.stubArgs.testScript; }) "
        '(builtins.filter (n: builtins.substring 0 3 n == "vm-") (builtins.attrNames c)))'
    )
    out = subprocess.run(
        ["nix-instantiate", "--eval", "--strict", "--json", "-E", expr],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


def params_of(script):
    """The params the script carries (its first json.loads line)."""
    for line in script.splitlines():
        if line.startswith("params = json.loads("):
            return json.loads(eval(line[len("params = json.loads(") : -1]))
    raise AssertionError("no params line in the test script")


def good_results(params):
    return {
        "format": "dbus-matrix-results",
        "schema_version": 1,
        "run": {"profile": params["profile"], "revision": params["revision"], "complete": True},
        "environment": {
            "mode": "nixos-vm",
            "cpus": params["cores"],
            "memory_bytes": (params["memory_mib"] - 200) * 1024 * 1024,
            "cpu_model": "QEMU Virtual CPU",
        },
        "cells": [
            {"adapter": "raw", "scenario": "marshal/mixed", "status": "ok"},
            {"adapter": "zbus-6", "scenario": "call/void", "bus": "system", "status": "ok"},
            {"adapter": "zbus-3", "scenario": "call/void", "bus": "system", "status": "failed", "reason": "exit 1"},
            {"adapter": "raw", "scenario": "call/void", "bus": "system", "status": "unsupported", "reason": "no IPC"},
        ],
    }


class CommandFailed(Exception):
    pass


class FakeMachine:
    """The few Machine methods the script uses, answering like a VM whose
    system bus is `running` and whose `dbus-matrix run` exits `run_status`
    after writing `results` (a dict, or raw text)."""

    def __init__(self, running, run_status, results):
        self.running, self.run_status, self.results = running, run_status, results
        self.commands, self.copied = [], []

    def start(self):
        pass

    def wait_for_unit(self, unit):
        pass

    def wait_for_file(self, path):
        pass

    def _run(self, cmd):
        if cmd.startswith("pgrep -x "):
            return (0, "1\n") if cmd.split()[-1] == self.running else (1, "")
        if cmd.startswith("ls ") and cmd.endswith("/*.json"):
            return 0, cmd[3:].replace("*", "2026-01-01T00-00-00Z-smoke") + "\n"
        if cmd.startswith("cat "):
            text = self.results if isinstance(self.results, str) else json.dumps(self.results)
            return 0, text
        return 0, ""

    def succeed(self, cmd):
        self.commands.append(cmd)
        status, out = self._run(cmd)
        if status != 0:
            raise CommandFailed(cmd)
        return out

    def fail(self, cmd):
        self.commands.append(cmd)
        status, out = self._run(cmd)
        if status == 0:
            raise CommandFailed(f"expected to fail: {cmd}")
        return out

    def execute(self, cmd, timeout=900):
        self.commands.append(cmd)
        if "dbus-matrix run" in cmd:
            return self.run_status, ""
        return self._run(cmd)

    def copy_from_vm(self, source, target_dir=""):
        self.copied.append(source)


def run_script(script, machine):
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(script, "<testScript>", "exec"), {"machine": machine, "__name__": "testScript"})


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    scripts = test_scripts()
    if not scripts:
        print("no VM test checks found")
        return 1
    passed = failed = 0

    def expect(name, script, machine, ok):
        nonlocal passed, failed
        try:
            run_script(script, machine)
            outcome = "passed"
        except Exception as e:  # the driver fails a test on any exception
            outcome = f"raised {type(e).__name__}: {(str(e).splitlines() or [''])[0]}"
        good = (outcome == "passed") == ok
        passed, failed = passed + good, failed + (not good)
        print(f"{'ok  ' if good else 'FAIL'} {name}: {outcome}")

    daemons = {"dbus": "dbus-daemon", "broker": "dbus-broker"}
    for test, script in sorted(scripts.items()):
        p = params_of(script)
        daemon = daemons[p["implementation"]]
        other = [d for d in daemons.values() if d != daemon][0]

        m = FakeMachine(daemon, 1, good_results(p))
        expect(f"{test}: a good run is accepted", script, m, True)
        run_cmd = [c for c in m.commands if "dbus-matrix run" in c]
        good = len(run_cmd) == 1 and all(
            s in run_cmd[0]
            for s in ("DBUS_MATRIX_MODE=nixos-vm", f"--profile {p['profile']}", "--system-bus")
        ) and m.copied
        passed, failed = passed + bool(good), failed + (not good)
        print(f"{'ok  ' if good else 'FAIL'} {test}: runs the smoke profile on the system bus and copies the results out")

        expect(f"{test}: the other daemon running is rejected", script, FakeMachine(other, 0, good_results(p)), False)
        expect(f"{test}: runner exit status 2 is rejected", script, FakeMachine(daemon, 2, good_results(p)), False)
        expect(f"{test}: a truncated results file is rejected", script, FakeMachine(daemon, 0, '{"format": '), False)
        mutations = {
            "schema_version 2": lambda r: r.update(schema_version=2),
            "a cell status 'skipped'": lambda r: r["cells"][0].update(status="skipped"),
            "a failed cell without reason": lambda r: r["cells"][2].pop("reason"),
            "no ok cell over the system bus": lambda r: r["cells"][1].update(bus="p2p"),
            "mode 'host'": lambda r: r["environment"].update(mode="host"),
            "another revision": lambda r: r["run"].update(revision="dirty"),
            "cpus not the VM's": lambda r: r["environment"].update(cpus=64),
            "an incomplete run": lambda r: r["run"].update(complete=False),
        }
        for what, mutate in mutations.items():
            r = good_results(p)
            mutate(r)
            expect(f"{test}: {what} is rejected", script, FakeMachine(daemon, 0, r), False)

    print(f"vm-script: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
