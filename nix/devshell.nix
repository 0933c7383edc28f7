# `nix develop`: the build environment of the workspace, its tests,
# scripts/test.sh and nix/tests/run.sh (nix/tests/devshell_test.py proves
# it against the model). crane's devShell (lib/devShell.nix) adds rustc,
# cargo, clippy and rustfmt; inputsFrom takes every input of the
# cargo-nextest check: pkg-config with dbus.dev, glib.dev and systemd.dev
# (the -sys crates' pkg-config modules), the three daemons, valgrind,
# chromium, critcmp, Ruby and the program adapters' Python. The shell sets the
# variables that check sets for the tests (DBUS_MATRIX_BUILD_MODE among them). Added here: what the sandboxed
# check leaves out (the real-client tests' gdbus, busctl and dbus-send, git,
# the namespace tools) and the Nix lints.
{ pkgs, craneLib, buses, programs, nextest }:
craneLib.devShell ({
  inputsFrom = [ nextest ];
  packages = [
    pkgs.cargo-nextest
    pkgs.glib.bin # gdbus
    pkgs.systemd # busctl
    pkgs.dbus # dbus-send
    pkgs.git
    pkgs.util-linux # unshare, mount, setpriv
    pkgs.procps # pgrep
    pkgs.getent
    pkgs.deadnix
    pkgs.nixpkgs-fmt
  ];
  DBUS_MATRIX_DBUS_FAST_PYTHON = "${programs.checkPython}/bin/python3";
  # The program adapters' interpreters, which the runner supplies
  # (harness::interpreter): here there is no Debian /usr/bin/python3.
  DBUS_MATRIX_PYTHON3 = "${programs.checkPython}/bin/python3";
  DBUS_MATRIX_RUBY = "${pkgs.ruby}/bin/ruby";
  GI_TYPELIB_PATH = programs.checkTypelibPath;
  # Its Ruby is the check's, without the ruby-dbus gem: that row is unavailable.
  DBUS_MATRIX_BUILD_MODE = "nix";
} // buses.daemonEnv)
