#!/usr/bin/env bash
# Host mode, no Nix: install what is missing, build everything, run the quick matrix.
# Results go to ./results/<time>-quick.json; the table is printed at the end.
# Extra arguments go to `dbus-matrix run` (e.g. --adapters zbus-6,raw).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps-debian.sh runtime
export PATH="$HOME/.cargo/bin:$PATH"
cargo build --release --workspace --manifest-path benches/Cargo.toml
exec benches/target/release/dbus-matrix run --profile quick --out results "$@"
