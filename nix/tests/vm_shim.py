"""A local stand-in for a NixOS test VM: the `machine` object of the NixOS
test driver, executing its commands on this host inside private mount and
PID namespaces in which a real dbus-daemon or dbus-broker is *the system bus*
at /run/dbus/system_bus_socket, configured as NixOS configures it.

    unshare --mount --pid --fork --mount-proc --propagation private \\
      python3 nix/tests/vm_shim.py SPEC.json

SPEC.json (written by nix/tests/vm_script_test.py): implementation ("dbus" or
"broker"), user (the VM test's normal user), cores and memory_mib (the VM's
size: the shim runs on that many of this host's CPUs, and /proc/meminfo says
MemTotal is the VM's memory less what a guest kernel keeps), script (the
testScript file),
policy (the text of the flake's system.d policy), path (directories put
first on PATH: the runner's wrapper), out (the test's `$out`). Exit 0 when the
script ran to its end, 1 when it raised (as the driver fails the test).

What the driver does, as read in nixpkgs
nixos/lib/test-driver/src/test_driver/machine/__init__.py (stored version
019697db): `execute(command, check_return, check_output, timeout=900)` runs
`timeout T bash -c "set -euo pipefail; COMMAND"` as root and returns (exit
status of that, stdout); `succeed(*commands)` raises on a non-zero status and
returns the joined output; `fail(*commands)` raises on status 0;
`copy_from_vm(source, target_dir)` copies `source` to `$out/target_dir/`.

What NixOS does, as read in nixpkgs (stored versions near our pin):
nixos/modules/services/system/dbus.nix (05924f71) makes /etc/dbus-1 with
pkgs.makeDBusConf { serviceDirectories = services.dbus.packages; }, and
the packages are pkgs.dbus, the system path and ours;
pkgs/development/libraries/dbus/make-dbus-conf.nix (05924f71) and
make-system-conf.xsl (23c50219) copy dbus' own system.conf without its
include, includedir, servicedir, standard_system_servicedirs and
servicehelper elements, then add a servicehelper and, per package, a
servicedir and the includedirs etc/dbus-1/system.d and share/dbus-1/system.d.
The units are dbus' and dbus-broker's own (systemd socket activation on
/run/dbus/system_bus_socket). Here: dbus' system.conf is Debian's
/usr/share/dbus-1/system.conf (the same upstream file), the packages are
/usr (dbus and the rest of the system) and the flake's policy; dbus-daemon
runs as `--address=systemd: --nofork --nopidfile --syslog-only` and
dbus-broker as `dbus-broker-launch --scope system` with the socket as fd 3
(LISTEN_FDS, LISTEN_PID) and a journal socket, as systemd starts them.
Not reproduced: `--audit` (no audit subsystem in a namespace) and
`--systemd-activation` (no service activation is used by the matrix).
"""

import json
import os
import pathlib
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

SOCKET = "/run/dbus/system_bus_socket"
# What a guest's kernel keeps of its RAM (MemTotal is less than -m): about
# 80 MiB for a 4 GiB guest; the script accepts anything above half the size.
GUEST_KERNEL_KIB = 80 * 1024
# make-system-conf.xsl drops these from dbus' system.conf.
DROPPED = {"include", "standard_system_servicedirs", "servicehelper", "servicedir", "includedir"}


class ShimError(Exception):
    pass


def nixos_system_conf(upstream, packages):
    """dbus' system.conf as NixOS' make-system-conf.xsl rewrites it."""
    tree = ET.parse(upstream)
    root = tree.getroot()
    for child in list(root):
        if child.tag in DROPPED:
            root.remove(child)
    helper = ET.SubElement(root, "servicehelper")
    helper.text = "/run/wrappers/bin/dbus-daemon-launch-helper"
    for package in packages:
        for tag, sub in (("servicedir", "share/dbus-1/system-services"), ("includedir", "etc/dbus-1/system.d"), ("includedir", "share/dbus-1/system.d")):
            ET.SubElement(root, tag).text = f"{package}/{sub}"
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE busconfig SYSTEM "busconfig.dtd">\n' + ET.tostring(root, encoding="unicode") + "\n"
    )


def mount(*args):
    subprocess.run(["mount", *args], check=True)


class Machine:
    """The NixOS test driver's `machine`, for the calls vm-tests/run-matrix.py makes."""

    def __init__(self, spec):
        self.spec = spec
        self.out_dir = pathlib.Path(spec["out"])
        self.daemon = None
        self.journal = []
        self.log = []
        self.env = dict(os.environ)
        self.env["PATH"] = ":".join(spec["path"] + [os.environ.get("PATH", "/usr/bin:/bin")])
        for var in ("DBUS_SYSTEM_BUS_ADDRESS", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"):
            self.env.pop(var, None)

    # -- the machine's state: what boot gives a NixOS VM --
    def _boot_hardware(self):
        """The VM's size, as the runner reads it: CPUs (available_parallelism,
        which follows the affinity mask) and MemTotal of /proc/meminfo."""
        cores, cpus = self.spec["cores"], sorted(os.sched_getaffinity(0))
        if len(cpus) < cores:
            raise ShimError(f"the VM has {cores} cores, this host gives us {len(cpus)} CPUs")
        os.sched_setaffinity(0, cpus[:cores])
        lines = pathlib.Path("/proc/meminfo").read_text().splitlines()
        total_kib = self.spec["memory_mib"] * 1024 - GUEST_KERNEL_KIB
        meminfo = pathlib.Path("/run/vm-shim/meminfo")
        meminfo.write_text("\n".join(f"MemTotal:       {total_kib} kB" if l.startswith("MemTotal:") else l for l in lines) + "\n")
        mount("--bind", str(meminfo), "/proc/meminfo")

    def _boot_filesystem(self):
        if os.getpid() != 1:
            raise ShimError("vm_shim.py runs as PID 1 of its own PID namespace (unshare --pid --fork --mount-proc)")
        # A private /run (the VM's), /tmp and /home; nothing of the host's.
        # The checkout stays visible at its own path where it lives under one
        # of them (CI clones into a temporary folder): held by a bind mount in
        # the test's work directory, then bound back into the fresh tmpfs.
        repo = pathlib.Path(__file__).resolve().parents[2]
        private = ("/run", "/tmp", "/home")
        held = pathlib.Path(self.spec["path"][0]).parent / "held-checkout"
        under_private = any(str(repo).startswith(d + "/") for d in private)
        if under_private:
            held.mkdir(exist_ok=True)
            mount("--bind", str(repo), str(held))
        for d in private:
            mount("-t", "tmpfs", "-o", "mode=0755", "vm-shim", d)
        os.chmod("/tmp", 0o1777)
        if under_private:
            repo.mkdir(parents=True)
            mount("--bind", str(held), str(repo))
        for d in ("/run/dbus", "/run/systemd/journal", "/run/vm-shim/policy/share/dbus-1/system.d", "/run/vm-shim/etc"):
            os.makedirs(d, exist_ok=True)
        self._boot_hardware()
        policy = pathlib.Path("/run/vm-shim/policy/share/dbus-1/system.d/dbus-matrix.conf")
        policy.write_text(self.spec["policy"])
        conf = pathlib.Path("/run/vm-shim/etc/system.conf")
        conf.write_text(nixos_system_conf("/usr/share/dbus-1/system.conf", ["/usr", "/run/vm-shim/policy"]))
        self.conf = conf
        # users.users.<user>.isNormalUser: group `users`, home /home/<user>,
        # a uid from 1000 (nixos/modules/config/users-groups.nix).
        user = self.spec["user"]
        passwd = pathlib.Path("/etc/passwd").read_text()
        if any(line.split(":")[0] == user for line in passwd.splitlines()):
            raise ShimError(f"user {user} exists on this host: the VM's user must be new")
        uids = {int(line.split(":")[2]) for line in passwd.splitlines() if line.count(":") >= 6}
        uid = next(u for u in range(1000, 60000) if u not in uids)
        users_gid = int(subprocess.run(["getent", "group", "users"], check=True, capture_output=True, text=True).stdout.split(":")[2])
        shadow_passwd = pathlib.Path("/run/vm-shim/etc/passwd")
        shadow_passwd.write_text(passwd.rstrip("\n") + f"\n{user}:x:{uid}:{users_gid}::/home/{user}:/bin/sh\n")
        mount("--bind", str(shadow_passwd), "/etc/passwd")
        os.makedirs(f"/home/{user}", mode=0o700)
        os.chown(f"/home/{user}", uid, users_gid)

    def _journal_listener(self):
        journal = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        journal.bind("/run/systemd/journal/socket")

        def read():
            while True:
                try:
                    self.journal.append(journal.recv(65536).decode(errors="replace"))
                except OSError:
                    return

        threading.Thread(target=read, daemon=True).start()

    def start(self):
        self._boot_filesystem()
        self._journal_listener()
        # dbus.socket: the listening socket, world-connectable (SocketMode=0666).
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(SOCKET)
        os.chmod(SOCKET, 0o666)
        listener.listen(4096)
        impl = self.spec["implementation"]
        if impl == "dbus":
            command = ["dbus-daemon", f"--config-file={self.conf}", "--address=systemd:", "--nofork", "--nopidfile", "--syslog-only"]
        elif impl == "broker":
            command = ["dbus-broker-launch", "--scope", "system", "--config-file", str(self.conf)]
        else:
            raise ShimError(f"unknown services.dbus.implementation {impl!r}")
        fd = listener.fileno()
        # LISTEN_PID must be the daemon's own pid: sh sets it, moves the
        # socket to fd 3 and execs.
        self.daemon = subprocess.Popen(
            ["sh", "-c", f'LISTEN_PID=$$ exec "$@" 3<&{fd} {fd}<&-', "sh", *command],
            env={**self.env, "LISTEN_FDS": "1"},
            pass_fds=(fd,),
            stdin=subprocess.DEVNULL,
        )
        listener.close()

    def wait_for_unit(self, unit, user=None, timeout=900):
        # multi-user.target is reached once the system bus answers.
        if unit != "multi-user.target" or user is not None:
            raise ShimError(f"the shim knows only multi-user.target, not {unit!r}")
        deadline = time.monotonic() + min(timeout, 60)
        while time.monotonic() < deadline:
            if self.daemon.poll() is not None:
                raise ShimError(f"the system bus exited with {self.daemon.returncode}; journal: {self.journal}")
            status, _ = self.execute(
                "dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.GetId",
                timeout=10,
            )
            if status == 0:
                return
            time.sleep(0.2)
        raise ShimError(f"the system bus did not answer in 60 s; journal: {self.journal}")

    def wait_for_file(self, filename, timeout=900):
        deadline = time.monotonic() + min(timeout, 60)
        while time.monotonic() < deadline:
            if self.execute(f"test -e {shlex.quote(filename)}")[0] == 0:
                return
            time.sleep(0.2)
        raise ShimError(f"{filename} did not appear")

    def execute(self, command, check_return=True, check_output=True, timeout=900):
        argv = ["bash", "-c", f"set -euo pipefail; {command}"]
        if timeout is not None:
            argv = ["timeout", str(timeout), *argv]
        done = subprocess.run(argv, stdout=subprocess.PIPE, env=self.env, cwd="/")
        out = done.stdout.decode(errors="replace")
        self.log.append((command, done.returncode))
        if not check_return:
            return -1, out
        return done.returncode, out

    def succeed(self, *commands, timeout=900):
        output = ""
        for command in commands:
            status, out = self.execute(command, timeout=timeout)
            if status != 0:
                raise Exception(f"command `{command}` failed (exit code {status})")
            output += out
        return output

    def fail(self, *commands, timeout=900):
        output = ""
        for command in commands:
            status, out = self.execute(command, timeout=timeout)
            if status == 0:
                raise Exception(f"command `{command}` unexpectedly succeeded")
            output += out
        return output

    def copy_from_vm(self, source, target_dir=""):
        src = pathlib.Path(source)
        target = self.out_dir / target_dir / src.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target)
        else:
            shutil.copy(src, target)

    copy_from_machine = copy_from_vm


def main():
    spec = json.loads(pathlib.Path(sys.argv[1]).read_text())
    machine = Machine(spec)
    script = pathlib.Path(spec["script"]).read_text()
    try:
        exec(compile(script, "<testScript>", "exec"), {"machine": machine, "__name__": "testScript"})
    except Exception as e:  # the driver fails a test on any exception
        if machine.journal:
            last = [" ".join(m.split("MESSAGE=", 1)[-1].splitlines()[:1]) for m in machine.journal[-10:]]
            print("vm_shim: system bus journal (last messages):\n  " + "\n  ".join(last), file=sys.stderr)
        print(f"vm_shim: the test script raised {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
