#!/usr/bin/env bash
# Builds the flake's crane derivations for real: real Nix (2.26, Debian
# trixie's, in the chroot nix/tests/modern-nix.sh makes: the pinned nixpkgs
# needs Nix >= 2.18, so Debian 12's 2.8 cannot evaluate it), crane's own code
# at the revision flake.lock pins, a real nixpkgs lib, every build run by a
# non-root build user (nixbld); only nixpkgs' packages are stood in, by the
# chroot's Debian programs and the host's Rust toolchain
# (nix/tests/standin/: stdenv's generic builder, fetchurl from cargo's
# download cache). What is real and what is stood in: docs/nix.md, "Builds
# that run".
#
# crane and nixpkgs' lib are not part of this repository and cannot be
# fetched here. They are found in CRANE_SRC and NIXPKGS_LIB_SRC (a checkout,
# or a git directory such as `fetch github:ipetkov/crane` makes), else in
# $XDG_CACHE_HOME/dbus-matrix/{crane,nixpkgs.lib}, else in the snapshots the
# search tool of this workplace fetches (/work/.mirror). Without crane the
# check says so loudly and is skipped (exit 0); with a crane that is not the
# pinned revision (its narHash differs from flake.lock's) it fails.
#
# Usage: nix/tests/build-for-real.sh [--set ci|all] [ATTRIBUTE...]
#   --set ci   (default) packages.raw (the shared dependency build and one
#              workspace adapter), packages.zbus-6-tokio (an adapter with a
#              lockfile of its own) and checks.app-shellcheck, whose mutant (a
#              copy with a shellcheck finding in nix/compare.sh) must fail: what
#              .ci/run builds
#   --set all  also packages.zbus-6, packages.dbus-0.9, packages.default (the
#              wrapped runner, so every adapter) and checks.cargo-nextest
#   ATTRIBUTE  flake attributes under packages/checks.<system> instead
#   --run      then `nix run` the built wrapped runner (packages.default) on
#              real buses: run --profile smoke --adapters raw,rustbus-0.19
#              --buses dbus-daemon; the results file goes to
#              $DBUS_MATRIX_BUILD_LOGS (the daemons are the chroot's Debian
#              ones: nixpkgs' cannot be had here)
# Environment: DBUS_MATRIX_BUILD_LOGS=DIR keeps each derivation's log there.
# Needs root (the chroot; Nix's single-user store with build users), git,
# python3, cargo and rustc (the toolchain it stages).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
system=x86_64-linux
set_name=ci
attrs=()
inside=
run_runner=
# The chroot's Debian packages the stand-in links to (nix/tests/standin/pkgs.nix).
chroot_packages="gcc libc6-dev pkg-config libdbus-1-dev libglib2.0-dev libsystemd-dev jq zstd rsync shellcheck"
chroot_packages+=" patch make bzip2 xz-utils gawk procps dbus-daemon dbus-bin dbus-broker libglib2.0-bin valgrind"
while [ "$#" -gt 0 ]; do
  case $1 in
    --inside) inside=${2:?}; shift 2 ;;
    --run) run_runner=1; shift ;;
    --set) set_name=${2:?--set needs ci or all}; shift 2 ;;
    --set=*) set_name=${1#--set=}; shift ;;
    -*) echo "build-for-real: unknown option $1" >&2; exit 2 ;;
    *) attrs+=("$1"); shift ;;
  esac
done
# The cargo-nextest check runs the tests, which drive a browser, Ruby and the
# Python adapters' libraries: the chroot's Debian stands in for nixpkgs' too.
[ "$set_name" = all ] && chroot_packages+=" chromium ruby python3-jeepney python3-dbus python3-gi python3-pip"
if [ ${#attrs[@]} -eq 0 ]; then
  case $set_name in
    ci) attrs=(packages.raw packages.zbus-6-tokio checks.app-shellcheck) ;;
    all) attrs=(packages.raw packages.zbus-6-tokio packages.zbus-6 packages.dbus-0.9 packages.default checks.cargo-nextest) ;;
    *) echo "build-for-real: --set is ci or all, not '$set_name'" >&2; exit 2 ;;
  esac
fi

say() { printf 'build-for-real: %s\n' "$*" >&2; }
skip() {
  printf '\n%s\n' "################################################################################" >&2
  say "SKIPPED: $*"
  say "crane's builders did NOT run: the flake's builds are unverified on this machine."
  printf '%s\n\n' "################################################################################" >&2
  exit 0
}

# --- the builds (inside the chroot) -------------------------------------------------------------
if [ -n "$inside" ]; then
  work=$inside
  stage=$(cat "$work/stage")
  # Build users (the chroot's debootstrap makes none), with NixOS's ids
  # (group 30000, users 30001...): the chroot shares the host's processes,
  # and Nix kills every process of a build user around each build, so their
  # ids must be no host account's.
  if [ "$(id -u nixbld1 2>/dev/null)" != 30001 ]; then
    for i in 1 2 3 4; do userdel "nixbld$i" 2>/dev/null || true; done
    groupdel nixbld 2>/dev/null || true
    groupadd --gid 30000 nixbld
    for i in 1 2 3 4; do
      useradd --uid $((30000 + i)) --gid nixbld --groups nixbld --no-create-home --home-dir /var/empty \
        --shell /usr/sbin/nologin --comment "Nix build user $i" "nixbld$i"
    done
  fi
  nix_cmd=(nix --extra-experimental-features 'nix-command flakes' --option substituters ''
    --option build-users-group nixbld --option sandbox false)
  crane_nar=$(cat "$work/crane.narHash")
  crane_have=$("${nix_cmd[@]}" hash path "$work/crane")
  if [ "$crane_have" != "$crane_nar" ]; then
    say "crane has narHash $crane_have, flake.lock pins $crane_nar"
    exit 1
  fi
  say "$(nix --version); crane's narHash matches flake.lock"
  export DBUS_MATRIX_STANDIN_HOST=$stage
  # The check's Python (the stand-in's python3.withPackages is the chroot's
  # Python) with dbus-fast: Debian has none this new, so the wheel host mode
  # pins, from PyPI, its hash checked.
  # (The wheel comes from the host, which can reach the registry's proxy.)
  if [[ " ${attrs[*]} " == *" checks.cargo-nextest "* ]] && ! python3 -c 'import dbus_fast' 2>/dev/null; then
    python3 -m pip install --quiet --break-system-packages --require-hashes --only-binary :all: --no-deps \
      --no-index --find-links "$stage/wheels" -r "$repo/benches/programs/dbus-fast-5.2/requirements.txt"
  fi
  # A build user, not root: checked on a derivation of its own first.
  out_paths() { python3 -c 'import json, sys; print(" ".join(p for d in json.load(sys.stdin) for p in d["outputs"].values()))'; }
  probe=$("${nix_cmd[@]}" build --impure --no-link --json --expr \
    "derivation { name = \"dbus-matrix-build-user-$(date +%s%N)\"; system = \"$system\"; builder = \"/bin/sh\"; args = [ \"-c\" \"/usr/bin/id -u > \$out\" ]; }" | out_paths)
  uid=$(cat "$probe")
  [ "$uid" != 0 ] || { say "the builds ran as root: build-users-group is not in effect"; exit 1; }
  say "builds run as uid $uid (a nixbld build user)"

  flake_args=(--impure --no-write-lock-file
    --override-input nixpkgs "path:$work/standin"
    --override-input crane "path:$work/crane")
  logs=$work/logs
  mkdir -p "$logs"
  # The crates of the workspace and of the own-lockfile adapters (path
  # packages: no `source` in their Cargo.lock).
  members=$(python3 -c '
import sys, tomllib
for lock in sys.argv[1:]:
    for p in tomllib.load(open(lock, "rb"))["package"]:
        if "source" not in p:
            print(p["name"])' "$repo/benches/Cargo.lock" "$repo"/benches/adapters/*/Cargo.lock | sort -u)
  # Reuse: what the package's own derivation compiled (its log alone, not its
  # dependencies'). A package on the shared dependency build must compile
  # workspace members only; one with a lockfile of its own (cargoArtifacts =
  # null: its dependencies are other versions) compiles them, and says so.
  reuse_report() { # ATTR INSTALLABLE
    local drv compiled third count
    drv=$("${nix_cmd[@]}" path-info "${flake_args[@]}" --derivation "$2" 2>/dev/null)
    # (cargo colours its log here: the escapes go first.)
    compiled=$("${nix_cmd[@]}" log "$drv" 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g' |
      grep -oE 'Compiling [A-Za-z0-9_-]+ v' | awk '{print $2}' | sort -u || true)
    [ -n "$compiled" ] || { say "$1: its own derivation compiled no crate"; return 0; }
    third=$(comm -23 <(echo "$compiled") <(echo "$members"))
    count=$(grep -c . <<<"$third" || true)
    if [ "$count" -eq 0 ]; then
      say "$1: compiled $(grep -c . <<<"$compiled") workspace crate(s) and 0 third-party crates (the dependency build was reused)"
    elif [[ $1 == packages.* ]] && [ -f "$repo/benches/adapters/${1#packages.}/Cargo.lock" ]; then
      say "$1: compiled $count third-party crates: an adapter with a lockfile of its own builds its dependencies itself"
    else
      say "$1: compiled $count third-party crate(s) that the shared dependency build should have made: $(tr '\n' ' ' <<<"$third")"
      return 1
    fi
  }
  status=0
  for attr in "${attrs[@]}"; do
    # The name quoted: a dot in it (packages.dbus-0.9) is not a path separator.
    installable="$repo#${attr%%.*}.$system.\"${attr#*.}\""
    say "building $attr"
    start=$SECONDS
    if out=$("${nix_cmd[@]}" build "${flake_args[@]}" --no-link --json -L "$installable" 2>"$logs/${attr}.log" | out_paths); then
      say "built $attr in $((SECONDS - start)) s: $out"
      reuse_report "$attr" "$installable" || status=1
    else
      status=1
      say "FAILED $attr after $((SECONDS - start)) s; the end of its log:"
      tail -n 40 "$logs/${attr}.log" >&2
    fi
  done
  # N4: writeShellApplication's own check is `bash -n`; app-shellcheck must
  # fail on what only shellcheck sees (a copy of the repository whose
  # nix/compare.sh quotes a variable badly: SC2086), where app-compare builds.
  if [ -d "$work/mutant-repo" ]; then
    mutant="path:$work/mutant-repo#checks.$system"
    say "mutant: nix/compare.sh with an unquoted variable (SC2086)"
    if "${nix_cmd[@]}" build "${flake_args[@]}" --no-link -L "$mutant.app-compare" >"$logs/mutant-app-compare.log" 2>&1; then
      say "mutant: checks.app-compare builds it (its check is bash -n)"
    else
      say "mutant: checks.app-compare failed to build; the end of its log:"
      tail -n 20 "$logs/mutant-app-compare.log" >&2
      status=1
    fi
    if "${nix_cmd[@]}" build "${flake_args[@]}" --no-link -L "$mutant.app-shellcheck" >"$logs/mutant-app-shellcheck.log" 2>&1; then
      say "mutant: checks.app-shellcheck PASSED: it cannot see this defect"
      status=1
    elif grep -q SC2086 "$logs/mutant-app-shellcheck.log"; then
      say "mutant: checks.app-shellcheck fails on it ($(grep -m1 -o 'SC2086[^)]*' "$logs/mutant-app-shellcheck.log"))"
    else
      say "mutant: checks.app-shellcheck failed, but not on SC2086; the end of its log:"
      tail -n 20 "$logs/mutant-app-shellcheck.log" >&2
      status=1
    fi
  fi

  # `nix run` of the built wrapped runner on real buses.
  if [ -n "$run_runner" ]; then
    runner=$("${nix_cmd[@]}" build "${flake_args[@]}" --no-link --json "$repo#packages.$system.default" 2>>"$logs/run.log" | out_paths)
    say "nix run: $runner/bin/dbus-matrix run --profile smoke --adapters raw,rustbus-0.19 --buses dbus-daemon"
    mkdir -p "$work/results"
    # apps.dbus-matrix: the wrapped runner (apps.default is the quick profile's `run`).
    if "${nix_cmd[@]}" run "${flake_args[@]}" "$repo#dbus-matrix" -- run --profile smoke --adapters raw,rustbus-0.19 \
      --buses dbus-daemon --out "$work/results" >>"$logs/run.log" 2>&1; then
      say "nix run: $(tail -n 1 "$logs/run.log")"
    else
      say "nix run FAILED; the end of its output:"
      tail -n 30 "$logs/run.log" >&2
      status=1
    fi
  fi
  exit "$status"
fi

# --- the sources that are not ours ------------------------------------------------------------
# A directory that is a checkout (has $marker) or a git directory.
find_source() {
  local marker=$1
  shift
  local candidate
  for candidate in "$@"; do
    [ -n "$candidate" ] || continue
    if [ -e "$candidate/$marker" ] || { [ -f "$candidate/HEAD" ] && [ -d "$candidate/objects" ]; }; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/dbus-matrix
crane_src=$(find_source lib/mkDummySrc.nix "${CRANE_SRC:-}" "$cache/crane" /work/.mirror/ipetkov+crane/repo) ||
  skip "crane's source is not on this machine (set CRANE_SRC to a checkout or git directory of ipetkov/crane holding the revision flake.lock pins)"
lib_src=$(find_source lib/default.nix "${NIXPKGS_LIB_SRC:-}" "$cache/nixpkgs.lib" /work/.mirror/nix-community+nixpkgs.lib/repo) ||
  skip "nixpkgs' lib is not on this machine (set NIXPKGS_LIB_SRC to a checkout or git directory of nix-community/nixpkgs.lib)"
[ "$(id -u)" -eq 0 ] || { say "run as root: Nix's store is single-user here and its builds run as the nixbld users"; exit 2; }
for tool in git python3 cargo rustc unshare; do
  command -v "$tool" >/dev/null || { say "'$tool' is not on PATH"; exit 2; }
done

work=$(mktemp -d /tmp/dbus-matrix-build-for-real.XXXXXX)
[ -n "${DBUS_MATRIX_KEEP_WORK:-}" ] || trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
# The pinned crane, checked against flake.lock's narHash (a checkout of another
# revision fails here rather than building something else).
read -r crane_rev crane_nar < <(python3 -c '
import json, sys
n = json.load(open(sys.argv[1]))["nodes"]["crane"]["locked"]
print(n["rev"], n["narHash"])' "$repo/flake.lock")
checkout() { # SRC DEST [REV]
  mkdir -p "$2"
  if [ -f "$1/HEAD" ] && [ -d "$1/objects" ]; then
    git --git-dir="$1" archive "${3:-HEAD}" | tar -x -C "$2"
  else
    cp -r "$1/." "$2/"
  fi
}
checkout "$crane_src" "$work/crane" "$crane_rev" || { say "$crane_src does not hold crane $crane_rev (flake.lock)"; exit 1; }
echo "$crane_nar" >"$work/crane.narHash"
checkout "$lib_src" "$work/standin/nixpkgs-lib"
cp -r "$repo/nix/tests/standin/." "$work/standin/"
say "crane $crane_rev from $crane_src; nixpkgs lib $(cat "$work/standin/nixpkgs-lib/lib/.version") from $lib_src"

# --- the host's tools, where a build user can read them ---------------------------------------
# A stable place, each tool in a directory named by its content: the same
# tools give the same derivations, so a rerun builds only what changed.
host=${DBUS_MATRIX_STANDIN_STAGE:-/var/cache/dbus-matrix/standin}
mkdir -p "$host/crates" "$host/tools"
fingerprint() { sha256sum | cut -c1-12; }
# stage DIR SOURCE...: copies SOURCE... into $host/DIR once (through a temporary name).
stage() {
  local dir=$1
  shift
  [ -d "$host/$dir" ] && return 0
  rm -rf "$host/$dir.tmp"
  mkdir -p "$host/$dir.tmp"
  cp -r "$@" "$host/$dir.tmp/"
  mv "$host/$dir.tmp" "$host/$dir"
}
sysroot=$(rustc --print sysroot)
toolchain=toolchain-$( (rustc -vV; cargo -V; find "$sysroot/bin" "$sysroot/lib" -type f -printf '%P %s\n' | sort) | fingerprint)
stage "$toolchain" "$sysroot/bin" "$sysroot/lib"
tools=()
for tool in cargo-nextest critcmp deadnix nixpkgs-fmt; do
  path=$(command -v "$tool") || continue
  dir=tools/$tool-$(fingerprint <"$path")
  stage "$dir/bin" "$path"
  tools+=("\"$tool\": \"$dir\"")
done
printf '{"rustcVersion": "%s", "toolchain": "%s", "tools": {%s}}\n' "$(rustc --version | cut -d' ' -f2)" "$toolchain" \
  "$(IFS=,; echo "${tools[*]}")" >"$host/facts.json"
# Every crate of every lockfile a build vendors, from cargo's download cache
# (filled from the registry where missing: crane-utils' lockfile is crane's).
locks=("$repo/benches/Cargo.lock" "$repo"/benches/adapters/*/Cargo.lock "$repo"/nix/*/Cargo.lock "$work/crane/pkgs/crane-utils/Cargo.lock")
# `cargo fetch` takes every target's crates (crane vendors them all); a lock
# without a manifest beside it (nix/busd: the lock the busd crate ships) is
# fetched from that crate's own sources.
fetch_lock() { # LOCK
  local dir
  dir=$(dirname "$1")
  if [ ! -f "$dir/Cargo.toml" ]; then
    local name version
    name=$(basename "$dir")
    version=$(python3 -c 'import sys, tomllib
print(next(p["version"] for p in tomllib.load(open(sys.argv[1], "rb"))["package"] if p["name"] == sys.argv[2] and "source" not in p))' "$1" "$2" 2>/dev/null || true)
    [ -n "$version" ] || { say "$1: no root package $name in it"; return 1; }
    crate=$(find ~/.cargo/registry/cache -name "$name-$version.crate" | head -n 1)
    [ -n "$crate" ] || { say "$1: $name-$version.crate is not in cargo's download cache (cargo install $name@$version puts it there)"; return 1; }
    # The crate itself is a fetchurl of the build too (nix/busd.nix), not only its lock's.
    cp -n "$crate" "$host/crates/"
    dir=$work/lock-sources/$name
    mkdir -p "$dir"
    tar -xzf "$crate" -C "$dir" --strip-components=1
    cp "$1" "$dir/Cargo.lock"
  fi
  cargo fetch --locked --manifest-path "$dir/Cargo.toml" >/dev/null 2>&1 || cargo fetch --locked --manifest-path "$dir/Cargo.toml"
}
for lock in "${locks[@]}"; do
  fetch_lock "$lock" "$(basename "$(dirname "$lock")")"
done
python3 - "$host/crates" "${locks[@]}" <<'EOF'
import glob, os, shutil, sys, tomllib
dest, locks = sys.argv[1], sys.argv[2:]
cache = glob.glob(os.path.expanduser("~/.cargo/registry/cache/*/"))
missing = []
for lock in locks:
    for p in tomllib.load(open(lock, "rb")).get("package", []):
        if "checksum" not in p or not p.get("source", "").startswith("registry+"):
            continue
        name = f"{p['name']}-{p['version']}.crate"
        if os.path.exists(os.path.join(dest, name)):
            continue
        found = [os.path.join(c, name) for c in cache if os.path.exists(os.path.join(c, name))]
        if found:
            shutil.copyfile(found[0], os.path.join(dest, name))
        else:
            missing.append(f"{name} ({lock})")
if missing:
    print("build-for-real: not in cargo's download cache:", *missing, sep="\n  ", file=sys.stderr)
EOF
if [[ " ${attrs[*]} " == *" checks.cargo-nextest "* ]]; then
  # dbus-fast for the chroot's CPython (3.13), installed there from this directory.
  mkdir -p "$host/wheels"
  python3 -m pip download --quiet --only-binary :all: --no-deps --dest "$host/wheels" \
    --implementation cp --python-version 3.13 --abi cp313 --platform manylinux2014_x86_64 \
    -r "$repo/benches/programs/dbus-fast-5.2/requirements.txt"
fi
chmod -R a+rX "$host"
if [[ " ${attrs[*]} " == *" checks.app-shellcheck "* ]]; then
  mkdir -p "$work/mutant-repo"
  (cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf -) |
    tar -x -C "$work/mutant-repo"
  # shellcheck disable=SC2016 # the defect, written literally
  printf '%s\n' 'echo $old_ref >/dev/null' >>"$work/mutant-repo/nix/compare.sh"
fi
chmod a+rx "$(dirname "$host")"
echo "$host" >"$work/stage"

# The builds, with Nix 2.26 in the chroot, this directory bound into it.
status=0
bash "$repo/nix/tests/modern-nix.sh" --packages "$chroot_packages" --bind "$work" --bind "$host" \
  bash nix/tests/build-for-real.sh --inside "$work" ${run_runner:+--run} "${attrs[@]}" || status=$?
if [ -n "${DBUS_MATRIX_BUILD_LOGS:-}" ]; then
  mkdir -p "$DBUS_MATRIX_BUILD_LOGS"
  cp "$work"/logs/*.log "$DBUS_MATRIX_BUILD_LOGS/" 2>/dev/null || true
  cp "$work"/results/*.json "$DBUS_MATRIX_BUILD_LOGS/" 2>/dev/null || true
fi
exit "$status"

