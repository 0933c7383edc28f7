# Stub derivations: they instantiate (so `nix flake check --no-build` can
# compute their .drv paths) but never build, and they keep their arguments:
# scalar ones as derivation attributes stubArg_<name>, all of them as the
# `stubArgs` attribute for nix/tests/wiring.nix. (A copy of this file is in
# stub-crane/: each stub is a flake of its own and cannot reach outside.)
{ system }:
let
  recordable = v:
    builtins.isString v || builtins.isBool v || builtins.isInt v || builtins.isPath v
    || v == null || (builtins.isAttrs v && v ? outPath)
    || (builtins.isList v && builtins.all recordable v);
  isEnvName = n: builtins.match "[A-Z][A-Z0-9_]*" n != null;
in
{
  # The arguments, unless one is unknown to the stub or a required one is
  # missing: then evaluation stops with "stub: ...".
  checkArgs = fn: { allowed, required ? [ ], env ? false }: args:
    let
      unknown = builtins.filter (n: !(builtins.elem n allowed) && !(env && isEnvName n)) (builtins.attrNames args);
      missing = builtins.filter (n: !(args ? ${n})) required;
    in
    if !(builtins.isAttrs args) then throw "stub: ${fn}: arguments other than an attribute set not implemented"
    else if unknown != [ ] then throw "stub: ${fn}: argument(s) ${toString unknown} not implemented"
    else if missing != [ ] then throw "stub: ${fn}: required argument(s) ${toString missing} missing"
    else args;

  mkDrv = { kind, name, args ? { }, outputs ? [ "out" ], passthru ? { } }:
    let
      recorded = builtins.listToAttrs (map
        (n: { name = "stubArg_${n}"; value = args.${n}; })
        (builtins.filter (n: recordable args.${n}) (builtins.attrNames args)));
      drv = builtins.derivation (recorded // {
        inherit name system outputs;
        builder = "/bin/sh";
        args = [ "-c" "echo 'stub derivation (${kind}): not buildable' >&2; exit 1" ];
        stubKind = kind;
      });
    in
    drv // passthru // {
      stubKind = kind;
      stubArgs = args;
      meta = args.meta or { };
    };
}
