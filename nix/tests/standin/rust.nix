# Rust in the stand-in: the host's rustup toolchain, staged by
# build-for-real.sh and copied into the store once, is rustc, cargo, clippy
# and rustfmt (in nixpkgs, separate packages of one release); and enough of
# nixpkgs' rustPlatform.buildRustPackage for crane's own crane-utils:
# vendoring from cargoLock.lockFile through the stand-in's fetchurl (each
# crate checked against its Cargo.lock checksum), cargo build --release
# --frozen, the tests (nixpkgs' default), bin/ from target/release.
{ lib, stdenv, runCommand, fetchurl, host, staged }:
let
  version = staged.facts.rustcVersion;
  toolchain = host.copy "rust-${staged.facts.toolchain}-standin" staged.facts.toolchain;
  component = pname: toolchain // { inherit pname version; meta = { mainProgram = pname; }; };

  vendorLock = lockFile:
    let
      lock = builtins.fromTOML (builtins.readFile lockFile);
      fromRegistry = builtins.filter (p: p ? checksum && lib.hasPrefix "registry+" (p.source or "")) lock.package;
      crate = p: fetchurl {
        name = "crate-${p.name}-${p.version}.tar.gz";
        url = "https://static.crates.io/crates/${p.name}/${p.version}/download";
        sha256 = p.checksum;
      };
    in
    runCommand "cargo-vendor-dir" { } (''
      mkdir -p $out
    '' + lib.concatMapStrings
      (p: ''
        mkdir -p $out/${p.name}-${p.version}
        tar -xzf ${crate p} -C $out/${p.name}-${p.version} --strip-components=1
        echo '{"files":{},"package":"${p.checksum}"}' > $out/${p.name}-${p.version}/.cargo-checksum.json
      '')
      fromRegistry);

  buildRustPackage = args@{ cargoLock, nativeBuildInputs ? [ ], ... }:
    stdenv.mkDerivation (builtins.removeAttrs args [ "cargoLock" ] // {
      nativeBuildInputs = nativeBuildInputs ++ [ toolchain ];
      cargoVendorDir = vendorLock cargoLock.lockFile;
      doCheck = args.doCheck or true;
      configurePhase = ''
        runHook preConfigure
        mkdir -p .cargo
        printf '[source.crates-io]\nreplace-with = "vendored-sources"\n[source.vendored-sources]\ndirectory = "%s"\n' "$cargoVendorDir" > .cargo/config.toml
        runHook postConfigure
      '';
      buildPhase = ''
        runHook preBuild
        cargo build --release --frozen --offline -j "$NIX_BUILD_CORES"
        runHook postBuild
      '';
      checkPhase = ''
        runHook preCheck
        cargo test --release --frozen --offline -j "$NIX_BUILD_CORES"
        runHook postCheck
      '';
      installPhase = ''
        runHook preInstall
        mkdir -p $out/bin
        find target/release -maxdepth 1 -type f -executable -exec cp {} $out/bin/ \;
        runHook postInstall
      '';
    });
in
{
  rustc = component "rustc";
  cargo = component "cargo";
  clippy = component "clippy";
  rustfmt = component "rustfmt";
  rustPlatform = { inherit buildRustPackage; };
}
