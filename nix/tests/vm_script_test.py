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


def selection_cells(params):
    """A correct run of the checks' selection: every adapter x scenario, IPC
    over the system bus (ok) and p2p (unsupported); the last adapter has no
    property/get (unsupported, as dbus-bytestream-0.1)."""
    cells = []
    for adapter in params["adapters"]:
        for scenario in params["scenarios"]:
            if scenario.startswith(("marshal/", "demarshal/")):
                cells.append({"adapter": adapter, "scenario": scenario, "status": "ok"})
                continue
            status = "unsupported" if adapter == params["adapters"][-1] and scenario == "property/get" else "ok"
            cell = {"adapter": adapter, "scenario": scenario, "bus": "system", "status": status}
            if status != "ok":
                cell["reason"] = "not supported"
            cells.append(cell)
            cells.append({"adapter": adapter, "scenario": scenario, "bus": "p2p", "status": "unsupported", "reason": "no p2p"})
    return cells


def good_results(params):
    return {
        "format": "dbus-matrix-results",
        "schema_version": 2,
        "run": {"profile": params["profile"], "revision": params["revision"], "complete": True},
        "plan": {"profile": params["profile"]},
        "environment": {
            "mode": "nixos-vm",
            "cpus": params["cores"],
            "memory_bytes": (params["memory_mib"] - 200) * 1024 * 1024,
            "cpu_model": "QEMU Virtual CPU",
        },
        "cells": selection_cells(params)
        if params["strict"]
        else [
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

        # The checks are correctness runs of a selection, with a short timeout.
        good = p["strict"] and p["scenarios"] and p["profile"] == "smoke" and 0 < p["run_timeout"] < 600
        passed, failed = passed + bool(good), failed + (not good)
        print(f"{'ok  ' if good else 'FAIL'} {test}: a strict smoke run of a scenario selection, run timeout under 600 s")

        m = FakeMachine(daemon, 0, good_results(p))
        expect(f"{test}: a good run is accepted", script, m, True)
        run_cmd = [c for c in m.commands if "dbus-matrix run" in c]
        good = len(run_cmd) == 1 and all(
            s in run_cmd[0]
            for s in (
                "DBUS_MATRIX_MODE=nixos-vm",
                f"--profile {p['profile']}",
                "--system-bus",
                f"--scenarios {','.join(p['scenarios'])}",
            )
        ) and m.copied
        passed, failed = passed + bool(good), failed + (not good)
        print(f"{'ok  ' if good else 'FAIL'} {test}: runs the selection on the system bus and copies the results out")

        expect(f"{test}: the other daemon running is rejected", script, FakeMachine(other, 0, good_results(p)), False)
        expect(f"{test}: runner exit status 2 is rejected", script, FakeMachine(daemon, 2, good_results(p)), False)
        expect(f"{test}: runner exit status 1 (a failed cell) is rejected", script, FakeMachine(daemon, 1, good_results(p)), False)
        expect(f"{test}: a truncated results file is rejected", script, FakeMachine(daemon, 0, '{"format": '), False)
        mutations = {
            "schema_version 1": lambda r: r.update(schema_version=1),
            "no plan": lambda r: r.pop("plan"),
            "a cell status 'skipped'": lambda r: r["cells"][0].update(status="skipped"),
            "an unsupported cell without reason": lambda r: next(c for c in r["cells"] if c["status"] != "ok").pop("reason"),
            "a failed cell": lambda r: r["cells"][1].update(status="failed", reason="exit 1"),
            "a missing cell": lambda r: r["cells"].pop(0),
            "a cell outside the selection": lambda r: r["cells"].append({"adapter": "raw", "scenario": "marshal/big-array", "status": "ok"}),
            "an adapter with no ok cell": lambda r: [
                c.update(status="unsupported", reason="x") for c in r["cells"] if c["adapter"] == p["adapters"][0]
            ],
            "IPC cells over p2p only": lambda r: [c.update(bus="p2p") for c in r["cells"] if c.get("bus") == "system"],
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
