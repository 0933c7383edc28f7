# The stand-in's writableTmpDirAsHomeHook: HOME becomes a writable directory
# of the build (Nix points it at /homeless-shelter, which must not exist).
writableTmpDirAsHome() {
  if [ -z "${HOME-}" ] || [ "$HOME" = /homeless-shelter ]; then
    export HOME="$NIX_BUILD_TOP/.home"
  fi
  mkdir -p "$HOME"
}
postHooks+=(writableTmpDirAsHome)
