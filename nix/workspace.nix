# The Cargo workspace (benches/) as crane builds it: the toolchain check, the
# arguments every build shares and the one dependency build they all reuse.
{ pkgs, lib, craneLib }:
let
  cargoToml = builtins.fromTOML (builtins.readFile ../benches/Cargo.toml);
  runnerToml = builtins.fromTOML (builtins.readFile ../benches/runner/Cargo.toml);

  # The toolchain is the pinned nixpkgs' Rust: crane.mkLib pkgs builds with
  # pkgs.rustc, pkgs.cargo, pkgs.clippy and pkgs.rustfmt. The workspace needs
  # Rust >= 1.89 (rust-version in benches/Cargo.toml: zbus 6 requires it);
  # nixos-26.05 ships a newer one. Checked here, at evaluation time, so that
  # an older pin fails with this message instead of deep inside a build.
  minimumRust = cargoToml.workspace.package.rust-version;
  toolchainOk = builtins.compareVersions pkgs.rustc.version minimumRust >= 0;

  commonArgs = {
    src = import ./source.nix { inherit lib; };
    # Vendored from the lockfile alone: crane's default (vendorCargoDeps of
    # the arguments) also reads `src` for .cargo/config* while evaluating,
    # which a store that has not built the filtered source cannot do.
    # benches/ has no .cargo/ (checked below), so the vendor directory is the
    # same.
    cargoVendorDir = craneLib.vendorCargoDeps { cargoLock = ../benches/Cargo.lock; };
    pname = "dbus-matrix-workspace";
    inherit (runnerToml.package) version;
    strictDeps = true;
    # System libraries the adapters link, found by their -sys crates' build
    # scripts through pkg-config: dbus-1.pc (dbus-0.9, dbus-tokio: libdbus-sys),
    # gio-2.0.pc and friends (gio-0.22: glib-sys, gio-sys), libsystemd.pc
    # (systemd-0.11: libsystemd-sys); each in its package's dev output. Needed
    # by the shared dependency build too, since that is where the -sys crates
    # are built.
    nativeBuildInputs = [ pkgs.pkg-config ];
    buildInputs = [ pkgs.dbus.dev pkgs.glib.dev pkgs.systemd.dev ];
  };

  workspace = {
    inherit commonArgs;
    inherit (commonArgs) version;

    # Every dependency of the whole workspace, built once; each adapter, the
    # runner and the checks start from it.
    cargoArtifacts = craneLib.buildDepsOnly (commonArgs // {
      cargoExtraArgs = "--locked --workspace";
    });
  };
in
if builtins.pathExists ../benches/.cargo then throw "dbus-matrix: benches/.cargo/ exists: nix/workspace.nix vendors from Cargo.lock alone and would miss its config"
else if toolchainOk then workspace
else throw "dbus-matrix: the pinned nixpkgs has Rust ${pkgs.rustc.version}; the workspace needs >= ${minimumRust} (benches/Cargo.toml rust-version)"
