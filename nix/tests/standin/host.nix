# The stand-in's packages that are the host's own programs: nixpkgs' packages
# cannot be fetched here, so each is a store path of links to the host's
# executables (Debian's, found on /usr/bin:/bin:/usr/sbin:/sbin), or a copy
# of a tool build-for-real.sh staged (the Rust toolchain and cargo-installed
# tools live under /root, which a build user cannot read). A program the host
# lacks fails the package's build, naming it.
{ system, shell, staged }:
let
  searchPath = "/usr/bin:/bin:/usr/sbin:/sbin";

  # links NAME { bins = [ ... ]; debs = [ ... ]; }: bin/ holds a link to each
  # named program, and to every program each named Debian package installs.
  links = name: { bins ? [ ], debs ? [ ], version ? "host", extra ? { } }:
    derivation ({
      inherit system bins debs;
      name = "${name}-${version}";
      builder = shell;
      PATH = searchPath;
      args = [
        "-c"
        ''
          set -eu
          mkdir -p "$out/bin"
          link() {
            [ -e "$out/bin/$(basename "$1")" ] || ln -s "$1" "$out/bin/$(basename "$1")"
          }
          for deb in $debs; do
            if ! dpkg -s "$deb" 2>/dev/null | grep -q '^Status: install ok installed'; then
              echo "stand-in ${name}: the host has no Debian package $deb (scripts/install-deps-debian.sh installs it)" >&2
              exit 1
            fi
            dpkg -L "$deb" | grep -E '^(/usr)?/s?bin/[^/]+$' | while read -r p; do
              if [ -x "$p" ] && [ ! -d "$p" ]; then link "$p"; fi
            done
          done
          for b in $bins; do
            p=$(command -v "$b") || { echo "stand-in ${name}: the host has no '$b' on ${searchPath}" >&2; exit 1; }
            link "$p"
          done
        ''
      ];
    } // extra);

  # copy NAME DIR: what build-for-real.sh staged under DIR, copied into the store.
  copy = name: dir: derivation {
    inherit system name;
    builder = shell;
    PATH = searchPath;
    src = "${staged.root}/${dir}";
    args = [
      "-c"
      ''
        set -eu
        [ -d "$src" ] || { echo "stand-in ${name}: $src was not staged (nix/tests/build-for-real.sh stages it)" >&2; exit 1; }
        cp -r --no-preserve=ownership "$src" "$out"
        exit 0 # see fetchurl.nix: bash must not exec cp as the builder
      ''
    ];
  };
in
{
  inherit links copy;
}
