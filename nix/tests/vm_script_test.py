"""The VM tests' script (vm-tests/run-matrix.py, as vm-tests/default.nix
assembles it), run UNCHANGED against a local shim of the NixOS test driver's
`machine` (nix/tests/vm_shim.py): in private mount and PID namespaces, a real
dbus-daemon and then a real dbus-broker is the system bus at
/run/dbus/system_bus_socket with the flake's system.d policy, the runner and
the adapters this checkout built (benches/target/ci) are on PATH the way the
flake's wrapper provides them, and the matrix runs as the VM test's normal
user. Each test must pass, within its own run timeout.

Then the script's checks must reject broken runs: the real results file of
each run, mutated (a failed cell, a missing cell, a baseline with IPC cells,
a cell unsupported for uid 0, ...), replayed to the script by a machine that
answers from the recorded run.

    python3 nix/tests/vm_script_test.py [--eval-only]   (as root, from anywhere)

--eval-only: only what needs Nix (the scripts and their parameters, from the
flake with the stubs): the Nix 2.26 chroot has no buses and no build.
Needs: nix-instantiate, and for the real runs unshare, mount, setpriv,
dbus-daemon, dbus-broker-launch, dbus-send, pgrep (Debian: util-linux,
dbus, dbus-broker, procps) and `cargo build --profile ci` done in benches/
(scripts/test.sh does it first).
"""

import copy
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

REV = "0123456789abcdef0123456789abcdef01234567"
ROOT = pathlib.Path(__file__).resolve().parents[2]
DAEMONS = {"dbus": "dbus-daemon", "broker": "dbus-broker"}


def vm_tests():
    """{test name: {script, policy}} of every VM test check, from the flake with the stubs."""
    expr = (
        f'let f = import ./nix/tests/with-stubs.nix {{ rev = "{REV}"; }}; '
        "c = f.checks.x86_64-linux; in "
        "builtins.listToAttrs (map (n: { name = n; value = { script = c.${n}.stubArgs.testScript; "
        "policy = map (p: p.stubArgs.text) c.${n}.stubArgs.nodes.machine.services.dbus.packages; "
        # The revision the VM's wrapped runner records (runner.forChecks: a constant, not self.rev).
        "revision = (builtins.head c.${n}.stubArgs.nodes.machine.environment.systemPackages).env.DBUS_MATRIX_REVISION; }; }) "
        '(builtins.filter (n: builtins.substring 0 3 n == "vm-") (builtins.attrNames c)))'
    )
    out = subprocess.run(
        ["nix-instantiate", "--eval", "--strict", "--json", "-E", expr],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout
    return json.loads(out)


def params_of(script):
    """The params the script carries (its first json.loads line)."""
    for line in script.splitlines():
        if line.startswith("params = json.loads("):
            return json.loads(eval(line[len("params = json.loads(") : -1]))
    raise AssertionError("no params line in the test script")


def prebuilt_bin_dir(work, revision):
    """What the flake's wrapped runner has: a bin dir of every adapter the
    flake builds (nix/adapters.nix, nix/programs.nix), named by package, and
    a `dbus-matrix` on PATH that sets the wrapper's variables
    (nix/runner.nix). Cargo adapters are this checkout's ci build; program
    adapters run as host mode runs them, built once here, as the flake
    builds them once."""
    target = ROOT / "benches/target/ci"
    runner = target / "dbus-matrix"
    if not runner.is_file():
        raise SystemExit(f"{runner} is missing: build first (cd benches && cargo build --profile ci --workspace)")
    matrix = tomllib.loads((ROOT / "matrix.toml").read_text())
    bins = work / "adapters"
    path = work / "path"
    bins.mkdir()
    path.mkdir()
    programs_build = ROOT / "benches/target/programs"
    for a in matrix["adapter"]:
        if "nix" in a.get("unavailable_in", {}) or "path" not in a:
            continue
        dest = bins / a["package"]
        if "program" in a:
            program = ROOT / a["path"] / a["program"]
            # As the flake's wrapper runs its Python (nix/programs.nix:
            # makeWrapper of the interpreter with the program): here Debian's
            # interpreter stands in for nixpkgs', for a program that names
            # one (`#!/usr/bin/env NAME`); a launcher runs as it is.
            first = program.read_text().split("\n", 1)[0].split()
            interpreter = f"/usr/bin/{first[1]} " if first[:1] == ["#!/usr/bin/env"] else ""
            dest.write_text(
                "#!/bin/sh\nunset PYTHONPATH PYTHONHOME\n"
                f"DBUS_MATRIX_PROGRAM_BUILD_DIR={programs_build} exec {interpreter}{program} \"$@\"\n"
            )
            dest.chmod(0o755)
            # Built (C) or set up (a venv) once, as root, as the flake's build does.
            subprocess.run([str(dest), "list"], check=True, stdout=subprocess.DEVNULL)
        else:
            if not (target / a["package"]).is_file():
                raise SystemExit(f"{target / a['package']} is missing: build first (scripts/test.sh's build steps)")
            dest.symlink_to(target / a["package"])
    wrapper = path / "dbus-matrix"
    wrapper.write_text(
        "#!/bin/sh\n"
        f"export DBUS_MATRIX_BIN_DIR={bins} DBUS_MATRIX_PREBUILT=1 DBUS_MATRIX_MATRIX={ROOT / 'matrix.toml'}"
        f" DBUS_MATRIX_REVISION={revision}\n"
        f"exec {runner} \"$@\"\n"
    )
    wrapper.chmod(0o755)
    for d in (work, bins, path):
        d.chmod(0o755)
    return path


def real_run(test, script, policy, path, work):
    """The script against the shim; (passed, seconds, results dict or None, stderr tail)."""
    p = params_of(script)
    out = work / f"out-{test}"
    out.mkdir()
    script_file = work / f"{test}.py"
    script_file.write_text(script)
    spec = work / f"{test}.json"
    spec.write_text(
        json.dumps(
            {
                "implementation": p["implementation"],
                # The VM test's user (a script before users: root's run, under a name).
                "user": p.get("user") or "bench",
                "cores": p["cores"],
                "memory_mib": p["memory_mib"],
                "script": str(script_file),
                "policy": policy,
                "path": [str(path)],
                "out": str(out),
            }
        )
    )
    start = time.monotonic()
    done = subprocess.run(
        ["unshare", "--mount", "--pid", "--fork", "--mount-proc", "--propagation", "private",
         sys.executable, str(ROOT / "nix/tests/vm_shim.py"), str(spec)],
        capture_output=True,
        text=True,
        timeout=p["run_timeout"] + 120,
    )
    seconds = time.monotonic() - start
    files = sorted(out.glob("dbus-matrix-results/*.json"))
    results = json.loads(files[0].read_text()) if len(files) == 1 else None
    log = out / "dbus-matrix-results/run.log"
    tail = done.stderr.strip().splitlines()[-25:]
    if done.returncode != 0 and log.is_file():
        tail += ["run.log (last lines):"] + [l[:300] for l in log.read_text().splitlines()[-8:]]
    return done.returncode == 0, seconds, results, tail


class CommandFailed(Exception):
    pass


class ReplayMachine:
    """Answers the script's commands from a recorded real run: the
    implementation that ran, the normal user's uid, the runner's exit status
    and its results file (possibly mutated)."""

    def __init__(self, running, run_status, results, uid="1000"):
        self.running, self.run_status, self.results, self.uid = running, run_status, results, uid

    def start(self):
        pass

    def wait_for_unit(self, unit):
        pass

    def wait_for_file(self, path):
        pass

    def _run(self, cmd):
        if cmd.startswith("pgrep -x "):
            return (0, "1\n") if cmd.split()[-1] == self.running else (1, "")
        if cmd.startswith("id -u "):
            return 0, self.uid + "\n"
        if cmd.startswith("ls ") and cmd.endswith("/*.json"):
            return 0, cmd[3:].replace("*", "recorded") + "\n"
        if cmd.startswith("cat "):
            return 0, self.results if isinstance(self.results, str) else json.dumps(self.results)
        return 0, ""

    def succeed(self, cmd):
        status, out = self._run(cmd)
        if status != 0:
            raise CommandFailed(cmd)
        return out

    def fail(self, cmd):
        status, out = self._run(cmd)
        if status == 0:
            raise CommandFailed(f"expected to fail: {cmd}")
        return out

    def execute(self, cmd, timeout=900):
        if "dbus-matrix run" in cmd:
            return self.run_status, ""
        return self._run(cmd)

    def copy_from_vm(self, source, target_dir=""):
        pass


def replay(script, machine):
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(script, "<testScript>", "exec"), {"machine": machine, "__name__": "testScript"})


def mutations(p, results):
    """{what: mutate(results)}: each a run the script must reject, made from a real run."""
    cells = results["cells"]
    library = next(a for a in p["adapters"] if a not in p["baselines"])
    baseline = p["baselines"][0] if p["baselines"] else None
    ipc = next(c for c in cells if c.get("bus") == "system" and c["status"] == "ok")
    codec = next(c for c in cells if c.get("bus") is None)

    def drop(pred):
        return lambda r: r.update(cells=[c for c in r["cells"] if not pred(c)])

    m = {
        "schema_version 1": lambda r: r.update(schema_version=1),
        "no plan": lambda r: r.pop("plan"),
        "a plan without the system bus": lambda r: r["plan"].update(system_bus=False),
        "a plan of fewer adapters": lambda r: r["plan"]["resolved"].update(adapters=r["plan"]["resolved"]["adapters"][1:]),
        "a cell status 'skipped'": lambda r: r["cells"][0].update(status="skipped"),
        "an unsupported cell without reason": lambda r: r["cells"][0].update(status="unsupported", reason=None),
        "a failed cell": lambda r: next(c for c in r["cells"] if c == ipc).update(status="failed", reason="exit 1"),
        "a missing codec cell": drop(lambda c: c == codec),
        "a library's IPC cells missing": drop(lambda c: c["adapter"] == library and c.get("bus") == "system"),
        "an adapter with no ok cell": lambda r: [
            c.update(status="unsupported", reason="x") for c in r["cells"] if c["adapter"] == library
        ],
        "a cell outside the selection": lambda r: r["cells"].append(dict(codec, scenario="marshal/big-array")),
        "IPC cells over p2p only": lambda r: [c.update(bus="p2p") for c in r["cells"] if c.get("bus") == "system"],
        "a library's cell unsupported for uid 0": lambda r: next(c for c in r["cells"] if c == ipc).update(
            status="unsupported", reason="tokio-dbus 0.2.2 cannot authenticate as uid 0 (this run's user)"
        ),
        "mode 'host'": lambda r: r["environment"].update(mode="host"),
        "another revision": lambda r: r["run"].update(revision="dirty"),
        "cpus not the VM's": lambda r: r["environment"].update(cpus=64),
        "an incomplete run": lambda r: r["run"].update(complete=False),
    }
    if p["unavailable"]:
        m["an ok cell of an adapter unavailable in Nix"] = lambda r: next(
            c for c in r["cells"] if c["adapter"] == p["unavailable"][0]
        ).update(status="ok", reason=None)
    if baseline:
        m["a baseline with IPC cells"] = lambda r: r["cells"].append(dict(ipc, adapter=baseline))
        m["the baseline recorded as a library"] = lambda r: [
            a.update(baseline=False) for a in r["adapters"] if a["id"] == baseline
        ]
    return m


def main():
    eval_only = sys.argv[1:] == ["--eval-only"]
    if sys.argv[1:] not in ([], ["--eval-only"]):
        print(f"usage: {sys.argv[0]} [--eval-only]", file=sys.stderr)
        return 2
    tests = vm_tests()
    if not tests:
        print("no VM test checks found")
        return 1
    passed = failed = 0

    def report(good, what):
        nonlocal passed, failed
        passed, failed = passed + bool(good), failed + (not good)
        print(f"{'ok  ' if good else 'FAIL'} {what}", flush=True)

    for test, t in sorted(tests.items()):
        p = params_of(t["script"])
        good = p["strict"] and p["scenarios"] and p["profile"] == "smoke" and 0 < p["run_timeout"] < 600
        report(good, f"{test}: a strict smoke run of a scenario selection, run timeout under 600 s")
        user = p.get("user")
        report(user not in (None, "root") and len(t["policy"]) == 1, f"{test}: runs as a normal user ({user}), one policy package")
    if eval_only:
        print(f"vm-script (evaluation only): {passed} passed, {failed} failed")
        return 0 if failed == 0 else 1

    work = pathlib.Path(tempfile.mkdtemp(prefix="dbus-matrix-vm-shim-", dir="/var/tmp"))
    try:
        revisions = {t["revision"] for t in tests.values()}
        if len(revisions) != 1:
            raise SystemExit(f"the VM checks' runners record different revisions: {revisions}")
        path = prebuilt_bin_dir(work, revisions.pop())
        for test, t in sorted(tests.items()):
            p = params_of(t["script"])
            ok, seconds, results, tail = real_run(test, t["script"], t["policy"][0], path, work)
            report(ok, f"{test}: vm-tests/run-matrix.py against a real {DAEMONS[p['implementation']]} system bus as {p.get('user')}: "
                   f"{'passed' if ok else 'raised'} in {seconds:.0f} s (run timeout {p['run_timeout']} s)")
            if not ok:
                print("    " + "\n    ".join(tail))
            if results is None:
                report(False, f"{test}: no results file came back to mutate")
                continue
            if ok:
                print(f"    {len(results['cells'])} cells: "
                      + ", ".join(f"{n} {s}" for s in ("ok", "unsupported", "failed")
                                  if (n := sum(c['status'] == s for c in results['cells']))))
            base = copy.deepcopy(results)
            if not ok:
                continue
            # What Hydra plots: $out/nix-support/hydra-metrics, a line per ok cell (and
            # per instruction count), names and units in Hydra's alphabet.
            metrics = work / f"out-{test}" / "nix-support/hydra-metrics"
            lines = metrics.read_text().splitlines() if metrics.is_file() else []
            ok_cells = sum(c["status"] == "ok" for c in results["cells"])
            shaped = all(re.fullmatch(r"[A-Za-z0-9._-]+ [0-9]+\.[0-9] (ns|instructions)", line) for line in lines)
            report(ok_cells > 0 and len([l for l in lines if l.endswith(" ns")]) == ok_cells and shaped,
                   f"{test}: $out/nix-support/hydra-metrics: {len(lines)} lines for {ok_cells} ok cells, in Hydra's alphabet")
            running = DAEMONS[p["implementation"]]
            other = next(d for d in DAEMONS.values() if d != running)

            def expect(what, machine, accepted):
                try:
                    replay(t["script"], machine)
                    outcome = "passed"
                except Exception as e:  # the driver fails a test on any exception
                    outcome = f"raised {type(e).__name__}: {(str(e).splitlines() or [''])[0]}"
                    detail = [line.strip() for line in str(e).splitlines()[1:3]]
                    outcome += (" / " + " / ".join(detail)) if detail else ""
                report((outcome == "passed") == accepted, f"{test}: {what}: {outcome[:220]}")

            expect("the recorded run replayed is accepted", ReplayMachine(running, 0, base), True)
            expect("the other daemon running is rejected", ReplayMachine(other, 0, base), False)
            expect("the run as root is rejected", ReplayMachine(running, 0, base, uid="0"), False)
            expect("runner exit status 1 (a failed cell) is rejected", ReplayMachine(running, 1, base), False)
            expect("runner exit status 2 is rejected", ReplayMachine(running, 2, base), False)
            expect("a truncated results file is rejected", ReplayMachine(running, 0, json.dumps(base)[:200]), False)
            for what, mutate in mutations(p, base).items():
                r = copy.deepcopy(base)
                mutate(r)
                expect(f"{what} is rejected", ReplayMachine(running, 0, r), False)
    finally:
        if failed and os.environ.get("DBUS_MATRIX_VM_SHIM_KEEP"):
            print(f"kept {work} (DBUS_MATRIX_VM_SHIM_KEEP)")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"vm-script: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main())
