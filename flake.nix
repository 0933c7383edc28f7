{
  description = "dbus-matrix: a reproducible benchmark matrix for Rust D-Bus libraries";

  inputs = {
    # The toolchain is this nixpkgs' Rust. nixos-26.05 ships a Rust newer than
    # the 1.89 the workspace needs (rust-version in benches/Cargo.toml; zbus 6
    # requires 1.89); nix/workspace.nix checks it when evaluating.
    nixpkgs.url = "github:NixOS/nixpkgs/nixos-26.05";
    crane.url = "github:ipetkov/crane";
  };

  outputs = { self, nixpkgs, crane }:
    let
      util = import ./nix/util.nix;
      matrix = import ./nix/matrix.nix;
      systems = [ "x86_64-linux" "aarch64-linux" ];

      # What the results record as run.revision: the commit of a clean
      # checkout, dirtyRev (newer Nix) for a modified one, else "dirty".
      revision = self.rev or self.dirtyRev or "dirty";

      forSystem = system:
        let
          pkgs = nixpkgs.legacyPackages.${system};
          craneLib = crane.mkLib pkgs;
          workspace = import ./nix/workspace.nix { inherit pkgs craneLib; inherit (nixpkgs) lib; };
          buses = import ./nix/buses.nix { inherit pkgs craneLib matrix util; };
          programs = import ./nix/programs.nix { inherit pkgs; };
          adapters = import ./nix/adapters.nix { inherit craneLib workspace matrix programs; };
          runner = import ./nix/runner.nix { inherit pkgs craneLib workspace matrix buses revision util; adapters = adapters.packages; };
          vmTests = import ./vm-tests { inherit pkgs matrix buses runner revision util; };
          apps = import ./nix/apps.nix { inherit pkgs runner vmTests; };
          checks = import ./nix/checks.nix { inherit pkgs craneLib workspace matrix buses adapters programs vmTests; appScripts = apps.scripts; appTexts = apps.texts; };
        in
        {
          packages = adapters.packages // { inherit (runner) dbus-matrix default; };
          inherit checks;
          inherit (apps) apps;
          devShells.default = import ./nix/devshell.nix { inherit pkgs craneLib buses programs; nextest = checks.cargo-nextest; };
          formatter = import ./nix/formatter.nix { inherit pkgs; };
        };

      bySystem = util.forSystems systems forSystem;
      output = name: builtins.mapAttrs (_: outputs: outputs.${name}) bySystem;
    in
    {
      packages = output "packages";
      checks = output "checks";
      apps = output "apps";
      devShells = output "devShells";
      formatter = output "formatter";
    };
}
