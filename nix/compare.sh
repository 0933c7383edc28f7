# `nix run .#compare -- OLD [NEW] [dbus-matrix run flags]`: runs the matrix
# of two revisions, each with the adapters, daemons and toolchain it pins,
# into separate directories, then prints the new runner's comparison.
# Packaged by nix/apps.nix (writeShellApplication: bash, set -euo pipefail,
# git from the flake); `nix` is the user's. Tested by
# nix/tests/compare_test.py with a fake nix and git.

# The first revision whose flake evaluates: every earlier commit either has
# no flake.nix (15) or takes pkgs.busd, which nixpkgs does not have (79).
# A revision can be rerun exactly when this commit is its ancestor (or it).
first_rerunnable=7c7238d606f204fbcbd85cce0fe4ca63134a49b0
first_rerunnable_about="7c7238d (2026-11-23, 'nix: busd built by the flake from its .crate')"

# The `nix run` calls of this script enable what they need themselves: a
# caller that enabled flakes on its own command line (`nix
# --extra-experimental-features 'nix-command flakes' run .#compare`) did
# not enable them for the nix processes started here.
nix_run() {
  nix --extra-experimental-features 'nix-command flakes' run "$@"
}

usage() {
  cat >&2 <<EOF
usage: nix run .#compare -- OLD [NEW] [dbus-matrix run flags]

OLD and NEW are each:
  - a commit (full or short SHA) or a ref name of the git checkout you are in:
    run as git+file://<checkout>?rev=<full SHA>;
  - any flake ref (it contains ':' or starts with '.' or '/'), as it is,
    e.g. git+https://<where your clone comes from>?rev=<SHA>.
Outside a checkout, a bare SHA names nothing: run it in a clone.
NEW defaults to the checkout's HEAD. Revisions before the first rerunnable
one, $first_rerunnable_about, are refused.

The flags go to both runs; --profile (default quick) and --out (default
results/compare-<UTC time>) are the app's: the runs write into OUT/old and
OUT/new. Then NEW's \`dbus-matrix compare --allow-missing\` prints the
comparison (libraries added since are reported, not failed) and sets the
exit status.
EOF
  exit 2
}

die() {
  echo "dbus-matrix compare: $*" >&2
  exit 2
}

[ "$#" -ge 1 ] || usage
case "$1" in -*) usage ;; esac
old=$1
shift
new=""
if [ "$#" -gt 0 ] && [ "${1#-}" = "$1" ]; then
  new=$1
  shift
fi

profile=quick
out=""
flags=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --profile)
      [ "$#" -ge 2 ] || die "--profile needs a value"
      profile=$2
      shift 2
      ;;
    --profile=*)
      profile=${1#--profile=}
      shift
      ;;
    --out)
      [ "$#" -ge 2 ] || die "--out needs a value"
      out=$2
      shift 2
      ;;
    --out=*)
      out=${1#--out=}
      shift
      ;;
    *)
      flags+=("$1")
      shift
      ;;
  esac
done

top=""
if top=$(git rev-parse --show-toplevel 2>/dev/null); then :; else top=""; fi

# check ARG SHA: refuses a commit the first rerunnable revision is not an ancestor of.
check() {
  git -C "$top" cat-file -e "$first_rerunnable^{commit}" 2>/dev/null ||
    die "$1: this checkout ($top) lacks the first rerunnable revision $first_rerunnable_about, so it cannot tell whether $1 can be rerun: fetch it"
  git -C "$top" merge-base --is-ancestor "$first_rerunnable" "$2" ||
    die "$1 ($2) cannot be rerun: it predates the first rerunnable revision $first_rerunnable_about (earlier commits have no flake.nix or take pkgs.busd, which nixpkgs does not have)"
}

# resolve ARG: prints the flake ref of ARG.
resolve() {
  local arg=$1 sha
  case "$arg" in
    *:* | .* | /*)
      sha=""
      if [[ $arg =~ ([0-9a-f]{40}) ]]; then sha=${BASH_REMATCH[1]}; fi
      if [ -n "$sha" ] && [ -n "$top" ] && git -C "$top" cat-file -e "$sha^{commit}" 2>/dev/null; then
        check "$arg" "$sha"
      fi
      echo "$arg"
      return
      ;;
  esac
  if [ -n "$top" ] && sha=$(git -C "$top" rev-parse --verify --quiet "$arg^{commit}"); then
    check "$arg" "$sha"
    echo "git+file://$top?rev=$sha"
    return
  fi
  if [[ $arg =~ ^[0-9a-f]{40}$ ]]; then
    die "$arg is not a commit of ${top:-a git checkout here (there is none)}: run this in a clone of dbus-matrix that has it, or pass a flake ref (e.g. git+https://<where your clone comes from>?rev=$arg)"
  fi
  die "$arg is neither a commit or ref name of ${top:-a git checkout here (there is none)} nor a flake ref"
}

old_ref=$(resolve "$old")
if [ -z "$new" ]; then
  [ -n "$top" ] || die "NEW is needed outside a git checkout"
  new=HEAD
fi
new_ref=$(resolve "$new")

out=${out:-results/compare-$(date -u +%Y%m%dT%H%M%SZ)}
for side in old new; do
  if [ -d "$out/$side" ] && [ -n "$(ls -A "$out/$side")" ]; then
    die "$out/$side is not empty: choose another --out"
  fi
done
mkdir -p "$out/old" "$out/new"

# run SIDE REF: the matrix of REF into OUT/SIDE; prints its results file.
run() {
  local side=$1 ref=$2 status=0 files
  echo "==> $side: $ref (profile $profile) -> $out/$side" >&2
  nix_run "$ref#dbus-matrix" -- run --profile "$profile" --out "$out/$side" ${flags[@]+"${flags[@]}"} >&2 || status=$?
  files=("$out/$side"/*.json)
  [ -e "${files[0]}" ] || die "the $side run (exit $status) wrote no results file into $out/$side"
  [ "${#files[@]}" -eq 1 ] || die "the $side run left ${#files[@]} results files in $out/$side"
  [ "$status" -eq 0 ] || echo "==> $side: the run exited $status; comparing what it wrote" >&2
  echo "${files[0]}"
}

old_json=$(run old "$old_ref")
new_json=$(run new "$new_ref")
echo "==> compare $old_json $new_json" >&2
nix_run "$new_ref#dbus-matrix" -- compare --allow-missing "$old_json" "$new_json"
