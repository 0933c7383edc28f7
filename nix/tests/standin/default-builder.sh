# The builder of every stand-in derivation (stdenv.nix): nixpkgs' default
# builder does the same with its own setup script.
# shellcheck disable=SC1091,SC2154
source "$standinSetup"
genericBuild
