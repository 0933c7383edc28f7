# `nix flake check`: the Rust checks (rustfmt, clippy with warnings denied,
# nextest), the Nix lints (deadnix, nixpkgs-fmt), the NixOS VM tests, the
# apps' scripts (built: `bash -n`) and shellcheck over the apps' texts.
{ pkgs, craneLib, workspace, matrix, buses, adapters, programs, vmTests, appScripts, appTexts }:
let
  # Every Cargo check builds in the ci profile (nix/workspace.nix) on the
  # ci dependency build. A check that nothing builds on (every one but
  # workspaceBuild) does not install cargo's target directory
  # (doInstallCargoArtifacts, crane's lib/mkCargoDerivation.nix: default
  # true; cargoNextest's own default true): its output is a stamp.
  inherit (workspace) ciArgs ciArtifacts;
  leaf = { doInstallCargoArtifacts = false; };
  nextestProfile = "nix-sandbox";

  # Adapters with a lockfile of their own are not in the workspace build: the
  # tests find every adapter next to the runner, so their packages' binaries
  # (release) are copied there (crane's target directory, ci profile).
  placeOwnLockfileAdapters = builtins.concatStringsSep "\n" (map
    (a: ''cp ${adapters.packages.${a.id}}/bin/${a.package} "''${CARGO_TARGET_DIR:-target}/ci/"'')
    adapters.ownLockfile);

  # Their fmt and clippy checks: `--all`/`--workspace` do not reach them.
  ownLockfileChecks = builtins.listToAttrs (builtins.concatMap
    (a:
      let args = adapters.buildArgs a; in
      [
        {
          name = "cargo-fmt-${a.id}";
          value = craneLib.cargoFmt (ciArgs // leaf // {
            pname = a.package;
            cargoExtraArgs = "--manifest-path ${adapters.manifest a}";
          });
        }
        {
          name = "cargo-clippy-${a.id}";
          value = craneLib.cargoClippy (ciArgs // args // leaf // {
            pname = a.package;
            cargoClippyExtraArgs = "--all-targets -- --deny warnings";
          });
        }
      ])
    adapters.ownLockfile);

  # The ci build of the whole workspace: the runner's integration tests
  # drive the real adapter binaries next to target/ci/dbus-matrix.
  workspaceBuild = craneLib.cargoBuild (ciArgs // {
    cargoArtifacts = ciArtifacts;
    cargoExtraArgs = "--locked --workspace";
  });

  # Every .nix file of the repository (nothing else), for the Nix lints.
  root = toString ../.;
  nixFiles = builtins.path {
    name = "dbus-matrix-nix-files";
    path = ../.;
    filter = path: type:
      let
        rel = builtins.substring (builtins.stringLength root + 1) (builtins.stringLength (toString path)) (toString path);
        base = baseNameOf (toString path);
      in
      if type == "directory"
      then !(builtins.elem rel [ ".git" "benches/target" "results" ])
      else builtins.match ".*\\.nix" base != null;
  };
  nixLint = name: tool: command: pkgs.runCommand "dbus-matrix-${name}" { nativeBuildInputs = [ tool ]; } ''
    ${command} ${nixFiles}
    touch $out
  '';
in
{
  cargo-fmt = craneLib.cargoFmt (ciArgs // leaf // { cargoExtraArgs = "--all"; });

  cargo-clippy = craneLib.cargoClippy (ciArgs // leaf // {
    cargoArtifacts = ciArtifacts;
    cargoExtraArgs = "--locked --workspace";
    cargoClippyExtraArgs = "--all-targets -- --deny warnings";
  });

  # The tests start private buses: the pinned daemons, as in the wrapper.
  # crane runs `cargo nextest run --cargo-profile ci --locked --workspace
  # --no-fail-fast --profile nix-sandbox` (CARGO_PROFILE is ci);
  # nix/tests/sandbox-nextest.sh runs exactly that outside Nix.
  cargo-nextest = craneLib.cargoNextest (ciArgs // leaf // buses.daemonEnv // {
    cargoArtifacts = workspaceBuild;
    cargoExtraArgs = "--locked --workspace";
    # The sandbox has no root, no network, no `unshare` and no namespaces: the
    # nextest profile nix-sandbox leaves out, by name, the tests that need
    # them (they run in .ci/run). Printed first, so no test is left out silently.
    cargoNextestExtraArgs = "--no-fail-fast --profile ${nextestProfile}";
    # Nix's sandbox builds in /build; without it (sandbox = false) the build
    # directory is /tmp/nix-build-dbus-matrix-workspace-nextest-0.1.0.drv-0,
    # and the tests' Unix sockets under it pass sun_path's 108 bytes (29
    # tests failed so, N6 in docs/nix.md). The deepest test socket leaves a
    # TMPDIR of about 24 bytes: a longer one is swapped for a short directory
    # in /tmp, removed when the build ends, passed or failed.
    preCheck = ''
      if [ "''${#TMPDIR}" -gt 24 ] && [ -w /tmp ]; then
        echo "cargo-nextest: TMPDIR $TMPDIR is too long for the tests' Unix sockets; using a short one in /tmp"
        dbusMatrixShortTmp=$(mktemp -d /tmp/dm-check.XXXXXX)
        export TMPDIR=$dbusMatrixShortTmp
        dbusMatrixRemoveShortTmp() { rm -rf -- "$dbusMatrixShortTmp"; }
        exitHooks+=(dbusMatrixRemoveShortTmp)
        failureHooks+=(dbusMatrixRemoveShortTmp)
      fi
      echo "cargo-nextest: profile ${nextestProfile} of .config/nextest.toml; these tests are left out here and run in .ci/run:"
      sed -n '/^\[profile.${nextestProfile}\]/,/^\[/p' .config/nextest.toml
      ${placeOwnLockfileAdapters}
    '';
    # The runner's tests read the repository's matrix.toml,
    # docs/results.schema.json and docs/results/, two levels above their crate (runner/../..):
    # here, next to the unpacked workspace.
    # benches -> source: the adapters' `path` in matrix.toml (benches/adapters/...),
    # which the runner checks, resolves as in a checkout.
    # The program adapters (source/programs/, nix/source.nix) run from the
    # source in the tests: their shebangs (/usr/bin/env python3, /bin/sh)
    # are pointed at the check's inputs (python3 with every Python adapter's
    # libraries; the C adapter's adapter.sh compiles with the stdenv's cc,
    # pkg-config and dbus.dev of commonArgs).
    # dbus-fast's launcher makes a PyPI venv in host mode; here the check's
    # Python has dbus-fast (nixpkgs) and the sandbox has no network.
    DBUS_MATRIX_DBUS_FAST_PYTHON = "${programs.checkPython}/bin/python3";
    # The interpreters the runner supplies to the program adapters
    # (harness::interpreter), and the tests through it.
    DBUS_MATRIX_PYTHON3 = "${programs.checkPython}/bin/python3";
    DBUS_MATRIX_RUBY = "${pkgs.ruby}/bin/ruby";
    # What the dbus-python wrapper prefixes for `nix run` (gi.repository's GLib).
    GI_TYPELIB_PATH = programs.checkTypelibPath;
    # The runner's build mode for matrix.toml's `unavailable_in` (the adapters
    # are not prebuilt here, so it would read host mode): the rows the flake
    # cannot have (ruby-dbus: this Ruby has no ruby-dbus gem) are unavailable,
    # their cells unsupported with the reason, as for `nix run`; the tests
    # that run them expect that (runner/tests/common/unavailable.rs).
    DBUS_MATRIX_BUILD_MODE = "nix";
    postUnpack = ''
      patchShebangs --build source/programs
      cp ${matrix.file} matrix.toml
      ln -s source benches
      mkdir -p docs
      cp ${matrix.resultsSchema} docs/results.schema.json
      cp -r ${matrix.committedResults} docs/results
    '';
    # ...and the tools some tests drive: callgrind (instruction counts),
    # headless chromium (the HTML report), critcmp (the critcmp export), the
    # Python of the program adapters, Ruby (the Ruby half of the shared
    # subscription checks, tests/program_subscriptions.rs: its standard
    # library only, no gem), util-linux (taskset: the --pin tests; stdenv's
    # PATH has none, and the build of 2026-12-08 failed on it).
    nativeBuildInputs = ciArgs.nativeBuildInputs ++ [
      (buses.package "dbus-daemon")
      (buses.package "dbus-broker")
      (buses.package "busd")
      pkgs.util-linux
      pkgs.valgrind
      pkgs.chromium
      pkgs.critcmp
      pkgs.ruby
      programs.checkPython
    ];
  });

  deadnix = nixLint "deadnix" pkgs.deadnix "deadnix --fail";
  nixpkgs-fmt = nixLint "nixpkgs-fmt" pkgs.nixpkgs-fmt "nixpkgs-fmt --check";

  app-default = appScripts.default;
  app-vm-bench = appScripts.vm-bench;
  app-compare = appScripts.compare;

  # shellcheck over every app's script, as bash runs it (writeShellApplication
  # only runs `bash -n` at the pin). The texts without their store paths'
  # context: checking the script must not build what it names (the VM
  # tests' drivers).
  app-shellcheck = pkgs.runCommand "dbus-matrix-app-shellcheck" { nativeBuildInputs = [ pkgs.shellcheck ]; }
    (builtins.concatStringsSep "\n"
      (map
        (name: "shellcheck --shell=bash ${builtins.toFile "dbus-matrix-app-${name}.sh" (builtins.unsafeDiscardStringContext appTexts.${name})}")
        (builtins.attrNames appTexts)) + "\ntouch $out\n");
} // ownLockfileChecks // vmTests.checks
