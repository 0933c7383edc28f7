#!/usr/bin/env bash
# The one build of host mode: everything a `dbus-matrix run` with the given
# arguments needs, for a cargo profile, then the run's own preflight (every
# binary there, every adapter able to say what it is). scripts/quick.sh
# (release) and scripts/test.sh (ci) both build through here, so CI takes the
# path the main job takes.
#
# What to build comes from the runner (`run --list-builds`): the selected
# adapters and the reference of the profile's roles, workspace members with
# `-p`, adapters with a lockfile of their own with `--manifest-path` into the
# same target directory. No selection: the whole workspace (test tools too).
#
# Usage: scripts/build.sh PROFILE [dbus-matrix run arguments]
#   e.g. scripts/build.sh release --profile quick --adapters zbus-6,rustbus-0.19
set -euo pipefail
profile=${1:?usage: scripts/build.sh PROFILE [dbus-matrix run arguments]}
shift
cd "$(dirname "$0")/../benches"
export PATH="$HOME/.cargo/bin:$PATH"
step() { printf '\n==> %s\n' "$*" >&2; }

dir=$profile
[ "$profile" = dev ] && dir=debug
bin_dir=target/$dir
runner=("$bin_dir/dbus-matrix" --matrix ../matrix.toml --bin-dir "$bin_dir")

selected=false
for arg in "$@"; do
  case $arg in --adapters | --adapters=*) selected=true ;; esac
done

step "cargo build --profile $profile -p dbus-matrix (the runner: it says what the run needs)"
cargo build --profile "$profile" --locked -p dbus-matrix
# Captured first: a bad argument stops here with the runner's exit 2.
needs=$("${runner[@]}" run --list-builds "$@")

packages=()
manifests=()
while read -r kind what; do
  case $kind in
    package) packages+=(-p "$what") ;;
    manifest) manifests+=("$what") ;;
    *) echo "build.sh: unexpected line from run --list-builds: $kind $what" >&2; exit 2 ;;
  esac
done <<<"$needs"

if ! $selected; then
  step "cargo build --profile $profile --workspace (every adapter, the runner, the test tools)"
  cargo build --profile "$profile" --locked --workspace
elif [ ${#packages[@]} -gt 0 ]; then
  step "cargo build --profile $profile ${packages[*]}"
  cargo build --profile "$profile" --locked "${packages[@]}"
fi
for manifest in ${manifests[@]+"${manifests[@]}"}; do
  # A workspace of its own, into the same target directory: its binary sits next to the runner.
  step "cargo build --profile $profile --manifest-path $manifest (its own lockfile)"
  cargo build --profile "$profile" --locked --manifest-path "$manifest" --target-dir target
done

step "preflight: every adapter the run needs is built and says what it is"
"${runner[@]}" run --preflight "$@"
