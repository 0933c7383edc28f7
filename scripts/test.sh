#!/usr/bin/env bash
# Every test, as CI runs it: install what is missing, format and lint checks,
# build, the Rust test suites (verification, smoke run of the whole matrix,
# fault injection, bus teardown, ...), then the Nix checks: the host's part,
# the offline checks under Nix 2.26, and the flake's crane builds for real.
set -euo pipefail
cd "$(dirname "$0")/.."
# Under `nix develop` the dev shell's inputs are the dependencies (nix/tests/devshell_test.py).
if [ -z "${IN_NIX_SHELL:-}" ]; then
  bash scripts/install-deps-debian.sh all
fi
export PATH="$HOME/.cargo/bin:$PATH"

# Each step says how long the run has taken so far: CI's budget is 45 minutes on a fresh machine.
step() { printf '\n==> [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
cd benches
# Adapters with a lockfile of their own are Cargo workspaces of their own (see
# matrix.toml's header): `--all` and `--workspace` do not reach them.
own_lock=($(shopt -s nullglob; echo adapters/*/Cargo.lock))
own_lock=("${own_lock[@]/%Cargo.lock/Cargo.toml}")
step "cargo fmt --check"
cargo fmt --all --check
step "the runner's import graph has no circle (between rooms, or modules of one folder)"
python3 ../scripts/runner-import-graph.py --tests
for manifest in "${own_lock[@]}"; do
  cargo fmt --manifest-path "$manifest" --check
done
# The build scripts/quick.sh runs, for the ci profile (release without LTO, see
# benches/Cargo.toml), of the whole matrix: every adapter (own lockfiles too),
# the runner, the test tools, then the run's preflight over every adapter.
bash ../scripts/build.sh ci
step "cargo clippy (deny warnings)"
cargo clippy --profile ci --workspace --all-targets -- -D warnings
for manifest in "${own_lock[@]}"; do
  cargo clippy --profile ci --locked --manifest-path "$manifest" --target-dir target --all-targets -- -D warnings
done
step "the adapter template compiles (template/adapter: cargo check against a stub library)"
bash ../scripts/check-template.sh
# Every test runs once: those the Nix sandbox cannot run (the nix-sandbox
# profile's filter, negated) here as root, the rest below as the sandbox runs
# them (nobody, no network). Running the whole suite twice took CI past 45 minutes.
step "cargo nextest: the tests the Nix sandbox leaves out (profile ci, as root)"
sandbox_filter=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["profile"]["nix-sandbox"]["default-filter"])' .config/nextest.toml)
cargo nextest run --cargo-profile ci --workspace --no-fail-fast -E "not ($sandbox_filter)"
cd ..
step "cargo nextest: every other test, as the flake's cargo-nextest check runs it in the Nix build sandbox (check layout, profile nix-sandbox, nobody, no network)"
bash nix/tests/sandbox-nextest.sh
step "docs/benchmarking.md's profile table is what scripts/profile-table.py makes of the committed runs"
python3 scripts/profile-table.py --runner benches/target/ci/dbus-matrix --check
if [ -z "${IN_NIX_SHELL:-}" ]; then
  step "install-deps-debian.sh waits for dpkg's lock while another process holds it (scripts/install-deps-lock-test.py)"
  python3 scripts/install-deps-lock-test.py
fi
step "the results site: built from docs/results, driven in headless Chromium from file:// (scripts/site.sh)"
bash scripts/site.sh
step "the Nix checks of the host: the VM script against real buses, the dev shell's scans, deadnix, nixpkgs-fmt, actionlint"
bash nix/tests/run.sh --host-only
# The pinned nixpkgs needs Nix >= 2.18: Debian 12's 2.8 cannot evaluate the flake.
step "offline Nix checks under Nix 2.26 (Debian trixie's nix-bin in a cached chroot): parse, flake check against the model stubs, wiring, mutants, nixpkgs model"
bash nix/tests/modern-nix.sh bash nix/tests/run.sh --nix-only
step "the flake's crane builds, for real (nix/tests/build-for-real.sh: Nix 2.26, crane at its pin, a build user; skipped, saying so, without crane's source)"
bash nix/tests/build-for-real.sh
step "done"
