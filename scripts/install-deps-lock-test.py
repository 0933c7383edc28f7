#!/usr/bin/env python3
"""install-deps-debian.sh waits for dpkg's lock (issue 42, 16).

On a fresh Debian machine unattended-upgrades holds dpkg's lock at boot, and
the installer's apt-get failed at once (exit 100, "Could not get lock").
This test holds the real lock (/var/lib/dpkg/lock-frontend, the fcntl lock
apt-get takes) for a few seconds while the real installer runs its real
apt-get: the installer must wait, say that it waits, and succeed. Only
dpkg-query is stood in, to report one package of the installer's list as
missing so that apt-get runs at all (reinstalling nothing: the package is
installed, apt-get finds nothing to do once it has the lock).

Usage: scripts/install-deps-lock-test.py [INSTALLER]   (root; the default
INSTALLER is scripts/install-deps-debian.sh; exit 1 if it did not wait)
"""

import fcntl
import os
import subprocess
import sys
import tempfile
import threading
import time

HOLD_S = 6
LOCK = "/var/lib/dpkg/lock-frontend"
MISSING = "dbus-daemon"


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    installer = sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo, "scripts/install-deps-debian.sh")
    if os.geteuid() != 0:
        print("install-deps-lock-test: SKIPPED: needs root (dpkg's lock and apt-get)", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as stubs:
        # dpkg-query: MISSING is not installed, everything else as dpkg says.
        with open(os.path.join(stubs, "dpkg-query"), "w") as f:
            f.write(
                "#!/bin/sh\n"
                f'for a in "$@"; do [ "$a" = {MISSING} ] && exit 1; done\n'
                'exec /usr/bin/dpkg-query "$@"\n'
            )
        os.chmod(os.path.join(stubs, "dpkg-query"), 0o755)
        env = dict(os.environ, PATH=stubs + ":" + os.environ["PATH"])
        lock = open(LOCK, "a")
        fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        threading.Timer(HOLD_S, lock.close).start()  # closing the file releases the lock
        start = time.monotonic()
        p = subprocess.run(["bash", installer], env=env, cwd=repo, capture_output=True, text=True, timeout=900)
        took = time.monotonic() - start
    out = p.stdout + p.stderr
    failures = []
    if p.returncode != 0:
        failures.append(f"the installer exited {p.returncode} while another process held dpkg's lock")
    if f"installing Debian packages: {MISSING}" not in out:
        failures.append("apt-get did not run (the stand-in dpkg-query was not used)")
    if "waits" not in out:
        failures.append("the installer did not say that it waits for dpkg's lock")
    if p.returncode == 0 and took < HOLD_S:
        failures.append(f"done in {took:.1f} s, before the lock was released ({HOLD_S} s)")
    if failures:
        print("install-deps-lock-test: FAILED:", *failures, "the installer's output:", out[-3000:], sep="\n  ")
        return 1
    print(f"install-deps-lock-test: the installer waited for dpkg's lock and succeeded ({took:.1f} s, lock held {HOLD_S} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
