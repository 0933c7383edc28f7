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

  # The checks build in the `ci` profile of benches/Cargo.toml (release's
  # optimisation without the one codegen unit and the link-time optimisation,
  # which matter for timing only), as scripts/test.sh does; the packages,
  # which `nix run` times, in release. crane passes CARGO_PROFILE to cargo as
  # `--profile` (cargoWithProfile, lib/setupHooks/cargoHelperFunctionsHook.sh).
  ciArgs = commonArgs // { CARGO_PROFILE = "ci"; };

  workspace = {
    inherit commonArgs ciArgs;
    inherit (commonArgs) version;

    # Every dependency of the whole workspace, built once (release); each
    # adapter and the runner start from it. The workspace-hack crate
    # (benches/workspace-hack, cargo-hakari) makes a package's own
    # `cargo build -p` resolve the same features as `--workspace`, so those
    # builds compile no dependency again (runner/tests/shared_build.rs). No
    # tests here: the packages are not tested in release, so their
    # dev-dependencies are not built.
    cargoArtifacts = craneLib.buildDepsOnly (commonArgs // {
      cargoExtraArgs = "--locked --workspace";
      doCheck = false;
    });

    # The same for the checks, in the ci profile, with the dev-dependencies
    # (crane's `cargo test` of the dummy source) and the check artifacts
    # clippy reuses.
    ciArtifacts = craneLib.buildDepsOnly (ciArgs // {
      cargoExtraArgs = "--locked --workspace";
    });

    # The source of one package's own build (nix/package-source.nix).
    packageSource = import ./package-source.nix { inherit lib craneLib; workspaceSrc = commonArgs.src; };
  };
in
if builtins.pathExists ../benches/.cargo then throw "dbus-matrix: benches/.cargo/ exists: nix/workspace.nix vendors from Cargo.lock alone and would miss its config"
else if toolchainOk then workspace
else throw "dbus-matrix: the pinned nixpkgs has Rust ${pkgs.rustc.version}; the workspace needs >= ${minimumRust} (benches/Cargo.toml rust-version)"
