#!/bin/sh
# Runs the dbus-fast adapter with the Python of a venv that holds exactly
# requirements.txt (dbus-fast from PyPI, its hash checked; never the system
# site-packages). The venv lives under the workspace's target directory (or
# $DBUS_MATRIX_PROGRAM_BUILD_DIR) and is made on first use, or again when
# requirements.txt changes: built beside it and renamed into place, so
# parallel first runs do not see half a venv. $DBUS_MATRIX_DBUS_FAST_PYTHON
# names an interpreter that already has dbus-fast (Nix) and skips the venv.
# The venv is made by $DBUS_MATRIX_PYTHON3, the Python the runner supplies
# (harness::interpreter: Debian's /usr/bin/python3 in host mode).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${DBUS_MATRIX_DBUS_FAST_PYTHON:-}" ]; then
  exec "$DBUS_MATRIX_DBUS_FAST_PYTHON" "$here/adapter.py" "$@"
fi
out=${DBUS_MATRIX_PROGRAM_BUILD_DIR:-$here/../../target/programs}/dbus-fast-5.2
venv=$out/venv
if ! cmp -s "$here/requirements.txt" "$venv/requirements.txt" 2>/dev/null; then
  mkdir -p "$out"
  tmp=$out/venv.$$
  rm -rf "$tmp"
  {
    "${DBUS_MATRIX_PYTHON3:-python3}" -m venv "$tmp"
    "$tmp/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes \
      --only-binary :all: --no-deps -r "$here/requirements.txt"
  } >&2 || { rm -rf "$tmp"; echo "error: could not install dbus-fast into $tmp (python3-venv, PyPI)" >&2; exit 1; }
  cp "$here/requirements.txt" "$tmp/requirements.txt"
  # Another run may have finished first: keep one venv, drop ours.
  if cmp -s "$here/requirements.txt" "$venv/requirements.txt" 2>/dev/null; then
    rm -rf "$tmp"
  else
    rm -rf "$venv.old.$$"
    [ -d "$venv" ] && mv "$venv" "$venv.old.$$"
    mv "$tmp" "$venv"
    rm -rf "$venv.old.$$"
  fi
fi
exec "$venv/bin/python" "$here/adapter.py" "$@"
