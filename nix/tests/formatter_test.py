"""`nix fmt` with no arguments formats the tree, on every Nix version.

Nix >= 2.25 runs the flake's formatter with no arguments at all
(NixOS/nix#11438; older Nix passed `.`), and nixpkgs-fmt given no path
formats stdin: a formatter that is plain nixpkgs-fmt waits on the terminal.
This executes the flake's formatter as `nix fmt` would, for every system: a
script (writeShellApplication: its text under `set -o errexit -o nounset -o
pipefail`, its runtimeInputs on PATH) or a package (its main program), with
this machine's programs of the same names standing in for nixpkgs' (the
host's nixpkgs-fmt). Run in a scratch tree of unformatted files, stdin an
open pipe (a terminal nobody types into):

- with no arguments it must finish and leave every file formatted;
- with a path, only that file.

    python3 nix/tests/formatter_test.py    (needs nix-instantiate, nixpkgs-fmt)
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
UNFORMATTED = "{x=1;y={z=2;};}\n"

EXPR = """
let f = import ./nix/tests/with-stubs.nix { }; in
builtins.mapAttrs (_: fmt: {
  kind = fmt.stubKind or "package";
  text = fmt.stubArgs.text or null;
  inputs = map (p: p.pname or p.name) (fmt.stubArgs.runtimeInputs or [ ]);
  main = fmt.meta.mainProgram or fmt.stubArgs.name or fmt.pname or fmt.name;
}) f.formatter
"""


def formatters():
    out = subprocess.run(
        ["nix-instantiate", "--eval", "--strict", "--json", "-E", EXPR], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out)


def host_program(name):
    path = shutil.which(name)
    if not path:
        raise SystemExit(f"{name} is not on PATH: it stands in for nixpkgs' {name} (cargo install --locked {name})")
    return path


def run_formatter(fmt, tree, args, work):
    """The formatter as `nix fmt -- ARGS` runs it in TREE: (exit status or 'timeout', stderr)."""
    env = dict(os.environ)
    if fmt["kind"] == "writeShellApplication":
        bindir = work / "inputs"
        bindir.mkdir(exist_ok=True)
        for name in fmt["inputs"]:
            target = bindir / name
            if not target.exists():
                target.symlink_to(host_program(name))
        script = work / fmt["main"]
        script.write_text("#!/usr/bin/env bash\nset -o errexit\nset -o nounset\nset -o pipefail\n" + fmt["text"])
        script.chmod(0o755)
        env["PATH"] = f"{bindir}:/usr/bin:/bin"
        argv = [str(script), *args]
    else:
        argv = [host_program(fmt["main"]), *args]
    # stdin stays open (nothing written, never closed) while it runs, as a
    # terminal nobody types into; its output goes to files (no pipe to fill).
    with open(work / "stdout", "w+") as out, open(work / "stderr", "w+") as err:
        proc = subprocess.Popen(argv, cwd=tree, env=env, stdin=subprocess.PIPE, stdout=out, stderr=err, text=True)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return "timeout", ""
        finally:
            proc.stdin.close()
        err.seek(0)
        return proc.returncode, err.read()


def formatted(path):
    return subprocess.run([host_program("nixpkgs-fmt"), "--check", str(path)], capture_output=True).returncode == 0


def main():
    passed = failed = 0

    def report(good, what):
        nonlocal passed, failed
        passed, failed = passed + bool(good), failed + (not good)
        print(f"{'ok  ' if good else 'FAIL'} {what}")

    for system, fmt in sorted(formatters().items()):
        with tempfile.TemporaryDirectory() as tmp:
            work = pathlib.Path(tmp)
            for case, args in (("no arguments", []), ("one path", ["a.nix"])):
                tree = work / case.replace(" ", "-")
                (tree / "sub").mkdir(parents=True)
                (tree / "a.nix").write_text(UNFORMATTED)
                (tree / "sub/b.nix").write_text(UNFORMATTED)
                status, err = run_formatter(fmt, tree, args, work)
                if status == "timeout":
                    report(False, f"{system}: `nix fmt` with {case} ({fmt['kind']} {fmt['main']}) waits on stdin: still running after 10 s")
                    continue
                want = {"a.nix": True, "sub/b.nix": not args}
                got = {f: formatted(tree / f) for f in want}
                good = status == 0 and got == want
                report(good, f"{system}: `nix fmt` with {case} ({fmt['kind']} {fmt['main']}): exit {status}, "
                       + ", ".join(f"{f} {'formatted' if g else 'unformatted'}" for f, g in got.items())
                       + ("" if good else f" (wanted {want}) {err.strip()[:200]}"))
    print(f"formatter: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
