# shellcheck shell=bash
# Sourced by nix/tests/sandbox-nextest.sh, as root in its private mount
# namespace: takes Debian's ruby-dbus out of sight there, so that the
# simulated check's Ruby is like the real check's (pkgs.ruby, standard library
# only, no ruby-dbus gem: nixpkgs has none, docs/nix.md) and a test that runs
# the ruby-dbus-0.16 adapter expecting ok cells fails here as it would there.
# The rest of the machine keeps it (the namespace is private).

# shadow DIR HOLD NAME...: DIR shows all it holds but NAMEs: a tmpfs over it
# with each other entry bound back in (HOLD keeps the original reachable).
shadow() {
  local dir=$1 keep=$2 e name n skip
  shift 2
  mkdir -p "$keep"
  mount --bind "$dir" "$keep"
  mount -t tmpfs -o mode=755 dbus-matrix-no-ruby-dbus "$dir"
  for e in "$keep"/* "$keep"/.[!.]*; do
    [ -e "$e" ] || [ -L "$e" ] || continue
    name=${e##*/}
    skip=
    for n in "$@"; do [ "$n" != "$name" ] || skip=1; done
    [ -z "$skip" ] || continue
    if [ -L "$e" ]; then
      cp -P "$e" "$dir/$name"
      continue
    fi
    if [ -d "$e" ]; then mkdir "$dir/$name"; else : >"$dir/$name"; fi
    mount --bind "$e" "$dir/$name"
  done
}

# without_ruby_dbus HOLD: `require "dbus"` fails after it, in Ruby's library
# path and as a gem (Debian registers its ruby-dbus as one); it fails itself
# when ruby-dbus still loads.
without_ruby_dbus() {
  local hold=$1 feature spec
  feature=$(ruby -e 'r = $LOAD_PATH.resolve_feature_path("dbus"); print r[1] if r')
  spec=$(ruby -e 'begin; print Gem::Specification.find_by_name("ruby-dbus").loaded_from; rescue Gem::MissingSpecError; end')
  if [ -n "$feature" ]; then shadow "$(dirname "$feature")" "$hold/ruby-lib" dbus.rb dbus; fi
  if [ -n "$spec" ]; then shadow "$(dirname "$spec")" "$hold/ruby-spec" "$(basename "$spec")"; fi
  if ruby -e 'require "dbus"' 2>/dev/null; then
    echo "without_ruby_dbus: ruby still loads ruby-dbus ($feature, $spec)" >&2
    return 1
  fi
  echo "sandbox-nextest: ruby-dbus hidden from Ruby (${feature:-not in its path}; gem ${spec:-not registered}), as in the check"
}
