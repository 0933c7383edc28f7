# nixpkgs' trivial builders, as the stand-in has them: the same arguments and
# the same outputs (runCommand, writeTextFile and its short forms,
# writeShellApplication with nixpkgs' default check at the pin — `bash -n`
# only —, symlinkJoin, makeSetupHook), built by the stand-in's stdenv.
{ lib, stdenv, runtimeShell }:
rec {
  runCommandWith = { stdenv, name, runLocal ? false, derivationArgs ? { } }: buildCommand:
    stdenv.mkDerivation ({
      inherit name buildCommand;
      passAsFile = [ "buildCommand" ] ++ (derivationArgs.passAsFile or [ ]);
    } // lib.optionalAttrs runLocal { preferLocalBuild = true; allowSubstitutes = false; }
    // builtins.removeAttrs derivationArgs [ "passAsFile" ]);

  runCommand = name: env: runCommandWith { inherit stdenv name; derivationArgs = env; };
  runCommandLocal = name: env: runCommandWith { inherit stdenv name; runLocal = true; derivationArgs = env; };
  runCommandCC = runCommand;

  writeTextFile =
    { name
    , text
    , executable ? false
    , destination ? ""
    , checkPhase ? ""
    , meta ? { }
    , passthru ? { }
    , allowSubstitutes ? false
    , preferLocalBuild ? true
    , derivationArgs ? { }
    }:
    runCommand name
      ({
        inherit text executable checkPhase allowSubstitutes preferLocalBuild meta passthru;
        passAsFile = [ "text" ] ++ (derivationArgs.passAsFile or [ ]);
      } // builtins.removeAttrs derivationArgs [ "passAsFile" ])
      ''
        target=$out${lib.escapeShellArg destination}
        mkdir -p "$(dirname "$target")"
        if [ -e "$textPath" ]; then mv "$textPath" "$target"; else printf '%s' "$text" > "$target"; fi
        if [ -n "$executable" ]; then chmod +x "$target"; fi
        eval "$checkPhase"
      '';

  writeText = name: text: writeTextFile { inherit name text; };
  writeTextDir = path: text: writeTextFile { inherit text; name = builtins.baseNameOf path; destination = "/${path}"; };
  writeScript = name: text: writeTextFile { inherit name text; executable = true; };
  writeShellScript = name: text: writeTextFile {
    inherit name;
    executable = true;
    text = "#!${runtimeShell}\n${text}";
    checkPhase = "${stdenv.shellDryRun} \"$target\"";
  };

  writeShellApplication =
    { name
    , text
    , runtimeInputs ? [ ]
    , meta ? { }
    , passthru ? { }
    , checkPhase ? null
    , bashOptions ? [ "errexit" "nounset" "pipefail" ]
    , inheritPath ? true
    , derivationArgs ? { }
    }:
    writeTextFile {
      inherit name passthru derivationArgs;
      meta = { mainProgram = name; } // meta;
      executable = true;
      destination = "/bin/${name}";
      allowSubstitutes = true;
      preferLocalBuild = false;
      text = ''
        #!${runtimeShell}
        ${lib.concatMapStringsSep "\n" (option: "set -o ${option}") bashOptions}
      '' + lib.optionalString (runtimeInputs != [ ]) ''
        export PATH="${lib.makeBinPath runtimeInputs}${lib.optionalString inheritPath ":$PATH"}"
      '' + ''

        ${text}
      '';
      checkPhase =
        if checkPhase == null then ''
          runHook preCheck
          ${stdenv.shellDryRun} "$target"
          runHook postCheck
        '' else checkPhase;
    };

  # lndir -silent of each path into $out: directories made, files linked.
  symlinkJoin = args@{ name, paths, postBuild ? "", ... }:
    runCommand name
      (builtins.removeAttrs args [ "name" "postBuild" "paths" ] // {
        inherit paths;
        passAsFile = [ "paths" ];
      })
      ''
        mkdir -p $out
        for i in $(cat $pathsPath); do
          cp -rs --no-clobber "$i/." "$out/"
          chmod -R u+w "$out"
        done
        ${postBuild}
      '';

  makeSetupHook = { name ? lib.warn "calling makeSetupHook without passing a name is deprecated." "hook", propagatedBuildInputs ? [ ], substitutions ? { }, meta ? { }, passthru ? { }, ... }: script:
    runCommand name
      (substitutions // {
        inherit meta passthru;
        standinSubstitutions = builtins.attrNames substitutions;
        strictDeps = true;
        propagatedHookInputs = propagatedBuildInputs;
      })
      ''
        mkdir -p $out/nix-support
        cp ${script} $out/nix-support/setup-hook
        chmod u+w $out/nix-support/setup-hook
        for var in $standinSubstitutions; do
          substituteInPlace $out/nix-support/setup-hook --subst-var "$var"
        done
        if [ -n "$propagatedHookInputs" ]; then
          printf '%s ' $propagatedHookInputs > $out/nix-support/propagated-build-inputs
        fi
      '';
}
