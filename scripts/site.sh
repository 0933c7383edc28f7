#!/usr/bin/env bash
# The results site as CI checks it: built from every committed results file
# (docs/results, subdirectories too) with the ci profile's runner into
# benches/target/site, then driven in headless Chromium from file://
# (scripts/site-browser-test.py: no console errors, the compare view follows
# the runs picked and agrees with `compare`, a chart matches its results
# files, no sideways scroll at a phone's width).
# --screenshots also rewrites docs/screenshots/site-index.png and
# site-scenario.png, the README's pictures: regenerate them with this, never
# edit them by hand.
# Usage: scripts/site.sh [--screenshots]   (DBUS_MATRIX=path overrides the runner)
set -euo pipefail
cd "$(dirname "$0")/.."
runner=${DBUS_MATRIX:-benches/target/ci/dbus-matrix}
if [ ! -x "$runner" ]; then
  echo "site.sh: no runner at $runner (bash scripts/build.sh ci)" >&2
  exit 2
fi
shots=()
case "${1:-}" in
  --screenshots) shots=(--screenshots docs/screenshots) ;;
  "") ;;
  *) echo "usage: scripts/site.sh [--screenshots]" >&2; exit 2 ;;
esac
site=benches/target/site
"$runner" site docs/results --out "$site"
python3 scripts/site-browser-test.py --site "$site" --results docs/results --runner "$runner" "${shots[@]}"
