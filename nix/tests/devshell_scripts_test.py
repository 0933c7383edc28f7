"""The dev shell's promise for the README's scripts: inside `nix develop`
(IN_NIX_SHELL set) scripts/quick.sh and scripts/build.sh install nothing;
the shell's inputs are the dependencies. Run with fake installers first on
PATH (apt-get, apt, sudo, dpkg, dpkg-query, pip, pip3, npm, and cargo, whose
`install` is an installation and whose build fails at once so the script
stops there) that record every call. The same run without IN_NIX_SHELL is
the control: host mode must install, so the fakes do see an installation.

    python3 nix/tests/devshell_scripts_test.py    (needs bash)
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
INSTALLERS = ["apt-get", "apt", "sudo", "dpkg", "dpkg-query", "pip", "pip3", "npm", "cargo"]
FAKE = r"""#!/bin/sh
printf '%s\n' "$(basename "$0") $*" >> "$FAKE_LOG"
case "$(basename "$0") $1" in
  "dpkg-query "*) exit 1 ;;   # nothing is installed
  "cargo build"*) exit 3 ;;   # the build stops the script
  "cargo --version"*|"cargo metadata"*) exit 3 ;;
esac
exit 0
"""


def run(script_args, nix_shell):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        for name in INSTALLERS:
            (bin_dir / name).write_text(FAKE)
            (bin_dir / name).chmod(0o755)
        log = tmp / "log"
        log.write_text("")
        env = {k: v for k, v in os.environ.items() if k != "IN_NIX_SHELL"}
        # Only the fakes and the system's basic tools: never a real installer.
        env.update(PATH=f"{bin_dir}:/usr/bin:/bin", HOME=str(tmp), FAKE_LOG=str(log))
        if nix_shell:
            env["IN_NIX_SHELL"] = "impure"
        p = subprocess.run(["bash", *script_args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        calls = log.read_text().splitlines()
        return p.returncode, p.stderr, calls


def installs(calls):
    return [c for c in calls if not c.startswith("cargo ") or c.startswith("cargo install")]


def main():
    problems = []

    def expect(name, cond, detail):
        print(f"{'ok  ' if cond else 'FAIL'} {name}")
        if not cond:
            problems.append(name)
            print("     " + detail.replace("\n", "\n     "))

    for script in (["scripts/quick.sh", "--adapters", "raw"], ["scripts/build.sh", "release", "--adapters", "raw"]):
        status, err, calls = run(script, nix_shell=True)
        expect(f"inside nix develop, {script[0]} installs nothing (it stops at the build)",
               not installs(calls) and any(c.startswith("cargo build") for c in calls),
               f"exit {status}\ninstaller calls: {json.dumps(installs(calls), indent=1)}\nall calls: {calls}\n{err[-1500:]}")

    status, err, calls = run(["scripts/quick.sh", "--adapters", "raw"], nix_shell=False)
    expect("the control: in host mode scripts/quick.sh installs (the fakes see apt-get)",
           any(c.split()[0] == "apt-get" and "install" in c.split() for c in calls),
           f"exit {status}\ncalls: {calls}\n{err[-1500:]}")

    print(f"devshell scripts: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
