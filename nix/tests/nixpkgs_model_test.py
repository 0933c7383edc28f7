"""The flake uses only what the strict model of nixpkgs lists
(nix/tests/stub-nixpkgs/model.json: each attribute with where nixpkgs defines
it at the pin). Scans flake.nix, nix/ (but not nix/tests/) and vm-tests/ for
every `pkgs.<name>`, `inherit (pkgs) ...`, `lib.<name>` and dynamic
`pkgs.${...}`, reads matrix.toml's `nix` attributes, and evaluates the NixOS
options the VM tests set (through the stubs). Fails on anything not in the
model, and on a model entry nothing uses (the list stays exact).

    python3 nix/tests/nixpkgs_model_test.py [ROOT]   (default: the repository; needs nix-instantiate)
"""

import json
import pathlib
import re
import subprocess
import sys
import tomllib

NAME = r"[A-Za-z_][A-Za-z0-9_'-]*"
PKGS_REF = re.compile(rf"(?<![\w.$])pkgs\.({NAME}(?:\.{NAME})*)")
PKGS_DYNAMIC = re.compile(r"(?<![\w.])pkgs\.\$\{")
INHERIT_PKGS = re.compile(r"inherit\s*\(\s*pkgs\s*\)([^;]*);")
LIB_REF = re.compile(rf"(?<![\w$])(?:nixpkgs\.)?lib\.({NAME})")
WITH_PKGS = re.compile(r"\bwith\s+pkgs\s*;")
# The one dynamic reference allowed: a bus's `nix` attribute of matrix.toml.
DYNAMIC_OK = {("nix/buses.nix", "pkgs.${bus.nix}")}


class ModelError(Exception):
    pass


def sources(root):
    files = [root / "flake.nix"]
    files += sorted(p for p in (root / "nix").rglob("*.nix") if "tests" not in p.relative_to(root / "nix").parts)
    files += sorted((root / "vm-tests").rglob("*.nix"))
    return files


def code_lines(path):
    """(line number, text) of the file, whole-line comments dropped."""
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if not line.lstrip().startswith("#"):
            yield i, line


def resolve(model, parts):
    """None if pkgs.<parts> is covered by the model, else why not."""
    attrs = model["attributes"]
    for k in range(len(parts), 0, -1):
        name = ".".join(parts[:k])
        if name in attrs:
            rest = parts[k:]
            entry = attrs[name]
            if not rest:
                return None
            allowed = entry.get("outputs", []) + entry.get("attributes", [])
            if ".".join(rest) in allowed or rest[0] in allowed:
                return None
            return f"{name} is in the model, but not its attribute {'.'.join(rest)}"
    why = model.get("absent", {}).get(parts[0])
    return f"{'.'.join(parts)} is not in the model" + (f" (absent from nixpkgs: {why})" if why else "")


def nixos_options(root):
    """{check name: [dotted option paths]} of every VM test, from the flake with the stubs."""
    expr = (
        "let f = import ./nix/tests/with-stubs.nix { }; c = f.checks.x86_64-linux;"
        " paths = prefix: v: if builtins.isAttrs v && !(v ? outPath)"
        "   then builtins.concatMap (n: paths (prefix ++ [ n ]) v.${n}) (builtins.attrNames v)"
        '   else [ (builtins.concatStringsSep "." prefix) ];'
        " vm = builtins.filter (n: builtins.substring 0 3 n == \"vm-\") (builtins.attrNames c);"
        " in builtins.listToAttrs (map (n: { name = n; value ="
        "   builtins.concatMap (node: paths [ ] c.${n}.stubArgs.nodes.${node}) (builtins.attrNames c.${n}.stubArgs.nodes); }) vm)"
    )
    done = subprocess.run(
        ["nix-instantiate", "--eval", "--strict", "--json", "-E", expr],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        # The stub nixpkgs stops at an option the model lacks: its message.
        raise ModelError("evaluating the VM tests' NixOS options failed:\n    " + done.stderr.strip().replace("\n", "\n    "))
    return json.loads(done.stdout)


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]).resolve()
    model = json.loads((root / "nix/tests/stub-nixpkgs/model.json").read_text())
    attrs = model["attributes"]
    problems = []
    used = set()

    def use(where, parts):
        why = resolve(model, parts)
        if why:
            problems.append(f"{where}: pkgs.{'.'.join(parts)}: {why}")
        for k in range(len(parts), 0, -1):
            if ".".join(parts[:k]) in attrs:
                used.add(".".join(parts[:k]))
                break

    refs = 0
    for path in sources(root):
        rel = path.relative_to(root).as_posix()
        text = "\n".join(line for _, line in code_lines(path))
        for n, line in code_lines(path):
            where = f"{rel}:{n}"
            for m in PKGS_REF.finditer(line):
                refs += 1
                use(where, m.group(1).split("."))
            for m in PKGS_DYNAMIC.finditer(line):
                snippet = line[m.start() : line.find("}", m.start()) + 1]
                if (rel, snippet) not in DYNAMIC_OK:
                    problems.append(f"{where}: dynamic {snippet}: the scanner cannot check it; name the attribute")
            for m in LIB_REF.finditer(line):
                if m.group(1) not in model["lib"]:
                    problems.append(f"{where}: lib.{m.group(1)} is not in the model's lib")
            if WITH_PKGS.search(line):
                problems.append(f"{where}: `with pkgs;` hides which attributes are used")
        for m in INHERIT_PKGS.finditer(text):
            for name in m.group(1).split():
                refs += 1
                use(f"{rel}: inherit (pkgs)", [name])

    matrix = tomllib.loads((root / "matrix.toml").read_text())
    for bus in matrix.get("bus", []):
        if "nix" in bus:
            refs += 1
            use(f"matrix.toml bus {bus['id']} (nix/buses.nix pkgs.${{bus.nix}})", [bus["nix"]])

    options_used = set()
    try:
        vm_options = nixos_options(root)
    except ModelError as e:
        problems.append(str(e))
        vm_options = {}
        options_used = set(model["nixos_options"])
    for check, options in vm_options.items():
        for option in options:
            options_used.add(option)
            if option not in model["nixos_options"]:
                problems.append(f"VM test {check}: NixOS option {option} is not in the model")

    for name, entry in attrs.items():
        if name not in used and "used_by" not in entry:
            problems.append(f"model.json lists {name}, but nothing uses it: remove it")
    for option in model["nixos_options"]:
        if option not in options_used:
            problems.append(f"model.json lists NixOS option {option}, but no VM test sets it: remove it")

    if problems:
        print("nixpkgs model: " + str(len(problems)) + " problem(s):")
        for p in problems:
            print("  " + p)
        return 1
    print(
        f"nixpkgs model: {refs} references to {len(used)} attributes, {len(options_used)} NixOS options,"
        f" all in nix/tests/stub-nixpkgs/model.json ({len(attrs)} attributes)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
