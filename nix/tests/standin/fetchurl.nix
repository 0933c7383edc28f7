# fetchurl of the stand-in: a fixed-output derivation, so Nix itself checks
# the hash (for a crate, Cargo.lock's checksum), whose builder takes the file
# from the offline mirror build-for-real.sh staged from cargo's own download
# cache (crates.io's `…/crates/NAME/VERSION/download` is NAME-VERSION.crate
# there). Anything else is not available offline and fails, saying so.
{ system, shell, staged }:
{ url, sha256 ? "", hash ? "", name ? baseNameOf url, ... }:
derivation {
  inherit system name url;
  builder = shell;
  PATH = "/usr/bin:/bin";
  outputHashMode = "flat";
  outputHashAlgo = "sha256";
  outputHash = if hash != "" then hash else sha256;
  mirror = "${staged.root}/crates";
  args = [
    "-c"
    ''
      set -eu
      case $url in
        */crates/*/*/download)
          rest=''${url%/download}
          version=''${rest##*/}
          rest=''${rest%/*}
          file="$mirror/''${rest##*/}-$version.crate"
          ;;
        *) file="$mirror/$(basename "$url")" ;;
      esac
      if [ ! -f "$file" ]; then
        echo "stand-in fetchurl: $url is not in the offline mirror ($file): only crates in cargo's download cache are" >&2
        exit 1
      fi
      cp "$file" "$out"
      # Keeps bash as the builder: `bash -c` would exec its last command, and
      # cp closes its output before it exits; Nix takes the end of the
      # builder's output as its end, kills it and would see signal 9.
      exit 0
    ''
  ];
}
