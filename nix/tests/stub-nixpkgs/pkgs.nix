# The stub package set of one system. `rustcVersion` lets wiring.nix check the
# flake's toolchain guard.
{ system, rustcVersion ? "1.95.0" }:
let
  stub = import ./stub.nix { inherit system; };
  package = name: { version ? "0-stub", outputs ? [ "out" ] }:
    stub.mkDrv { kind = "package"; name = "${name}-${version}"; inherit outputs; }
    // { pname = name; inherit version; };
  simple = name: package name { };
in
{
  stdenv.hostPlatform.system = system;

  # Packages.
  busd = simple "busd";
  cargo = simple "cargo";
  cargo-nextest = simple "cargo-nextest";
  chromium = simple "chromium";
  critcmp = simple "critcmp";
  clippy = simple "clippy";
  coreutils = simple "coreutils";
  dbus = package "dbus" { outputs = [ "out" "dev" "lib" ]; };
  dbus-broker = simple "dbus-broker";
  deadnix = simple "deadnix";
  makeWrapper = simple "make-wrapper-hook";
  nixpkgs-fmt = simple "nixpkgs-fmt";
  pkg-config = simple "pkg-config-wrapper";
  rustc = package "rustc" { version = rustcVersion; };
  rustfmt = simple "rustfmt";
  valgrind = simple "valgrind";

  # Builders.
  mkShell = args0:
    let
      args = stub.checkArgs "mkShell" { allowed = [ "name" "packages" "buildInputs" "nativeBuildInputs" "inputsFrom" "shellHook" ]; env = true; } args0;
    in
    stub.mkDrv { kind = "mkShell"; name = args.name or "nix-shell"; inherit args; };

  runCommand = name: env0: buildCommand:
    let
      env = stub.checkArgs "runCommand" { allowed = [ "nativeBuildInputs" "buildInputs" "passthru" "meta" ]; env = true; } env0;
    in
    stub.mkDrv { kind = "runCommand"; inherit name; args = env // { inherit buildCommand; }; passthru = env.passthru or { }; };

  symlinkJoin = args0:
    let
      args = stub.checkArgs "symlinkJoin" { allowed = [ "name" "paths" "postBuild" "passthru" "meta" ]; required = [ "name" "paths" ]; } args0;
    in
    stub.mkDrv { kind = "symlinkJoin"; inherit (args) name; inherit args; passthru = args.passthru or { }; };

  writeShellApplication = args0:
    let
      args = stub.checkArgs "writeShellApplication" { allowed = [ "name" "text" "runtimeInputs" "meta" "passthru" ]; required = [ "name" "text" ]; } args0;
    in
    stub.mkDrv { kind = "writeShellApplication"; inherit (args) name; inherit args; passthru = args.passthru or { }; };

  writeTextDir = path: text:
    stub.mkDrv { kind = "writeTextDir"; name = baseNameOf path; args = { inherit path text; }; };

  testers.runNixOSTest = args0:
    let
      args = stub.checkArgs "testers.runNixOSTest"
        {
          allowed = [ "name" "nodes" "testScript" "globalTimeout" "passthru" "meta" ];
          required = [ "name" "nodes" "testScript" ];
        }
        args0;
      driver = kind: stub.mkDrv { kind = "runNixOSTest.${kind}"; name = "nixos-test-${kind}-${args.name}"; };
    in
    if !(builtins.isString args.testScript) then throw "stub: testers.runNixOSTest: a testScript function not implemented"
    else
      stub.mkDrv {
        kind = "testers.runNixOSTest";
        name = "vm-test-run-${args.name}";
        inherit args;
        passthru = (args.passthru or { }) // {
          driver = driver "driver";
          driverInteractive = driver "driver-interactive";
        };
      };
}
