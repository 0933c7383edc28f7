# The stand-in package set: what the flake and crane take from nixpkgs, with
# the same names and calling conventions, built from the host. The real parts:
# nixpkgs' lib (passed in), crane (the caller's), Nix itself. Stood in:
# stdenv (./stdenv.nix, ./setup.sh), the trivial builders (./trivial.nix),
# fetchurl (./fetchurl.nix: an offline mirror, hashes checked by Nix), Rust
# (./rust.nix: the host's toolchain) and every package (./host.nix: links to
# the host's Debian programs). docs/nix.md, "Builds that run", lists them.
{ lib, system }:
let
  stagedRoot = builtins.getEnv "DBUS_MATRIX_STANDIN_HOST";
  staged =
    if stagedRoot == "" then
      throw "stand-in nixpkgs: DBUS_MATRIX_STANDIN_HOST is not set (nix/tests/build-for-real.sh stages the host's tools and sets it; evaluate with --impure)"
    else {
      root = stagedRoot;
      facts = builtins.fromJSON (builtins.readFile "${stagedRoot}/facts.json");
    };

  shell = "/bin/bash";
  host = import ./host.nix { inherit system shell staged; };
  links = host.links;

  # A Debian package's programs, as a package with the usual outputs (one
  # store path serves out, dev, bin and lib: the host's headers and pkg-config
  # files are where the host's compiler and pkg-config look anyway).
  debian = name: debs: withOutputs (links name { inherit debs; });
  programs = name: bins: withOutputs (links name { inherit bins; });
  withOutputs = drv: drv // { out = drv; dev = drv; bin = drv; lib = drv; };

  cc = links "gcc" { bins = [ "cc" "gcc" "cpp" "ld" "ar" "as" "nm" "ranlib" "strip" "objcopy" "readelf" ]; } // { targetPrefix = ""; };

  # nixpkgs' stdenv puts these on PATH before any input (and its cc through
  # the default inputs; here it is part of the initial path).
  initialPath = [
    (debian "coreutils" [ "coreutils" ])
    (debian "findutils" [ "findutils" ])
    (debian "diffutils" [ "diffutils" ])
    (debian "gnused" [ "sed" ])
    (debian "gnugrep" [ "grep" ])
    (programs "awk" [ "awk" ])
    (debian "gnutar" [ "tar" ])
    (debian "gzip" [ "gzip" ])
    (debian "bzip2" [ "bzip2" ])
    (debian "xz" [ "xz-utils" ])
    (debian "gnumake" [ "make" ])
    (debian "patch" [ "patch" ])
    (programs "bash" [ "bash" "sh" ])
    cc
  ];

  stdenv = import ./stdenv.nix { inherit lib system shell initialPath cc; };
  trivial = import ./trivial.nix { inherit lib stdenv; runtimeShell = shell; };
  fetchurl = import ./fetchurl.nix { inherit system shell staged; };
  rust = import ./rust.nix { inherit lib stdenv fetchurl host staged; inherit (trivial) runCommand; };

  # A tool staged from the host's ~/.cargo/bin (build users cannot read
  # /root), in a directory named by its content.
  cargoTool = name:
    let dir = staged.facts.tools.${name} or (throw "stand-in nixpkgs: ${name} was not staged: it is not on the PATH of nix/tests/build-for-real.sh"); in
    withOutputs (host.copy "${baseNameOf dir}-standin" dir) // { pname = name; };

  python3 = programs "python3" [ "python3" ] // {
    # The host's Python with Debian's libraries (python3-jeepney, python3-dbus,
    # python3-gi): the requested packages are not assembled into an
    # environment, and dbus-fast is not among Debian's (host mode: PyPI venv).
    withPackages = _: python3;
  };
  python3Packages = lib.genAttrs [ "jeepney" "dbus-python" "pygobject3" "dbus-fast" ] (name: { pname = name; outPath = "/standin-python-package-${name}"; });

  self = trivial // rust // {
    inherit lib stdenv fetchurl python3 python3Packages;
    pkgs = self;
    stdenvNoCC = stdenv;
    runtimeShell = shell;
    callPackage = lib.callPackageWith self;
    newScope = extra: lib.callPackageWith (self // extra);
    # Native builds only: every package set is this one (crane splices them).
    splicePackages = args: args.pkgsHostTarget;
    makeScopeWithSplicing' = lib.makeScopeWithSplicing' { inherit (self) splicePackages newScope; };
    pkgsBuildBuild = self;
    pkgsBuildHost = self;
    pkgsBuildTarget = self;
    pkgsHostHost = self;
    pkgsHostTarget = self;
    pkgsTargetTarget = { };
    buildPackages = self;

    makeWrapper = trivial.makeSetupHook { name = "make-wrapper-hook"; } ./make-wrapper.sh;
    writableTmpDirAsHomeHook = trivial.makeSetupHook { name = "writable-tmpdir-as-home-hook"; } ./writable-home-hook.sh;

    cargo-nextest = cargoTool "cargo-nextest";
    # crane's cargoNextest takes it as an argument; used only with withLlvmCov, which no check sets.
    cargo-llvm-cov = throw "stand-in nixpkgs: cargo-llvm-cov is not stood in (no check of the flake sets withLlvmCov)";
    critcmp = cargoTool "critcmp";
    deadnix = cargoTool "deadnix";
    nixpkgs-fmt = cargoTool "nixpkgs-fmt";

    bash = programs "bash" [ "bash" "sh" ];
    coreutils = debian "coreutils" [ "coreutils" ];
    util-linux = debian "util-linux" [ "util-linux" "mount" ];
    procps = debian "procps" [ "procps" ];
    getent = programs "getent" [ "getent" ];
    git = programs "git" [ "git" ];
    jq = debian "jq" [ "jq" ];
    zstd = debian "zstd" [ "zstd" ];
    rsync = debian "rsync" [ "rsync" ];
    gnutar = debian "gnutar" [ "tar" ];
    shellcheck = debian "shellcheck" [ "shellcheck" ];
    pkg-config = programs "pkg-config" [ "pkg-config" ];
    valgrind = debian "valgrind" [ "valgrind" ];
    chromium = programs "chromium" [ "chromium" ];
    ruby = programs "ruby" [ "ruby" ];
    dbus = debian "dbus" [ "dbus-daemon" "dbus-bin" "libdbus-1-dev" ];
    dbus-broker = debian "dbus-broker" [ "dbus-broker" ];
    glib = debian "glib" [ "libglib2.0-dev" "libglib2.0-bin" ];
    systemd = debian "systemd" [ "systemd" "libsystemd-dev" ];

    # Evaluates (a script may name a test's driver), never builds: NixOS and
    # KVM are not available here.
    testers.runNixOSTest = args:
      let
        refuse = what: derivation {
          inherit system;
          name = "nixos-test-${what}-${args.name}-standin";
          builder = shell;
          args = [ "-c" "echo 'stand-in nixpkgs: the NixOS test ${args.name} (${what}) cannot be built here: no NixOS, no KVM' >&2; exit 1" ];
        };
      in
      refuse "run" // { driver = refuse "driver"; driverInteractive = refuse "driver-interactive"; passthru = args.passthru or { }; } // (args.passthru or { });
  };
in
self
