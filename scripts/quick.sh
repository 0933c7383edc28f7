#!/usr/bin/env bash
# Host mode, no Nix: install what is missing, build what the run needs (all of
# it, or only the adapters you select and the reference), run the quick matrix.
# Results go to ./results/<time>-quick.json; the table is printed at the end.
# Extra arguments go to `dbus-matrix run` (e.g. --adapters zbus-6,rustbus-0.19).
set -euo pipefail
cd "$(dirname "$0")/.."
# Under `nix develop` the dev shell's inputs are the dependencies: nothing is
# installed (nix/tests/devshell_scripts_test.py).
if [ -z "${IN_NIX_SHELL:-}" ]; then
  bash scripts/install-deps-debian.sh runtime
fi
# The same build CI runs (scripts/test.sh), for the release profile.
bash scripts/build.sh release --profile quick "$@"
exec benches/target/release/dbus-matrix run --profile quick --out results "$@"
