"""`nix run .#compare` (nix/compare.sh), run as the app runs it (bash with
errexit, nounset, pipefail, as writeShellApplication writes it) with a
fake `nix` and a fake `git` first on PATH; every invocation of each is
recorded and compared exactly with what is expected. The fake git knows a
checkout at /repo with a few commits, which of them descend from the first
rerunnable revision, and HEAD; the fake nix writes one results file into
the --out directory of a `run` and prints the arguments of a `compare`.
Also: the flake's compare app runs that same script (evaluated against the
stubs).

    python3 nix/tests/compare_test.py    (needs bash; nix-instantiate for the last check)
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "nix/compare.sh"
FIRST = "7c7238d606f204fbcbd85cce0fe4ca63134a49b0"
NEWER = "a2a96cc" + "1" * 33  # a rerunnable commit
HEAD = "f857599" + "2" * 33  # rerunnable, the checkout's HEAD
OLDER = "b0b0b0b" + "3" * 33  # before the first rerunnable revision
FAKE_GIT = r"""#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(json.dumps(["git"] + args) + "\n")
state = json.loads(os.environ["FAKE_GIT"])
if state.get("top") is None:
    sys.exit(128)
if args == ["rev-parse", "--show-toplevel"]:
    print(state["top"]); sys.exit(0)
if args[:2] == ["-C", state["top"]]:
    args = args[2:]
else:
    sys.exit(99)
commits = state["commits"]
if args[:3] == ["rev-parse", "--verify", "--quiet"] and args[3].endswith("^{commit}"):
    name = args[3][: -len("^{commit}")]
    if name in state["refs"]:
        print(state["refs"][name]); sys.exit(0)
    hits = [c for c in commits if c.startswith(name)]
    if len(hits) == 1 and len(name) >= 4:
        print(hits[0]); sys.exit(0)
    sys.exit(1)
if args[:2] == ["cat-file", "-e"]:
    sys.exit(0 if args[2][: -len("^{commit}")] in commits else 1)
if args[:2] == ["merge-base", "--is-ancestor"]:
    sys.exit(0 if args[2] == state["first"] and args[3] in state["descendants"] else 1)
sys.exit(99)
"""
FAKE_NIX = r"""#!/usr/bin/env python3
import json, os, pathlib, sys
args = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(json.dumps(["nix"] + args) + "\n")
if args[:1] == ["--extra-experimental-features"]:
    args = args[2:]
if args[0] == "run" and args[2:4] == ["--", "run"]:
    out = pathlib.Path(args[args.index("--out") + 1])
    (out / "20261127T000000Z-run.json").write_text("{}")
    sys.exit(int(os.environ.get("FAKE_RUN_STATUS", "0")))
if args[0] == "run" and args[2:4] == ["--", "compare"]:
    print("compare " + " ".join(args[4:]))
    sys.exit(0)
sys.exit(99)
"""


def run(args, top="/repo", cwd=None, run_status=0):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        for name, text in (("git", FAKE_GIT), ("nix", FAKE_NIX)):
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
        log = tmp / "log"
        log.write_text("")
        work = tmp / "work"
        work.mkdir()
        if cwd:
            (work / cwd).mkdir(parents=True)
        state = {
            "top": top,
            "first": FIRST,
            "commits": [FIRST, NEWER, HEAD, OLDER],
            "descendants": [FIRST, NEWER, HEAD],
            "refs": {"HEAD": HEAD, "main": HEAD},
        }
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_LOG": str(log), "FAKE_GIT": json.dumps(state), "FAKE_RUN_STATUS": str(run_status)}
        p = subprocess.run(
            ["bash", "-c", 'set -o errexit -o nounset -o pipefail; source "$0" "$@"', str(SCRIPT), *args],
            cwd=work, env=env, capture_output=True, text=True,
        )
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        return p.returncode, p.stdout, p.stderr, calls


# What each of the script's own `nix` calls must start with: the caller may
# have enabled flakes on its command line only (`nix
# --extra-experimental-features 'nix-command flakes' run .#compare`), which
# does not reach the nix processes the script starts.
FEATURES = ["--extra-experimental-features", "nix-command flakes"]


def nix_calls(calls):
    return [c for c in calls if c[0] == "nix"]


def nix_run(*args):
    return ["nix", *FEATURES, "run", *args]


def git_ref(sha):
    return f"git+file:///repo?rev={sha}"


def main():
    problems = []

    def expect(name, cond, detail):
        print(f"{'ok  ' if cond else 'FAIL'} {name}")
        if not cond:
            problems.append(name)
            print("     " + detail.replace("\n", "\n     "))

    # A short SHA of the checkout, NEW defaulted to HEAD, default profile and out.
    status, out, err, calls = run(["a2a96cc"])
    n = nix_calls(calls)
    outdir = n[0][n[0].index("--out") + 1].rsplit("/", 1)[0] if n else ""
    expected = [
        nix_run(f"{git_ref(NEWER)}#dbus-matrix", "--", "run", "--profile", "quick", "--out", f"{outdir}/old"),
        nix_run(f"{git_ref(HEAD)}#dbus-matrix", "--", "run", "--profile", "quick", "--out", f"{outdir}/new"),
        nix_run(f"{git_ref(HEAD)}#dbus-matrix", "--", "compare", "--allow-missing", f"{outdir}/old/20261127T000000Z-run.json", f"{outdir}/new/20261127T000000Z-run.json"),
    ]
    expect("short SHA: resolved in the checkout, run as git+file, NEW = HEAD, quick, compare --allow-missing", status == 0 and n == expected and outdir.startswith("results/compare-"), f"exit {status}\n{err}\ncalls {json.dumps(n, indent=1)}")
    expect("short SHA: git asked exactly", [c for c in calls if c[0] == "git"] == [
        ["git", "rev-parse", "--show-toplevel"],
        ["git", "-C", "/repo", "rev-parse", "--verify", "--quiet", "a2a96cc^{commit}"],
        ["git", "-C", "/repo", "cat-file", "-e", f"{FIRST}^{{commit}}"],
        ["git", "-C", "/repo", "merge-base", "--is-ancestor", FIRST, NEWER],
        ["git", "-C", "/repo", "rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
        ["git", "-C", "/repo", "cat-file", "-e", f"{FIRST}^{{commit}}"],
        ["git", "-C", "/repo", "merge-base", "--is-ancestor", FIRST, HEAD],
    ], json.dumps([c for c in calls if c[0] == "git"], indent=1))
    expect("the comparison is printed", out.strip() == "compare " + " ".join(expected[2][7:]), repr(out))

    # A revision before the first rerunnable one: refused, naming it, nothing run.
    status, out, err, calls = run(["b0b0b0b", "main"])
    expect("an older revision is refused (exit 2) naming the first rerunnable revision, nothing run",
           status == 2 and "7c7238d" in err and "cannot be rerun" in err and not nix_calls(calls), f"exit {status}\n{err}")

    # Flake refs as they are; run flags to both runs; --profile and --out the app's.
    fork = f"github:someone/dbus-matrix/{'c' * 40}"
    status, out, err, calls = run([f"{FIRST}", fork, "--adapters", "raw,zbus-6", "--profile=smoke", "--out", "cmp", "--buses", "dbus-daemon"])
    expected = [
        nix_run(f"{git_ref(FIRST)}#dbus-matrix", "--", "run", "--profile", "smoke", "--out", "cmp/old", "--adapters", "raw,zbus-6", "--buses", "dbus-daemon"),
        nix_run(f"{fork}#dbus-matrix", "--", "run", "--profile", "smoke", "--out", "cmp/new", "--adapters", "raw,zbus-6", "--buses", "dbus-daemon"),
        nix_run(f"{fork}#dbus-matrix", "--", "compare", "--allow-missing", "cmp/old/20261127T000000Z-run.json", "cmp/new/20261127T000000Z-run.json"),
    ]
    expect("full SHA and a flake ref; --profile/--out changed; other flags to both runs", status == 0 and nix_calls(calls) == expected, f"exit {status}\n{err}\n{json.dumps(nix_calls(calls), indent=1)}")

    # A flake ref naming an older commit the checkout has: refused too.
    status, out, err, calls = run([f"git+https://example.org/dbus-matrix?rev={OLDER}", "main"])
    expect("a flake ref naming an older commit of the checkout is refused", status == 2 and "cannot be rerun" in err and not nix_calls(calls), f"exit {status}\n{err}")

    # Outside a checkout a bare SHA names nothing: refused, saying what works.
    status, out, err, calls = run([NEWER, fork], top=None)
    expect("outside a checkout, a full SHA is refused with what works instead (a clone, or a flake ref)",
           status == 2 and "in a clone" in err and "?rev=" in err and not nix_calls(calls), f"exit {status}\n{err}")
    status, out, err, calls = run(["nonsense", "main"])
    expect("a name that is neither a commit, a ref nor a flake ref is refused", status == 2 and "neither a commit" in err and not nix_calls(calls), f"exit {status}\n{err}")
    status, out, err, calls = run([])
    expect("no arguments: usage, exit 2", status == 2 and "usage: nix run .#compare" in err and not calls, f"exit {status}\n{err}")

    # A non-empty output directory is refused before anything runs.
    status, out, err, calls = run(["a2a96cc", "--out", "cmp"], cwd="cmp/old/x")
    expect("a non-empty OUT/old is refused", status == 2 and "not empty" in err and not nix_calls(calls), f"exit {status}\n{err}")

    # A run that fails but wrote results: compared, reported.
    status, out, err, calls = run(["a2a96cc"], run_status=1)
    expect("a run that exits 1 with a results file is still compared", status == 0 and len(nix_calls(calls)) == 3 and "the run exited 1" in err, f"exit {status}\n{err}")

    # No placeholder of a repository URL is left anywhere (a user cannot run it).
    placeholders = subprocess.run(["git", "grep", "-n", "-I", "-E", r"\bOWNER/(REPO|dbus-matrix)\b", "--", ":!nix/tests/compare_test.py"],
                                  cwd=ROOT, capture_output=True, text=True).stdout
    expect("no OWNER/REPO placeholder in the repository", placeholders == "", placeholders)

    # The flake's app runs this script.
    if "--no-eval" not in sys.argv:
        expr = "let f = import ./nix/tests/with-stubs.nix { }; a = f.apps.x86_64-linux.compare; in { program = a.program; text = f.checks.x86_64-linux.app-compare.stubArgs.text; out = f.checks.x86_64-linux.app-compare.outPath; }"
        r = json.loads(subprocess.run(["nix-instantiate", "--eval", "--strict", "--json", "-E", expr], cwd=ROOT, check=True, capture_output=True, text=True).stdout)
        expect("apps.compare is the app-compare check's script, whose text is nix/compare.sh",
               r["program"] == f"{r['out']}/bin/dbus-matrix-compare" and r["text"] == SCRIPT.read_text(), json.dumps(r)[:300])

    print(f"compare: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
