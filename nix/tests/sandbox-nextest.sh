#!/usr/bin/env bash
# The flake's cargo-nextest check, run without Nix the way the Nix build
# sandbox runs it, to show that it passes there (CI has no Nix builder):
#
#   layout   /build/source = the workspace as nix/source.nix gives it to crane
#            (crane's filterCargoSources: *.rs, *.toml, Cargo.lock; no target/;
#            plus the test fixtures and snapshots and the program adapters, programs/),
#            and beside it what the check's postUnpack copies: matrix.toml,
#            docs/results.schema.json, docs/results/ (here under a temp dir)
#   target   source/target/ci = a copy of the build scripts/test.sh just made
#            (crane copies the workspace build's target/ in the same way); the
#            copy keeps mtimes, so cargo finds it fresh: no rebuild. The profile
#            is `ci` (release without LTO, benches/Cargo.toml), the flake's
#            checks' and scripts/test.sh's, so that CI builds the workspace once
#   deps     cargo's registry cache at the path the release build used (crane
#            vendors them instead, in both of its derivations alike; a vendored
#            copy here would change their source paths and rebuild everything),
#            read-only, with CARGO_NET_OFFLINE: cargo never needs the network
#   user     nobody:nogroup (the sandbox's build user is not root either),
#            HOME=/homeless-shelter, TMPDIR in the build dir; the toolchain
#            and cargo's home, under root's home, which nobody cannot enter,
#            are bound read-only into an empty one in a private mount namespace
#   network  none: a new network namespace (unshare -n)
#   command  crane's cargoNextest with nix/checks.nix's arguments, word for word:
#              cargo nextest run --cargo-profile ci --locked --workspace \
#                --no-fail-fast --profile nix-sandbox
#            after the check's preCheck (which prints what nix-sandbox leaves out
#            and copies the own-lockfile adapters' binaries next to the runner)
#
#   ruby     the check's Ruby has no ruby-dbus gem (not in nixpkgs): Debian's
#            is hidden from Ruby in the mount namespace (without-ruby-dbus.sh;
#            the script fails if it still loads), and DBUS_MATRIX_BUILD_MODE=nix
#            as the check sets it, so the runner makes that row's cells
#            unsupported and the tests expect exactly that
#
# Not reproduced: the Nix store's daemons and tools (Debian's dbus-daemon,
# dbus-broker, valgrind, chromium, Ruby and the cargo-installed busd, critcmp
# stand in for them) and the sandbox's missing util-linux (`unshare` stays on
# PATH here, but the nix-sandbox profile runs no test that uses it).
#
# Usage: bash nix/tests/sandbox-nextest.sh [NEXTEST ARGUMENTS]   (as root, after
#   `cargo build --profile ci --workspace` and `cargo nextest run --cargo-profile ci` in benches/)
# Arguments are appended to the check's command, for a part of it while
# debugging (`-E 'test(/props/)'`: the profile's filter still applies);
# scripts/test.sh passes none.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
ws=$repo/benches
profile=nix-sandbox

if [ "$(id -u)" -ne 0 ]; then
  echo "$0: needs root (a user switch and a network namespace)" >&2
  exit 2
fi
if [ ! -x "$ws/target/ci/dbus-matrix" ]; then
  echo "$0: no ci build in $ws/target: run cargo build --profile ci --workspace first" >&2
  exit 2
fi
export PATH="$HOME/.cargo/bin:$PATH"
toolchain=$(rustc --print sysroot)
# cargo-nextest may live outside cargo's home (this machine image has it in /usr/local/bin).
nextest_bin=$(command -v cargo-nextest) || {
  echo "$0: cargo-nextest is not on PATH" >&2
  exit 2
}
cargo_home=${CARGO_HOME:-$HOME/.cargo}
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
for dir in "$toolchain" "$rustup_home" "$cargo_home"; do
  case "$dir" in "$HOME"/*) ;; *)
    echo "$0: expects rustup's toolchain and cargo's home under \$HOME ($HOME), not $dir" >&2
    exit 2
    ;;
  esac
done

# A short prefix: the real sandbox builds in /build, and unix socket paths the
# tests create under $TMPDIR must stay within sun_path (108 bytes) here too.
sim=$(mktemp -d /tmp/dms.XXXXXX)
trap 'rm -rf "$sim"' EXIT
chmod 755 "$sim"
build=$sim/build
mkdir -p "$build/source/target" "$build/tmp" "$sim/hold/cargo" "$sim/hold/rustup"

t0=$(date +%s)
# unpack: what nix/source.nix keeps (tar keeps the files' mtimes), the
# program adapters (programs/) among it. Their shebangs stay as written
# (`#!/usr/bin/env python3`: the runner supplies Debian's /usr/bin/python3,
# which has python3-jeepney), where the check patches them to its Python.
(cd "$ws" && find . -path ./target -prune -o -type f \( -name '*.rs' -o -name '*.toml' -o -name Cargo.lock -o -path '*/.cargo/config' -o -path './runner/tests/fixtures/*' -o -path './runner/tests/snapshots/*' -o -path './programs/*' \) -print0) |
  tar -C "$ws" --null -T - -cf - | tar -C "$build/source" -xf -
# postUnpack of the cargo-nextest check (nix/checks.nix).
cp "$repo/matrix.toml" "$build/matrix.toml"
ln -s source "$build/benches"
mkdir -p "$build/docs"
cp "$repo/docs/results.schema.json" "$build/docs/results.schema.json"
cp -r "$repo/docs/results" "$build/docs/results"
# cargoArtifacts: the build scripts/test.sh made. The adapters with a lockfile
# of their own are not in the check's workspace build: they are packages of
# their own, whose binaries the check's preCheck copies next to the runner.
# Here they are taken out of the copy and put back the same way.
cp -a "$ws/target/ci" "$build/source/target/ci"
own_bins="$build/own-lockfile-adapters"
mkdir -p "$own_bins"
for lock in "$ws"/adapters/*/Cargo.lock; do
  [ -e "$lock" ] || continue
  package=$(sed -n 's/^name = "\(.*\)"$/\1/p' "$(dirname "$lock")/Cargo.toml" | head -1)
  mv "$build/source/target/ci/$package" "$own_bins/"
done
# dbus-fast: the check's Python has it from nixpkgs (DBUS_MATRIX_DBUS_FAST_PYTHON);
# here host mode's venv (install-deps made it) stands in, as there is no network.
fast_venv=$(ls -d "$ws"/target/programs/dbus-fast-*/venv 2>/dev/null | head -1)
if [ -z "$fast_venv" ]; then
  echo "$0: no dbus-fast venv under $ws/target/programs (scripts/install-deps-debian.sh makes it)" >&2
  exit 2
fi
cp -r "$fast_venv" "$build/dbus-fast-venv"
chown -R nobody:nogroup "$build"
t2=$(date +%s)
echo "sandbox-nextest: layout in $build ($((t2 - t0)) s)"

# The check's environment: the daemons as buses.daemonEnv pins them.
check_env=(
  PATH="$toolchain/bin:$cargo_home/bin:$(dirname "$nextest_bin"):/usr/bin:/bin"
  HOME=/homeless-shelter
  TMPDIR="$build/tmp"
  CARGO_HOME="$cargo_home"
  RUSTUP_HOME="$rustup_home"
  CARGO_NET_OFFLINE=true
  CARGO_PROFILE=ci
  CARGO_BUILD_JOBS="$(nproc)"
  DBUS_MATRIX_DBUS_DAEMON="$(command -v dbus-daemon)"
  DBUS_MATRIX_DBUS_BROKER_LAUNCH="$(command -v dbus-broker-launch)"
  DBUS_MATRIX_BUSD="$cargo_home/bin/busd"
  DBUS_MATRIX_DBUS_FAST_PYTHON="$build/dbus-fast-venv/bin/python"
  DBUS_MATRIX_BUILD_MODE=nix
  TERM=dumb
)
# preCheck, then crane's checkPhaseCargoCommand with our arguments.
# shellcheck disable=SC2016 # expanded by the inner shell, as in the check
check_script='
  echo "cargo-nextest: profile '"$profile"' of .config/nextest.toml; these tests are left out here and run in .ci/run:"
  sed -n "/^\[profile.'"$profile"'\]/,/^\[/p" .config/nextest.toml
  for bin in '"$own_bins"'/*; do [ ! -e "$bin" ] || cp "$bin" "${CARGO_TARGET_DIR:-target}/$CARGO_PROFILE/"; done
  set -x
  cargo nextest run ${CARGO_PROFILE:+--cargo-profile $CARGO_PROFILE} --locked --workspace --no-fail-fast --profile '"$profile"' "$@"
'

# A new network namespace and a private mount namespace in which root's home
# (which nobody cannot enter) is an empty tmpfs holding read-only binds of the
# rustup toolchains and of cargo's bin/ and registry/ (at their own paths, so
# cargo sees the sources the release build used); cargo's home itself is
# nobody's (cargo takes its package-cache lock there); and Ruby has no
# ruby-dbus. Then nobody runs the check in source/.
unshare -m -n --propagation private -- /bin/bash -euo pipefail -c '
  sim=$1 home=$2 cargo_home=$3 rustup_home=$4 build=$5 repo=$6
  shift 6
  . "$repo/nix/tests/without-ruby-dbus.sh"
  without_ruby_dbus "$sim/hold"
  mount --bind "$cargo_home" "$sim/hold/cargo"
  mount --bind "$rustup_home" "$sim/hold/rustup"
  mount -t tmpfs -o mode=755 dbus-matrix-sandbox "$home"
  mkdir -p "$cargo_home" "$rustup_home"
  mount --bind "$sim/hold/rustup" "$rustup_home"
  mount -o remount,bind,ro "$rustup_home"
  for d in bin registry; do
    mkdir -p "$cargo_home/$d"
    mount --bind "$sim/hold/cargo/$d" "$cargo_home/$d"
    mount -o remount,bind,ro "$cargo_home/$d"
  done
  chown nobody:nogroup "$cargo_home"
  cd "$build/source"
  exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- /usr/bin/env -i "$@"
' sandbox-nextest "$sim" "$HOME" "$cargo_home" "$rustup_home" "$build" "$repo" "${check_env[@]}" /bin/bash -euo pipefail -c "$check_script" check "$@"
t3=$(date +%s)
echo "sandbox-nextest: the check's command passed as nobody without network ($((t3 - t2)) s; $((t3 - t0)) s in all)"
