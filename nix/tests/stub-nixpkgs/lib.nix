# nixpkgs' `lib`, as far as dbus-matrix uses it (model.json's `lib`): the
# file set functions of lib/fileset/default.nix, with the result toSource
# really has (lib.sources.cleanSourceWith: `_isLibCleanSourceWith`,
# `origSrc`, `filter`, `name`, `outPath` = builtins.path of origSrc with the
# filter), so that the stub crane can read `origSrc` as crane does. A file set
# here is { contains = path: type: bool; descend = dir: bool; covers = dir:
# bool } over path strings; an argument the real functions refuse is refused.
let
  under = p: root: p == toString root || builtins.substring 0 (builtins.stringLength (toString root) + 1) p == "${toString root}/";
  isFileset = v: builtins.isAttrs v && v ? _stubFileset;

  # A path is the file set of everything under it (lib.fileset's path
  # coercion); a missing one is an error, as there.
  coerce = what: v:
    if isFileset v then v
    else if builtins.isPath v then
      (if builtins.pathExists v then {
        _stubFileset = true;
        contains = f: _: under f v;
        descend = d: under d v || under (toString v) d;
        covers = d: under d v;
      } else throw "lib.fileset: ${what} (${toString v}) is a path that does not exist.")
    else throw "lib.fileset: ${what} is of type ${builtins.typeOf v}, but it should be a file set or a path instead.";

  fileset = {
    toSource = { root, fileset }:
      let
        set = coerce "toSource: `fileset`" fileset;
        filter = path: type: if type == "directory" then set.descend path else set.contains path type;
      in
      if !(builtins.isPath root) then throw "lib.fileset.toSource: `root` (\"${toString root}\") is a string-like value, but it should be a path instead."
      else {
        _isLibCleanSourceWith = true;
        origSrc = root;
        inherit filter;
        name = "source";
        outPath = builtins.path { inherit filter; name = "source"; path = root; };
      };

    unions = sets:
      let coerced = map (coerce "unions: element") sets; in
      {
        _stubFileset = true;
        contains = f: t: builtins.any (s: s.contains f t) coerced;
        descend = d: builtins.any (s: s.descend d) coerced;
        covers = d: builtins.any (s: s.covers d) coerced;
      };

    difference = positive: negative:
      let
        p = coerce "difference: first argument" positive;
        n = coerce "difference: second argument" negative;
      in
      {
        _stubFileset = true;
        contains = f: t: p.contains f t && !(n.contains f t);
        descend = d: p.descend d && !(n.covers d);
        covers = _: false;
      };

    # Every file under `path` for which `predicate { name, type, hasExt }` holds.
    fileFilter = predicate: path:
      if !(builtins.isPath path) then throw "lib.fileset.fileFilter: second argument is not a path"
      else {
        _stubFileset = true;
        contains = f: type:
          under f path && predicate {
            name = baseNameOf f;
            inherit type;
            hasExt = ext: builtins.match ".*\\.${ext}" (baseNameOf f) != null;
          };
        descend = d: under d path || under (toString path) d;
        covers = _: false;
      };

    # A path that may not exist: the empty file set when it does not.
    maybeMissing = path:
      if builtins.pathExists path then coerce "maybeMissing: argument" path
      else { _stubFileset = true; contains = _: _: false; descend = _: false; covers = _: false; };
  };
in
{
  inherit fileset;
}
