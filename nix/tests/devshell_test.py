"""`nix develop` is the build environment: every pkg-config module the
crates' build scripts probe and every program the tests, scripts/test.sh and
nix/tests/run.sh run by name is provided by an input of the dev shell, by
what nix/tests/stub-nixpkgs/model.json records for each package (the output
that holds its pkg-config files, `pkg_config`, and its programs, `programs`
in `programs_output`, default the first output; with evidence), plus what
every mkShell has (stdenv: its common-path.nix and the C compiler).

What is required is derived, not listed:
- pkg-config modules: every package of benches/Cargo.lock (and the
  adapters' own lockfiles) whose build.rs in cargo's registry source probes
  pkg-config (a package that depends on pkg-config or system-deps):
  `.probe("NAME")`, `.probe(VAR)` with VAR's literal default,
  or `system_deps::Config::new().probe()` with the crate's
  [package.metadata.system-deps] names;
- programs: the tests' `Command::new("NAME")`, `tool("NAME", ...)` (the
  real-client tests' runner) and PATH lookups (`d.join("NAME")` after
  `var_os("PATH")`); the commands of scripts/test.sh and scripts/build.sh
  (cargo subcommands as their programs); the tools nix/tests/run.sh `need`s
  and the programs nix/tests/*.py run (`["NAME", ...]`); and every
  absolute /usr program a test runs or writes into a shebang, which no
  input can provide.

The inputs: the shell's packages, buildInputs and nativeBuildInputs, and
those of every derivation in its inputsFrom (mkShell merges them), from the
flake evaluated against the stubs. Its environment must also be the
cargo-nextest check's for what the tests read (the daemons, the dbus-fast
Python, GI_TYPELIB_PATH).

    python3 nix/tests/devshell_test.py    (needs nix-instantiate and cargo's registry source: cargo fetch)
"""

import glob
import json
import os
import pathlib
import re
import subprocess
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOCKFILES = ["benches/Cargo.lock", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "benches/adapters").glob("*/Cargo.lock"))]
TEST_SOURCES = ["benches/runner/tests", "benches/bus/tests"]
SCRIPTS = ["scripts/test.sh", "scripts/build.sh"]
# Run by name, and not the dev shell's to provide: (why).
NOT_FROM_THE_SHELL = {
    "nix": "`nix develop` is itself run by Nix: the shell keeps the user's PATH after its inputs",
    "nix-instantiate": "installed with nix (above)",
    "/usr/bin/env": "named in program adapters' shebangs (`#!/usr/bin/env NAME`), never run: the runner and the tests supply the interpreter themselves (harness::interpreter)",
    "apt-get": "nix/tests/devshell_scripts_test.py puts a recording fake of it first on PATH; no real one runs",
}
# The environment the tests read, which the shell must set as the check does.
SHARED_ENV = ["DBUS_MATRIX_DBUS_DAEMON", "DBUS_MATRIX_DBUS_BROKER_LAUNCH", "DBUS_MATRIX_BUSD", "DBUS_MATRIX_DBUS_FAST_PYTHON", "DBUS_MATRIX_PYTHON3", "DBUS_MATRIX_RUBY", "GI_TYPELIB_PATH", "DBUS_MATRIX_BUILD_MODE"]
PROGRAM = re.compile(r"[a-z][a-z0-9_.+-]*")


def registry_source(name, version):
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    found = glob.glob(f"{home}/registry/src/*/{name}-{version}")
    return pathlib.Path(found[0]) if found else None


def probed_modules(src):
    """The pkg-config modules src/build.rs probes, or None if it probes none."""
    build = src / "build.rs"
    if not build.exists():
        return None
    text = build.read_text()
    if not re.search(r"\.probe\(", text):
        return None
    modules = set(re.findall(r'\.probe\("([^"]+)"\)', text))
    for var in re.findall(r"\.probe\(([a-z_]+)\)", text):
        m = re.search(rf"let {var} = [^;]*?\"([^\"]+)\"\.into\(\)", text, re.S)
        if m:
            modules.add(m.group(1))
        else:
            modules.add(f"<unknown: {src.name}/build.rs probes {var}>")
    if "system_deps::Config::new().probe()" in text:
        meta = tomllib.loads((src / "Cargo.toml").read_text())["package"]["metadata"]["system-deps"]
        modules |= {v.get("name", k.replace("_", "-")) if isinstance(v, dict) else k for k, v in meta.items()}
    return modules


def required_modules():
    """{module: [crate-version]} and the problems of the scan."""
    out, problems = {}, []
    for lockfile in LOCKFILES:
        lock = tomllib.loads((ROOT / lockfile).read_text())
        for pkg in lock["package"]:
            if not pkg.get("source", "").startswith("registry+"):
                continue
            # A build script probes pkg-config through one of these crates.
            deps = {d.split()[0] for d in pkg.get("dependencies", [])}
            if not deps & {"pkg-config", "system-deps"}:
                continue
            src = registry_source(pkg["name"], pkg["version"])
            if src is None:
                problems.append(f"{pkg['name']}-{pkg['version']} ({lockfile}) is not in cargo's registry source: run `cargo fetch` in benches/")
                continue
            for module in probed_modules(src) or ():
                out.setdefault(module, set()).add(f"{pkg['name']}-{pkg['version']}")
    return out, problems


def shell_words(script):
    """The first word of each simple command of a shell script (cargo X -> cargo-X)."""
    found = set()
    for line in script.splitlines():
        line = line.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        for part in re.split(r";|&&|\|\||\||\$\(|\bthen\b|\bdo\b|\belse\b", line):
            words = part.strip().split()
            while words and ("=" in words[0] or words[0] in {"if", "!", "exec", "time", "command"}):
                words = words[1:]
            if not words or not PROGRAM.fullmatch(words[0]) or words[0] in {"for", "done", "fi", "while", "case", "esac", "step", "set", "cd", "export", "echo", "printf", "local", "return", "exit", "shift", "read", "mapfile", "shopt", "in", "elif", "true", "false", "wait", "trap", "declare"}:
                continue
            found.add(words[0])
            if words[0] == "cargo" and len(words) > 1 and words[1] in {"nextest", "clippy", "fmt"}:
                found.add({"nextest": "cargo-nextest", "clippy": "cargo-clippy", "fmt": "rustfmt"}[words[1]])
    return found - {"{", "}"}


def required_programs():
    """{program: [where]} run by name."""
    out = {}

    def add(prog, where):
        out.setdefault(prog, set()).add(where)

    for d in TEST_SOURCES:
        for f in sorted((ROOT / d).rglob("*.rs")):
            rel = f.relative_to(ROOT).as_posix()
            text = re.sub(r"//[^\n]*", "", f.read_text())
            for m in re.finditer(r'(?:Command::new|\btool)\("([^"/]+)"', text):
                add(m.group(1), rel)
            # An absolute program (or shebang) the shell cannot provide: the
            # dev shell and the check have no /usr/bin (interpreter_of instead).
            for m in re.finditer(r'(?:Command::new\(|#!)"?(/usr/[^"\s\\]+)', text):
                add(m.group(1), rel)
            if 'var_os("PATH")' in text:
                for m in re.finditer(r'\.join\("([a-z][a-z0-9_-]*)"\)\)?\s*\.find', text):
                    add(m.group(1), f"{rel} (PATH lookup)")
    for s in SCRIPTS:
        for prog in shell_words((ROOT / s).read_text()):
            if prog.startswith("bash") or prog in {"step"}:
                pass
            add(prog, s)
    run_sh = (ROOT / "nix/tests/run.sh").read_text()
    for m in re.finditer(r'^\s*need "?([a-z][a-z0-9_-]*)"? ', run_sh, re.M):
        add(m.group(1), "nix/tests/run.sh (need)")
    for m in re.finditer(r"for tool in ([a-z0-9 _-]+); do\s*\n\s*need", run_sh):
        for prog in m.group(1).split():
            add(prog, "nix/tests/run.sh (need)")
    for f in sorted((ROOT / "nix/tests").glob("*.py")):
        for m in re.finditer(r'\[\s*"([a-z][a-z0-9_-]*)",', f.read_text()):
            prog = m.group(1)
            if re.search(rf'subprocess\.\w+\(\s*\[\s*"{re.escape(prog)}"', f.read_text()) or re.search(rf'\w+ = \[\s*"{re.escape(prog)}",', f.read_text()):
                add(prog, f"nix/tests/{f.name}")
    return out


def shell():
    expr = """
      let
        f = import ./nix/tests/with-stubs.nix { };
        s = f.devShells.x86_64-linux.default;
        nextest = f.checks.x86_64-linux.cargo-nextest;
        describe = d: { name = d.name; output = d.outputName or "out"; kind = d.stubKind or ""; pname = d.stubArgs.pname or null; };
        inputsOf = d:
          let a = d.stubArgs or { }; in
          (a.packages or [ ]) ++ (a.buildInputs or [ ]) ++ (a.nativeBuildInputs or [ ])
          ++ builtins.concatMap inputsOf (a.inputsFrom or [ ]);
        env = d: builtins.listToAttrs (map (n: { name = n; value = d.stubArgs.${n} or null; }) names);
        names = builtins.fromJSON (builtins.getEnv "SHARED_ENV");
      in
      { inputs = map describe (inputsOf s); kind = s.stubKind; env = env s; checkEnv = env nextest; }
    """
    out = subprocess.run(
        ["nix-instantiate", "--eval", "--strict", "--json", "-E", expr],
        cwd=ROOT, check=True, capture_output=True, text=True,
        env={**os.environ, "SHARED_ENV": json.dumps(SHARED_ENV)},
    )
    return json.loads(out.stdout)


def model_key(inp):
    if inp["kind"] == "package":
        return re.sub(r"-(0-stub|[0-9][0-9.]*)$", "", inp["name"])
    return inp["kind"]


def main():
    model = json.loads((ROOT / "nix/tests/stub-nixpkgs/model.json").read_text())["attributes"]
    s = shell()
    problems = []
    programs, modules = {}, {}
    for prog in model["stdenv"].get("shell_programs", []):
        programs.setdefault(prog, "mkShell's stdenv")
    for inp in s["inputs"]:
        key = model_key(inp)
        label = f"{key}.{inp['output']}"
        if inp["kind"] == "crane.buildPackage" and inp["pname"]:
            programs.setdefault(inp["pname"], f"{inp['pname']} (crane.buildPackage)")
            continue
        entry = model.get(key)
        if entry is None:
            continue
        outputs = entry.get("outputs", ["out"])
        if inp["output"] == entry.get("programs_output", outputs[0]):
            for prog in entry.get("programs", []):
                programs.setdefault(prog, label)
        pc = entry.get("pkg_config")
        if pc and inp["output"] == pc["output"]:
            for module in pc["modules"]:
                modules.setdefault(module, label)

    need_modules, scan_problems = required_modules()
    problems += scan_problems
    for module, crates in sorted(need_modules.items()):
        if module in modules:
            print(f"ok   pkg-config {module} ({', '.join(sorted(crates))}): {modules[module]}")
        else:
            problems.append(f"pkg-config module {module} (probed by {', '.join(sorted(crates))}) is in no input of the dev shell")
    need_programs = required_programs()
    if need_modules:
        need_programs.setdefault("pkg-config", set()).add("the build scripts above")
    for prog, where in sorted(need_programs.items()):
        where = ", ".join(sorted(where))
        if prog in programs:
            print(f"ok   {prog} ({where}): {programs[prog]}")
        elif prog in NOT_FROM_THE_SHELL:
            print(f"ok   {prog} ({where}): not the shell's: {NOT_FROM_THE_SHELL[prog]}")
        else:
            problems.append(f"{prog} ({where}) is run by name, and no input of the dev shell provides it")
    for name in SHARED_ENV:
        if s["env"].get(name) != s["checkEnv"].get(name):
            problems.append(f"the dev shell's {name} is {s['env'].get(name)!r}, the nextest check's {s['checkEnv'].get(name)!r}")
    # The scans still see what they were written against.
    for expected in ("dbus-1", "glib-2.0", "gio-2.0", "libsystemd"):
        if expected not in need_modules:
            problems.append(f"the build-script scan no longer finds {expected}: update nix/tests/devshell_test.py")
    for expected in ("gdbus", "busctl", "dbus-send", "chromium", "critcmp", "git", "cargo-nextest", "pgrep"):
        if expected not in need_programs:
            problems.append(f"the program scan no longer finds {expected}: update nix/tests/devshell_test.py")
    for p in problems:
        print(f"FAIL {p}")
    print(f"devshell: {len(need_modules)} pkg-config modules, {len(need_programs)} programs, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
