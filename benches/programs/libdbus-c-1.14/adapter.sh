#!/bin/sh
# Runs the libdbus C adapter, building it first when it is missing or older
# than its sources: cc with pkg-config's flags for dbus-1 (Debian
# libdbus-1-dev; Nix: dbus.dev + pkg-config), into the workspace's target
# directory (or $DBUS_MATRIX_PROGRAM_BUILD_DIR). Atomic: parallel first runs
# each build their own file and rename it into place.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${DBUS_MATRIX_PROGRAM_BUILD_DIR:-$here/../../target/programs}/libdbus-c-1.14
bin=$out/adapter
stale=0
[ -x "$bin" ] || stale=1
for f in "$here"/*.c "$here"/*.h "$0"; do [ "$f" -nt "$bin" ] && stale=1; done
if [ "$stale" = 1 ]; then
  mkdir -p "$out"
  cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Wall -Wextra -Werror -o "$bin.$$" "$here"/*.c \
    $(pkg-config --cflags --libs dbus-1) -lm
  mv -f "$bin.$$" "$bin"
fi
exec "$bin" "$@"
