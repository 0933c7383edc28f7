"""Each Cargo package's own source in the flake (nix/package-source.nix: the
workspace's dummy source with the real files of what the package compiles)
holds every file rustc read when cargo built that package here, and nothing
of another package that rustc did not read: a change to one adapter rebuilds
that adapter only, and no adapter's build misses a file.

What rustc read comes from cargo's dep-info of the host build
(benches/target/ci/<binary>.d, written by `scripts/build.sh ci`, which CI runs
before this): every source file, the ones included by `#[path]` and the
build script among them. The files of a package's source come from the flake
evaluated with the stubs (nix/tests/with-stubs.nix), whose lib.fileset
really filters (builtins.path), so they are the files a real build gets.

    python3 nix/tests/package_sources_test.py [ROOT]   (needs nix-instantiate, and the ci build)
    (the ci build's target directory: $DBUS_MATRIX_CI_TARGET, default ROOT/benches/target)
"""

import json
import os
import pathlib
import re
import subprocess
import sys

EXPR = r"""
let
  f = import ./nix/tests/with-stubs.nix { };
  ps = f.packages.x86_64-linux;
  overlay = p: builtins.head (builtins.match ".*cp -r --no-preserve=mode,ownership ([^ ]+)/[.] .*" p.stubArgs.src.stubArgs.extraDummyScript);
  own = builtins.filter (n: (ps.${n}.stubArgs.src.stubKind or "") == "crane.mkDummySrc") (builtins.attrNames ps);
in
builtins.listToAttrs (map (n: { name = n; value = { overlay = overlay ps.${n}; bin = ps.${n}.meta.mainProgram; }; }) own)
"""


def files_under(top):
    top = pathlib.Path(top)
    return {str(p.relative_to(top)) for p in top.rglob("*") if p.is_file()}


def dep_info(path):
    """Files of the workspace (not target/) that a dep-info file lists,
    relative to the workspace it was written in (the one above the target
    directory of its first word, the binary: a target directory copied from
    another checkout names that checkout's files)."""
    text = path.read_text().replace("\\\n", " ")
    first = text.splitlines()[0]
    binary, deps = first.split(": ", 1)
    benches = os.path.dirname(os.path.dirname(os.path.dirname(binary)))
    out = set()
    for word in re.split(r"(?<!\\) ", deps):
        word = word.strip().replace("\\ ", " ")
        if not word:
            continue
        p = os.path.normpath(word)
        rel = os.path.relpath(p, benches)
        if rel.startswith("..") or rel.startswith("target/"):
            continue
        out.add(rel)
    return out


def package_root(rel, files):
    """The nearest ancestor directory holding a Cargo.toml in the package's
    files (a package copied whole), else the file's directory (a directory
    of sources a target or #[path] names, or a single included file)."""
    parts = rel.split("/")
    for i in range(len(parts) - 1, 0, -1):
        d = "/".join(parts[:i])
        if f"{d}/Cargo.toml" in files:
            return d
    return os.path.dirname(rel)


def check(name, overlay_files, read):
    problems = []
    for rel in sorted(read):
        if rel not in overlay_files and rel != "Cargo.lock":
            problems.append(f"rustc read {rel}, which its source does not have")
    roots = {}
    for rel in overlay_files:
        if not rel.endswith(".rs"):
            continue
        roots.setdefault(package_root(rel, overlay_files), []).append(rel)
    for root, rs in sorted(roots.items()):
        if not any(r in read for r in rs):
            problems.append(f"its source has {root}/ ({len(rs)} Rust files), of which rustc read none")
    return [f"{name}: {p}" for p in problems]


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    # The target directory of the ci build: the checkout's (a mutant's copy
    # has none; nix/tests/run.sh names the checkout's).
    target = pathlib.Path(os.environ.get("DBUS_MATRIX_CI_TARGET", root / "benches" / "target"))
    done = subprocess.run(
        ["nix-instantiate", "--eval", "--strict", "--json", "--read-write-mode", "-E", EXPR],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        print(done.stderr)
        return 1
    packages = json.loads(done.stdout)
    problems = []
    for name, p in sorted(packages.items()):
        d = target / "ci" / f"{p['bin']}.d"
        if not d.is_file():
            problems.append(f"{name}: no {d}: run `bash scripts/build.sh ci` first")
            continue
        found = check(name, files_under(p["overlay"]), dep_info(d))
        problems += found
        if not found:
            print(f"  ok {name}: its source has every file rustc read for {p['bin']}, and no other package's")
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"package sources: {len(packages) - len({p.split(':')[0] for p in problems})} passed, "
          f"{len({p.split(':')[0] for p in problems})} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
