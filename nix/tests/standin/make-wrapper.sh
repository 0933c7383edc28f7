# The stand-in's makeWrapper setup hook: makeWrapper ORIGINAL WRAPPER FLAGS...
# writes a bash script that sets the environment and execs ORIGINAL, as
# nixpkgs' make-wrapper.sh does for the flags below; any other flag fails.
makeWrapper() {
  local original=$1 wrapper=$2
  shift 2
  if [ ! -x "$original" ]; then
    echo "makeWrapper: $original is not an executable" >&2
    return 1
  fi
  mkdir -p "$(dirname "$wrapper")"
  local flags=() argv0='"$0"'
  {
    # The stand-in's own shell, as nixpkgs' hook writes its own (@shell@):
    # never $SHELL, which a build user's login shell (nologin) can be.
    echo "#!/bin/bash"
    while [ "$#" -gt 0 ]; do
      case $1 in
        --set) printf 'export %s=%q\n' "$2" "$3"; shift 3 ;;
        --set-default) printf 'export %s=${%s-%q}\n' "$2" "$2" "$3"; shift 3 ;;
        --unset) printf 'unset %s\n' "$2"; shift 2 ;;
        --prefix) printf 'export %s=%q${%s:+%q${%s}}\n' "$2" "$4" "$2" "$3" "$2"; shift 4 ;;
        --suffix) printf 'export %s=${%s:+${%s}%q}%q\n' "$2" "$2" "$2" "$3" "$4"; shift 4 ;;
        --add-flags) flags+=("$2"); shift 2 ;;
        --argv0) argv0=$(printf '%q' "$2"); shift 2 ;;
        --chdir) printf 'cd %q\n' "$2"; shift 2 ;;
        *)
          echo "makeWrapper (stand-in): flag $1 is not implemented" >&2
          return 1
          ;;
      esac
    done
    printf 'exec -a %s %q %s "$@"\n' "$argv0" "$original" "${flags[*]:-}"
  } >"$wrapper"
  chmod +x "$wrapper"
}

wrapProgram() {
  local program=$1
  shift
  local hidden
  hidden="$(dirname "$program")/.$(basename "$program")-wrapped"
  mv "$program" "$hidden"
  makeWrapper "$hidden" "$program" "$@"
}
