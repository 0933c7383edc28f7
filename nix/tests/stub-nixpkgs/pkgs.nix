# The stub package set of one system, generated from model.json (the strict
# model of nixpkgs at the pin): it has exactly the attributes the model lists,
# so using anything else stops evaluation ("attribute ... missing"). Packages
# are made from the model; functions are the stub builders below, which
# record their arguments and stop at an argument the stub does not know.
# `rustcVersion` lets wiring.nix check the flake's toolchain guard.
{ system, rustcVersion ? "1.95.0" }:
let
  stub = import ./stub.nix { inherit system; };
  model = builtins.fromJSON (builtins.readFile ./model.json);
  inherit (builtins) attrNames concatMap filter head isAttrs listToAttrs tail;

  package = name: entry:
    let version = if name == "rustc" then rustcVersion else "0-stub"; in
    stub.mkDrv { kind = "package"; name = "${name}-${version}"; outputs = entry.outputs or [ "out" ]; }
    // { pname = name; inherit version; };

  # The NixOS options a node sets, as dotted paths: an attribute set is
  # descended into unless it is a derivation (a value such as a package).
  optionPaths = prefix: value:
    if isAttrs value && !(value ? outPath)
    then concatMap (n: optionPaths (prefix ++ [ n ]) value.${n}) (attrNames value)
    else [ (builtins.concatStringsSep "." prefix) ];
  knownOptions = attrNames model.nixos_options;

  functions = {
    mkShell = args0:
      let
        args = stub.checkArgs "mkShell" { allowed = [ "name" "packages" "buildInputs" "nativeBuildInputs" "inputsFrom" "shellHook" ]; env = true; } args0;
      in
      stub.mkDrv { kind = "mkShell"; name = args.name or "nix-shell"; inherit args; };

    runCommand = name: env0: buildCommand:
      let
        env = stub.checkArgs "runCommand" { allowed = [ "nativeBuildInputs" "buildInputs" "passthru" "meta" ]; env = true; } env0;
      in
      stub.mkDrv { kind = "runCommand"; inherit name; args = env // { inherit buildCommand; }; passthru = env.passthru or { }; };

    symlinkJoin = args0:
      let
        args = stub.checkArgs "symlinkJoin" { allowed = [ "name" "paths" "postBuild" "passthru" "meta" ]; required = [ "name" "paths" ]; } args0;
      in
      stub.mkDrv { kind = "symlinkJoin"; inherit (args) name; inherit args; passthru = args.passthru or { }; };

    writeShellApplication = args0:
      let
        args = stub.checkArgs "writeShellApplication" { allowed = [ "name" "text" "runtimeInputs" "meta" "passthru" ]; required = [ "name" "text" ]; } args0;
      in
      stub.mkDrv { kind = "writeShellApplication"; inherit (args) name; inherit args; passthru = args.passthru or { }; };

    writeTextDir = path: text:
      stub.mkDrv { kind = "writeTextDir"; name = baseNameOf path; args = { inherit path text; }; };

    "testers.runNixOSTest" = args0:
      let
        args = stub.checkArgs "testers.runNixOSTest"
          {
            allowed = model.nixos_test_arguments.names;
            required = [ "name" "nodes" "testScript" ];
          }
          args0;
        unknownOptions = filter (o: !(builtins.elem o knownOptions))
          (concatMap (node: optionPaths [ ] args.nodes.${node}) (attrNames args.nodes));
        driver = kind: stub.mkDrv { kind = "runNixOSTest.${kind}"; name = "nixos-test-${kind}-${args.name}"; };
      in
      if !(builtins.isString args.testScript) then throw "stub: testers.runNixOSTest: a testScript function not implemented"
      else if unknownOptions != [ ] then throw "stub: testers.runNixOSTest: NixOS option(s) ${toString unknownOptions} not in nix/tests/stub-nixpkgs/model.json"
      else
        stub.mkDrv {
          kind = "testers.runNixOSTest";
          name = "vm-test-run-${args.name}";
          inherit args;
          passthru = (args.passthru or { }) // {
            driver = driver "driver";
            driverInteractive = driver "driver-interactive";
          };
        };

    # python3.withPackages f: f gets the package set (the model's
    # python3Packages.*) and returns a list of its packages.
    "python3.withPackages" = f:
      let
        packages = f result.python3Packages;
      in
      if !(builtins.isList packages && builtins.all (p: builtins.isAttrs p && p ? outPath) packages)
      then throw "stub: python3.withPackages: the function must return a list of packages"
      else stub.mkDrv { kind = "python3.withPackages"; name = "python3-env"; args = { inherit packages; }; };
  };

  sets = {
    stdenv = {
      hostPlatform.system = system;
      mkDerivation = args0:
        let
          args = stub.checkArgs "stdenv.mkDerivation"
            {
              allowed = [ "name" "pname" "version" "src" "nativeBuildInputs" "buildInputs" "buildPhase" "installPhase" "passthru" "meta" ];
              required = [ "src" ];
            }
            args0;
        in
        stub.mkDrv { kind = "stdenv.mkDerivation"; name = args.name or "${args.pname}-${args.version}"; inherit args; passthru = args.passthru or { }; };
    };
  };

  value = name: entry:
    if entry.kind == "package" then package name entry
    else if entry.kind == "function" then functions.${name} or (throw "stub: model.json lists function ${name}, pkgs.nix has no stub of it")
    else sets.${name} or (throw "stub: model.json lists ${name}, pkgs.nix has no stub of it");

  # "a.b" = v  ->  { a.b = v; }, merging entries that share a first name.
  nest = entries:
    let
      firsts = builtins.attrNames (listToAttrs (map (e: { name = head e.path; value = null; }) entries));
      under = first: filter (e: head e.path == first) entries;
      build = first:
        let es = under first; in
        if builtins.length es == 1 && tail (head es).path == [ ] then (head es).value
        else nest (map (e: e // { path = tail e.path; }) es);
    in
    listToAttrs (map (first: { name = first; value = build first; }) firsts);
  result = nest (map
    (name: { path = builtins.filter builtins.isString (builtins.split "\\." name); value = value name model.attributes.${name}; })
    (attrNames model.attributes));
in
result
