#!/usr/bin/env bash
# Runs a command with a modern Nix (Debian trixie's nix-bin, 2.26) beside the
# host's Debian 12 Nix (2.8): inside a Debian trixie chroot, entered in a
# private mount namespace, so that the host's mounts are never touched.
#
# Usage: bash nix/tests/modern-nix.sh [--packages "PKG..."] [--bind DIR]... COMMAND [ARG...]
#   The repository is bound read-only into the chroot at its own path (and so
#   is its git directory, which a worktree keeps elsewhere) and COMMAND runs
#   there (e.g. `bash nix/tests/run.sh --nix-only`). Nix writes only to the
#   chroot's /nix/store and /tmp. Needs root (debootstrap, chroot, mounts).
#   --packages: Debian packages the command needs in the chroot, installed
#   with the chroot's apt once (nix/tests/build-for-real.sh: the programs its
#   stand-in for nixpkgs links to). --bind: a host directory bound read-write
#   at its own path.
#
# The chroot is made once per machine and cached in $DBUS_MATRIX_NIX_CHROOT
# (default /var/cache/dbus-matrix/nix-trixie): debootstrap writes DIR.tmp and
# only a finished one is renamed to DIR, so a half-made chroot is never used.
# Made from the Debian registry apt uses here (about 6 minutes, ~420 MB).
set -euo pipefail

chroot_dir=${DBUS_MATRIX_NIX_CHROOT:-/var/cache/dbus-matrix/nix-trixie}
mirror=${DBUS_MATRIX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
repo=$(cd "$(dirname "$0")/../.." && pwd)
git_dir=$(cd "$repo" && cd "$(git rev-parse --git-common-dir)" && pwd)
# libdbi-perl: nix-bin needs libdbd-sqlite3-perl, which needs the virtual
# perl-dbdabi-94 that libdbi-perl provides; debootstrap does not resolve
# virtual packages, so without it nix-bin stays unconfigured.
packages=nix-bin,git,ca-certificates,libdbi-perl,python3,diffutils

extra_packages=()
binds=()
while [ "$#" -gt 0 ]; do
  case $1 in
    --packages) read -r -a extra_packages <<<"${2:?--packages needs a list}"; shift 2 ;;
    --bind) binds+=("$(cd "${2:?--bind needs a directory}" && pwd)"); shift 2 ;;
    *) break ;;
  esac
done
if [ "$#" -eq 0 ]; then
  echo "usage: $0 [--packages \"PKG...\"] [--bind DIR]... COMMAND [ARG...]" >&2
  exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "$0: needs root (debootstrap, chroot and mounts in a private namespace)" >&2
  exit 2
fi

make_chroot() {
  if ! command -v debootstrap >/dev/null 2>&1; then
    echo "modern-nix: installing debootstrap" >&2
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq debootstrap >/dev/null
  fi
  echo "modern-nix: making the Debian trixie chroot in $chroot_dir (once per machine, ~6 min)" >&2
  rm -rf "$chroot_dir.tmp"
  mkdir -p "$(dirname "$chroot_dir")"
  debootstrap --variant=minbase --include="$packages" trixie "$chroot_dir.tmp" "$mirror" \
    >"$chroot_dir.tmp.log" 2>&1 || {
    echo "modern-nix: debootstrap failed; the end of $chroot_dir.tmp.log:" >&2
    tail -n 30 "$chroot_dir.tmp.log" >&2
    exit 1
  }
  mv "$chroot_dir.tmp" "$chroot_dir"
}

[ -x "$chroot_dir/usr/bin/nix" ] || make_chroot

# Packages asked for and not yet in the chroot, by the chroot's own apt (it
# resolves what debootstrap's --include would not).
missing=()
for p in ${extra_packages[@]+"${extra_packages[@]}"}; do
  chroot "$chroot_dir" dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "modern-nix: installing in the chroot: ${missing[*]}" >&2
  # shellcheck disable=SC2016 # the script's $1 and $@ are its own
  unshare -m --propagation private -- /bin/bash -euo pipefail -c '
    root=$1
    shift
    mount --rbind /proc "$root/proc"
    mount --rbind /dev "$root/dev"
    chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin DEBIAN_FRONTEND=noninteractive \
      /bin/sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends \"\$@\" >/dev/null" apt "$@"
  ' install "$chroot_dir" "${missing[@]}"
fi

# In a new mount namespace whose mounts do not propagate back: /proc, /dev and
# the repository bound into the chroot, gone when the command ends.
# shellcheck disable=SC2016 # the script's $1 and $@ are its own
exec unshare -m --propagation private -- /bin/bash -euo pipefail -c '
  root=$1 repo=$2 git_dir=$3 binds=$4
  shift 4
  mount --rbind /proc "$root/proc"
  mount --rbind /dev "$root/dev"
  for dir in "$repo" "$git_dir"; do
    if ! mountpoint -q "$root$dir"; then
      mkdir -p "$root$dir"
      mount --bind "$dir" "$root$dir"
      mount -o remount,bind,ro "$root$dir"
    fi
  done
  while IFS= read -r dir; do
    [ -n "$dir" ] || continue
    mkdir -p "$root$dir"
    mount --bind "$dir" "$root$dir"
  done <<<"$binds"
  exec chroot "$root" /usr/bin/env -i \
    HOME=/root USER=root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
    /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$repo" "$@"
' modern-nix "$chroot_dir" "$repo" "$git_dir" "$(printf '%s\n' ${binds[@]+"${binds[@]}"})" "$@"
