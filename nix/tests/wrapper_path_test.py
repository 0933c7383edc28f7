"""`nix run` takes every program the runner executes from nixpkgs: the
wrapper (nix/runner.nix, packages.default) sets PATH to packages of the
pinned nixpkgs, and every program the runner's source executes by name is
provided by one of them, by the programs nix/tests/stub-nixpkgs/model.json
records for each package (with evidence).

What the runner executes by name, from the source of the runner, the bus
crate and the harness (their non-test code: before `#[cfg(test)]`):
`Command::new("NAME")`, and the commands of the shell scripts it runs with
`sh -c` (a literal starting `set -e;`, a raw literal `r#"set -e` of one
command a line, or the literal of the `format!` passed right after `"-c"`). Programs run by absolute path (adapters, daemons:
`Command::new(variable)`) are not looked up on PATH. Two are not needed
under the wrapper, each for its stated reason (below), and must still be
where the reason says.

    python3 nix/tests/wrapper_path_test.py    (needs nix-instantiate)
"""

import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ["benches/runner/src", "benches/bus/src", "benches/harness/src"]
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)
# A script kept as a raw string (bus/src/launch.rs BROKER_LAUNCHER: its paths
# reach the shell only as "$1"..., so the text is a constant).
RAW_LITERAL = re.compile(r'r#"(.*?)"#', re.S)
SHELL_BUILTINS = {"set", "exec", "command", "if", "then", "else", "fi", "cd", "echo", "export", "test", "[", "true", "false", "exit", "shift"}
# Executed by name, not needed under the wrapper: (file, why); the file must
# still show the reason.
NOT_UNDER_WRAPPER = {
    "git": ("benches/runner/src/environment.rs", "DBUS_MATRIX_REVISION"),  # the wrapper sets it; git only without it
    "cargo": ("benches/runner/src/unhacked.rs", "fn cargo_program"),  # build-times, --patch, pinned rows: a checkout's command (dev shell)
}


def shell_commands(script):
    """The programs a shell script runs (first word of each simple command)."""
    found = set()
    for part in re.split(r"\n|;|&&|\|\||\bthen\b|\belse\b|\bif\b|\$\(", script):
        words = [w for w in part.strip().split() if "=" not in w.split("/")[0] or w.startswith("-")]
        while words and words[0] in SHELL_BUILTINS:
            if words[0] == "command" and len(words) > 2 and words[1] == "-v":
                found.add(words[2])
                words = []
                break
            if words[0] == "exec":
                words = words[1:]
                continue
            words = []
        if words and re.fullmatch(r"[a-z][a-z0-9_-]*", words[0]):
            found.add(words[0])
    return found


def executed():
    """{program: [where]} the runner executes by name."""
    out = {}
    for d in SOURCES:
        for f in sorted((ROOT / d).rglob("*.rs")):
            rel = f.relative_to(ROOT).as_posix()
            text = f.read_text().split("#[cfg(test)]")[0]
            text = re.sub(r"//[^\n]*", "", text)
            for m in re.finditer(r'Command::new\("([^"]+)"\)', text):
                out.setdefault(m.group(1), []).append(rel)
            for m in re.finditer(r'Command::new\(cargo_program\(\)\)', text):
                out.setdefault("cargo", []).append(rel)
            for m in re.finditer(r'"sh",\s*"-c"', text):
                out.setdefault("sh", []).append(rel)
            scripts = [s for s in LITERAL.findall(text) if s.startswith("set -e;")]
            scripts += [s for s in RAW_LITERAL.findall(text) if s.startswith("set -e")]
            scripts += [m.group(1) for m in re.finditer(r'"-c"\]\)\s*\.arg\(format!\(\s*"((?:[^"\\]|\\.)*)"', text)]
            for script in scripts:
                for prog in shell_commands(script.replace("\\\n", " ")):
                    out.setdefault(prog, []).append(f"{rel} (sh -c)")
    return out


def wrapper():
    expr = (
        "let f = import ./nix/tests/with-stubs.nix { }; w = f.packages.x86_64-linux.default; in {"
        " packages = map (p: p.pname) (w.pathPackages or [ ]);"
        " bins = map (p: \"${p}/bin\") (w.pathPackages or [ ]);"
        " path = w.env.PATH or null; command = w.stubArgs.buildCommand; }"
    )
    out = subprocess.run(["nix-instantiate", "--eval", "--strict", "--json", "-E", expr], cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    model = json.loads((ROOT / "nix/tests/stub-nixpkgs/model.json").read_text())["attributes"]
    w = wrapper()
    provided = {}
    for pkg in w["packages"]:
        for prog in model.get(pkg, {}).get("programs", []):
            provided.setdefault(prog, pkg)
    problems = []
    if w["path"] is None or w["path"].split(":") != w["bins"]:
        problems.append(f"the wrapper's PATH is {w['path']!r}, not the bin/ of its pathPackages {w['bins']}")
    elif "--set PATH " not in w["command"]:
        problems.append("the wrapper does not --set PATH (it would take the user's)")
    progs = executed()
    for prog, where in sorted(progs.items()):
        if prog in provided:
            print(f"ok   {prog} ({', '.join(sorted(set(where)))}): from nixpkgs' {provided[prog]}")
        elif prog in NOT_UNDER_WRAPPER:
            file, reason = NOT_UNDER_WRAPPER[prog]
            if reason in (ROOT / file).read_text():
                print(f"ok   {prog} ({', '.join(sorted(set(where)))}): not run under the wrapper ({file}: {reason})")
            else:
                problems.append(f"{prog}: the reason it is not needed under the wrapper ({reason} in {file}) is gone")
        else:
            problems.append(f"{prog} ({', '.join(sorted(set(where)))}) is executed by name, and no package on the wrapper's PATH provides it")
    for required in ("unshare", "mount", "setpriv", "valgrind", "sh"):
        if required not in progs:
            problems.append(f"the scan no longer finds {required}: update nix/tests/wrapper_path_test.py to the runner's source")
    for p in problems:
        print(f"FAIL {p}")
    print(f"wrapper-path: {len(progs)} programs, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
