# The stand-in for nixpkgs' stdenv/generic/setup.sh: the generic builder
# every stand-in derivation runs (nix/tests/standin/stdenv.nix). Written
# here from nixpkgs' documented behaviour, not copied: what crane's builders
# and setup hooks rely on (runHook with the `<name>Hooks` arrays, the phase
# list and its `dont*`/`do*` switches, unpacking a directory or a tarball,
# the inputs' bin/ directories and setup hooks, addEnvHooks, patchShebangs
# in the fixup phase, failureHook/exitHook when the builder exits). Left out, said in docs/nix.md: stripping, patchelf,
# multiple-output moves, cross offsets (every input is native here).
__standin_set_original=$-
set -eu
set -o pipefail

# --- hooks -----------------------------------------------------------------
# runHook NAME: the implicit hook first (a function NAME, or the variable
# NAME evaluated), then every entry of the array NAMEHooks (NAME without a
# trailing "Hook"), each a function name or a string to evaluate.
_eval() {
  if declare -F "$1" >/dev/null 2>&1; then
    "$@"
  else
    eval "$1"
  fi
}

_callImplicitHook() {
  local def=$1 hookName=$2
  if declare -F "$hookName" >/dev/null; then
    "$hookName"
  elif [ -n "${!hookName:-}" ]; then
    eval "${!hookName}"
  else
    return "$def"
  fi
}

runHook() {
  local hookName=$1
  shift
  local hooksSlice="${hookName%Hook}Hooks[@]"
  local hook
  for hook in "_callImplicitHook 0 $hookName" ${!hooksSlice+"${!hooksSlice}"}; do
    _eval "$hook" "$@"
  done
  return 0
}

# As nixpkgs' setup.sh: when the builder exits, runHook failureHook if it
# failed, exitHook if it did not (checks.cargo-nextest removes its short
# TMPDIR from both).
exitHandler() {
  local exitCode=$?
  set +e
  if [ "$exitCode" -ne 0 ]; then
    runHook failureHook
  else
    runHook exitHook
  fi
  exit "$exitCode"
}
trap exitHandler EXIT

# Called with each input's path by activate below (pkg-config's hook in
# nixpkgs adds the input's lib/pkgconfig this way).
envHooks=()
addEnvHooks() {
  shift # the host offset: every input is native here
  envHooks+=("$@")
}

addToSearchPath() {
  local varName=$1 dir=$2
  if [ -d "$dir" ]; then
    export "$varName=${!varName:+${!varName}:}$dir"
  fi
}

substitute() {
  local input=$1 output=$2
  shift 2
  local content pattern replacement
  content=$(cat "$input")
  while [ "$#" -gt 0 ]; do
    case $1 in
      --replace-fail | --replace)
        pattern=$2 replacement=$3
        if [ "$1" = --replace-fail ] && [[ $content != *"$pattern"* ]]; then
          echo "substitute: pattern '$pattern' not found in $input" >&2
          return 1
        fi
        shift 3
        ;;
      --subst-var)
        pattern="@$2@" replacement=${!2}
        shift 2
        ;;
      --subst-var-by)
        pattern="@$2@" replacement=$3
        shift 3
        ;;
      *)
        echo "substitute: stand-in does not implement '$1'" >&2
        return 1
        ;;
    esac
    content=${content//"$pattern"/"$replacement"}
  done
  printf '%s\n' "$content" >"$output.tmp"
  if [ -x "$input" ]; then chmod +x "$output.tmp"; fi
  mv -f "$output.tmp" "$output"
}

substituteInPlace() {
  local file=$1
  shift
  substitute "$file" "$file" "$@"
}

stripHash() {
  local base
  base=$(basename -- "$1")
  if [[ $base =~ ^[a-z0-9]{32}- ]]; then
    echo "${base:33}"
  else
    echo "$base"
  fi
}

# patchShebangs [--build|--host] PATH...: `#!/usr/bin/env NAME` and
# `#!/any/dir/NAME` become the NAME found in PATH (--build) or HOST_PATH
# (--host, the default); interpreters already in the store are kept.
patchShebangs() {
  local pathVar=HOST_PATH
  case ${1:-} in
    --build) pathVar=PATH; shift ;;
    --host) shift ;;
  esac
  local file line interp args name new
  while IFS= read -r -d '' file; do
    IFS= read -r line <"$file" || true
    [[ $line == '#!'* ]] || continue
    read -r interp args <<<"${line#'#!'}"
    [[ $interp == "$NIX_STORE"/* ]] && continue
    if [ "$(basename "$interp")" = env ]; then
      read -r name args <<<"$args"
    else
      name=$(basename "$interp")
    fi
    new=$(PATH=${!pathVar:-} command -v "$name" || true)
    if [ -z "$new" ]; then
      echo "patchShebangs: $file: no '$name' in $pathVar, left as it is"
      continue
    fi
    echo "patchShebangs: $file: $interp -> $new"
    sed -i -e "1 s|.*|#!$new${args:+ $args}|" "$file"
  done < <(find "$@" -type f -perm -0100 -print0)
}

# --- inputs ----------------------------------------------------------------
# Every input is native: bin/ of nativeBuildInputs, depsBuildBuild and the
# initial path goes on PATH; buildInputs' bin/ goes on HOST_PATH (and on
# PATH without strictDeps); every input's nix-support/setup-hook is sourced
# and its nix-support/propagated-*-inputs followed.
PATH=
HOST_PATH=
declare -A _activated=()
activate() {
  local pkg=$1 onPath=$2
  [ -n "${_activated[$pkg]:-}" ] && return 0
  _activated[$pkg]=1
  if [ "$onPath" = 1 ]; then addToSearchPath PATH "$pkg/bin"; fi
  addToSearchPath HOST_PATH "$pkg/bin"
  if [ -f "$pkg/nix-support/setup-hook" ]; then
    # shellcheck disable=SC1091
    source "$pkg/nix-support/setup-hook"
  fi
  local f dep
  for f in "$pkg"/nix-support/propagated-build-inputs "$pkg"/nix-support/propagated-native-build-inputs; do
    [ -f "$f" ] || continue
    for dep in $(cat "$f"); do activate "$dep" "$onPath"; done
  done
}
for _pkg in ${standinInitialPath:-}; do activate "$_pkg" 1; done
for _pkg in ${depsBuildBuild:-} ${nativeBuildInputs:-} ${propagatedNativeBuildInputs:-}; do activate "$_pkg" 1; done
_onPath=1
[ -n "${strictDeps:-}" ] && _onPath=0
for _pkg in ${buildInputs:-} ${propagatedBuildInputs:-}; do activate "$_pkg" "$_onPath"; done
for _pkg in "${!_activated[@]}"; do
  for _hook in "${envHooks[@]}"; do "$_hook" "$_pkg"; done
done
export PATH HOST_PATH

export SHELL=${SHELL:-/bin/bash}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-315532800}
export TZ=UTC
if [ -z "${NIX_BUILD_CORES:-}" ] || [ "$NIX_BUILD_CORES" -le 0 ]; then
  NIX_BUILD_CORES=$(nproc)
fi
export NIX_BUILD_CORES
prefix=${prefix:-$out}

# --- phases ----------------------------------------------------------------
unpackFile() {
  local src=$1
  if [ -d "$src" ]; then
    cp -r --preserve=mode,timestamps --reflink=auto -- "$src" "$(stripHash "$src")"
  else
    case $src in
      *.tar | *.tar.* | *.tgz | *.tbz2 | *.crate) tar xf "$src" ;;
      *)
        if [ -n "${unpackCmd:-}" ]; then
          curSrc=$src runHook unpackCmd
        else
          echo "unpackFile: do not know how to unpack $src" >&2
          return 1
        fi
        ;;
    esac
  fi
}

unpackPhase() {
  runHook preUnpack
  local sources=${srcs:-${src:?unpackPhase: neither src nor srcs is set}}
  local before=() i
  for i in *; do [ -d "$i" ] && before+=("$i"); done
  for i in $sources; do unpackFile "$i"; done
  if [ -n "${setSourceRoot:-}" ]; then
    runHook setSourceRoot
  elif [ -z "${sourceRoot:-}" ]; then
    for i in *; do
      [ -d "$i" ] || continue
      [[ " ${before[*]:-} " == *" $i "* ]] && continue
      if [ -n "${sourceRoot:-}" ]; then
        echo "unpackPhase: more than one directory was unpacked" >&2
        return 1
      fi
      sourceRoot=$i
    done
  fi
  if [ -z "${sourceRoot:-}" ]; then
    echo "unpackPhase: nothing was unpacked" >&2
    return 1
  fi
  echo "source root is $sourceRoot"
  if [ "${dontMakeSourcesWritable:-}" != 1 ]; then
    chmod -R u+w -- "$sourceRoot"
  fi
  runHook postUnpack
}

patchPhase() {
  runHook prePatch
  local p
  for p in ${patches:-}; do
    echo "applying patch $p"
    patch ${patchFlags:--p1} <"$p"
  done
  runHook postPatch
}

configurePhase() {
  runHook preConfigure
  if [ -x ./configure ]; then ./configure --prefix="$prefix" ${configureFlags:-}; fi
  runHook postConfigure
}

buildPhase() {
  runHook preBuild
  if [ -e Makefile ] || [ -e makefile ]; then make -j"$NIX_BUILD_CORES" ${makeFlags:-} ${buildFlags:-}; fi
  runHook postBuild
}

checkPhase() {
  runHook preCheck
  if [ -e Makefile ] || [ -e makefile ]; then make ${makeFlags:-} ${checkTarget:-check}; fi
  runHook postCheck
}

installPhase() {
  runHook preInstall
  if [ -e Makefile ] || [ -e makefile ]; then make ${makeFlags:-} install; fi
  runHook postInstall
}

_patchShebangsAuto() {
  if [ -z "${dontPatchShebangs:-}" ] && [ -e "$prefix" ]; then
    patchShebangs --host "$prefix"
  fi
}
fixupOutputHooks+=(_patchShebangsAuto)

fixupPhase() {
  local output
  for output in ${outputs:-out}; do
    if [ -e "${!output}" ]; then chmod -R u+w,u-s,g-s -- "${!output}"; fi
  done
  runHook preFixup
  for output in ${outputs:-out}; do
    prefix=${!output} runHook fixupOutput
  done
  if [ -n "${propagatedBuildInputs:-}" ]; then
    mkdir -p "$out/nix-support"
    printf '%s ' $propagatedBuildInputs >"$out/nix-support/propagated-build-inputs"
  fi
  runHook postFixup
}

installCheckPhase() {
  runHook preInstallCheck
  runHook postInstallCheck
}

distPhase() {
  runHook preDist
  runHook postDist
}

genericBuild() {
  export GZIP_NO_TIMESTAMPS=1
  if [ -f "${buildCommandPath:-}" ]; then
    # shellcheck disable=SC1090
    source "$buildCommandPath"
    return
  fi
  if [ -n "${buildCommand:-}" ]; then
    eval "$buildCommand"
    return
  fi
  local phaseList=${phases:-"${prePhases:-} unpackPhase patchPhase ${preConfigurePhases:-} configurePhase ${preBuildPhases:-} buildPhase checkPhase ${preInstallPhases:-} installPhase ${preFixupPhases:-} fixupPhase installCheckPhase ${preDistPhases:-} distPhase ${postPhases:-}"}
  local curPhase
  for curPhase in $phaseList; do
    case $curPhase in
      unpackPhase) [ -n "${dontUnpack:-}" ] && continue ;;
      patchPhase) [ -n "${dontPatch:-}" ] && continue ;;
      configurePhase) [ -n "${dontConfigure:-}" ] && continue ;;
      buildPhase) [ -n "${dontBuild:-}" ] && continue ;;
      checkPhase) [ -z "${doCheck:-}" ] && continue ;;
      installPhase) [ -n "${dontInstall:-}" ] && continue ;;
      fixupPhase) [ -n "${dontFixup:-}" ] && continue ;;
      installCheckPhase) [ -z "${doInstallCheck:-}" ] && continue ;;
      distPhase) [ -z "${doDist:-}" ] && continue ;;
    esac
    echo "Running phase: $curPhase"
    if [ -n "${!curPhase:-}" ]; then
      eval "${!curPhase}"
    else
      "$curPhase"
    fi
    if [ "$curPhase" = unpackPhase ]; then
      [ -n "${sourceRoot:-}" ] && chmod +x -- "$sourceRoot"
      cd -- "${sourceRoot:-.}"
    fi
  done
}

# The inputs' hooks that asked to run once the environment is set up.
runHook postHook

# As nixpkgs does: the phases run with errexit and pipefail, but without
# nounset unless the builder asked for it (crane's hooks read unset
# variables such as doNotLinkInheritedArtifacts bare).
[[ $__standin_set_original == *e* ]] || set +e
[[ $__standin_set_original == *u* ]] || set +u
unset -v __standin_set_original
# The derivation's builder (stdenv.nix) sources this file and runs genericBuild.
