# Wiring tests: the flake's outputs, evaluated against the stubs (through
# with-stubs.nix), checked against matrix.toml read here, independently of
# nix/matrix.nix. Evaluates to the names of the passed checks; throws with
# every failed one:
#   nix-instantiate --eval --strict --json --read-write-mode -E 'import ./nix/tests/wiring.nix { }'
# (read-write: it looks into the filtered source, which must be in the store)
{ root ? ../.. }:
let
  inherit (builtins) all any attrNames concatLists elem elemAt filter genList length stringLength substring;

  rev = "0123456789abcdef0123456789abcdef01234567";
  flake = import ./with-stubs.nix { inherit root rev; };
  matrix = builtins.fromTOML (builtins.readFile (root + "/matrix.toml"));
  nixosBuses = filter (bus: bus ? nixos_implementation) matrix.bus;
  # matrix.toml `unavailable_in = { nix = "reason" }`: adapters the flake cannot build.
  unavailableInNix = a: (a.unavailable_in or { }) ? nix;
  nixAdapters = filter (a: !(unavailableInNix a)) matrix.adapter;
  programAdapters = filter (a: a ? program) nixAdapters;
  busd = builtins.head (filter (bus: bus.id == "busd") matrix.bus);
  busdSpec = builtins.match "([^@]+)@(.+)" busd.cargo;
  systems = [ "x86_64-linux" "aarch64-linux" ];

  # Conditions are lists, checked in order and only until one is false.
  allOf = all (x: x);
  words = s: filter (w: builtins.isString w && w != "") (builtins.split "[ \t\n]+" s);
  adjacent = xs: a: b: any (i: elemAt xs i == a && elemAt xs (i + 1) == b) (genList (i: i) (length xs - 1));
  # cargo arguments that select exactly this package (among others).
  selectsPackage = cargoArgs: package:
    let ws = words cargoArgs; in
    adjacent ws "-p" package || adjacent ws "--package" package || elem "--package=${package}" ws;
  selectsBin = cargoArgs: bin:
    let ws = words cargoArgs; in adjacent ws "--bin" bin || elem "--bin=${bin}" ws;
  hasInfix = needle: haystack:
    let n = stringLength needle; in
    n <= stringLength haystack && any (i: substring i n haystack == needle) (genList (i: i) (stringLength haystack - n + 1));
  sameSet = xs: ys: all (x: elem x ys) xs && all (y: elem y xs) ys;
  outPaths = map (d: d.outPath);
  escapeShellArg = s: "'" + builtins.replaceStrings [ "'" ] [ "'\\''" ] s + "'";
  # Whether evaluating expr throws (tryEval catches throw and assert only:
  # any other error stops the whole test, which fails it too).
  throws = expr: !(builtins.tryEval (builtins.deepSeq expr expr)).success;

  check = name: ok: { inherit name ok; };

  perSystem = system:
    let
      pkgs = flake.nixpkgs.legacyPackages.${system};
      packages = flake.packages.${system};
      checks = flake.checks.${system};
      apps = flake.apps.${system};
      inherit (packages) default;
      # busd, built by the flake from its .crate (nixpkgs has none).
      busdBuild = builtins.head (filter (d: (d.stubKind or "") == "crane.buildPackage" && (d.stubArgs.pname or "") == "busd")
        checks.cargo-nextest.stubArgs.nativeBuildInputs);
      busdChecks = [
        (c "busd is crane.buildPackage of crane.downloadCargoPackage of matrix.toml's cargo and crate_sha256" (allOf [
          (busdSpec != null)
          (busdBuild.stubArgs.pname == elemAt busdSpec 0)
          (busdBuild.stubArgs.version == elemAt busdSpec 1)
          (busdBuild.stubArgs.src.stubKind == "crane.downloadCargoPackage")
          (busdBuild.stubArgs.src.stubArgs.name == elemAt busdSpec 0)
          (busdBuild.stubArgs.src.stubArgs.version == elemAt busdSpec 1)
          (busdBuild.stubArgs.src.stubArgs.checksum == busd.crate_sha256)
          ((busdBuild.stubArgs.cargoLock or null) == root + "/nix/busd/Cargo.lock")
          (hasInfix "--locked" (busdBuild.stubArgs.cargoExtraArgs or ""))
          (selectsBin (busdBuild.stubArgs.cargoExtraArgs or "") "busd")
        ]))
        (c "the wrapper, the nextest check and the dev shell use that busd" (allOf [
          ((default.env.DBUS_MATRIX_BUSD or null) == "${busdBuild}/bin/busd")
          ((checks.cargo-nextest.stubArgs.DBUS_MATRIX_BUSD or null) == "${busdBuild}/bin/busd")
          (elem busdBuild.outPath (outPaths checks.cargo-nextest.stubArgs.nativeBuildInputs))
        ]))
      ];
      # The runner's dependency build, which every adapter must share.
      deps = packages.dbus-matrix.stubArgs.cargoArtifacts or null;
      sharesDeps = p: deps != null && (p.stubArgs.cargoArtifacts.outPath or null) == deps.outPath;
      c = name: check "${system}: ${name}";

      # An adapter directory with a Cargo.lock is a workspace of its own (matrix.toml's header).
      ownLock = a: builtins.pathExists (root + "/${a.path}/Cargo.lock");
      manifestArg = a: "--manifest-path ${substring 8 (stringLength a.path - 8) a.path}/Cargo.toml";
      # A Python program: a wrapper named as its package that runs the program
      # (copied with the shared package) by python3.withPackages with the
      # nixpkgs libraries of its library. A C program: compiled by its
      # adapter.sh against dbus.dev with pkg-config, the binary installed.
      programCheck = a:
        let
          p = packages.${a.id} or null;
          dir = substring 17 (stringLength a.path - 17) a.path;
          libraries = {
            jeepney = [ "jeepney" ];
            dbus-python = [ "dbus-python" "pygobject3" ];
            dbus-fast = [ "dbus-fast" ];
          };
        in
        # Python by its library (dbus-fast's `program` is a launcher that makes
          # host mode's venv; Nix runs its adapter.py directly).
        if libraries ? ${a.library} then
          c "program adapter ${a.id}: bin/${a.package} runs ${dir}/adapter.py with python3.withPackages of nixpkgs' ${a.library}"
            (allOf [
              (p != null)
              (p.stubKind == "runCommand")
              (p.name == a.package)
              (p.python.stubKind == "python3.withPackages")
              (sameSet (outPaths p.python.stubArgs.packages) (map (n: pkgs.python3Packages.${n}.outPath) libraries.${a.library}))
              (hasInfix "makeWrapper ${p.python}/bin/python3 $out/bin/${a.package}" p.stubArgs.buildCommand)
              (hasInfix "--add-flags $out/share/dbus-matrix/programs/${dir}/adapter.py" p.stubArgs.buildCommand)
              (builtins.pathExists (root + "/${a.path}/adapter.py"))
              (hasInfix "--unset PYTHONPATH" p.stubArgs.buildCommand)
              # gi.repository.GLib needs GLib's typelib (no wrapGAppsHook sets it).
              (a.library != "dbus-python" || hasInfix "--prefix GI_TYPELIB_PATH : ${pkgs.glib.out}/lib/girepository-1.0" p.stubArgs.buildCommand)
              (hasInfix "cp -r " p.stubArgs.buildCommand)
              (builtins.pathExists (root + "/benches/programs/python/dbus_matrix_py/contract.py"))
              # The canon the Python programs load (docs/canon.md), in the copied directory.
              (builtins.pathExists (root + "/benches/programs/canon.json"))
              (p.meta.mainProgram == a.package)
            ])
        else
          c "program adapter ${a.id}: bin/${a.package} compiled by ${a.program} against dbus.dev with pkg-config"
            (allOf [
              (p != null)
              (p.stubKind == "stdenv.mkDerivation")
              (p.stubArgs.name == a.package)
              (elem pkgs.pkg-config.outPath (outPaths p.stubArgs.nativeBuildInputs))
              (elem pkgs.dbus.dev.outPath (outPaths p.stubArgs.buildInputs))
              (builtins.pathExists "${p.stubArgs.src}/${a.program}")
              # The canon's C header (docs/canon.md) is in the program's own directory.
              (builtins.pathExists "${p.stubArgs.src}/canon_data.h")
              (hasInfix "sh ./${a.program} list" p.stubArgs.buildPhase)
              (hasInfix "$out/bin/${a.package}" p.stubArgs.installPhase)
            ]);

      adapterChecks = map
        (a:
          let p = packages.${a.id} or null; in
          if unavailableInNix a then
            c "adapter ${a.id} is unavailable in Nix (matrix.toml unavailable_in.nix, with a reason): no package, not in the runner's bin dir"
              (allOf [
                (p == null)
                (a.unavailable_in.nix != "")
                (!(elem a.id (attrNames packages)))
              ])
          else if a ? program then programCheck a
          else if ownLock a then
            c "adapter ${a.id} is a package built with its own lockfile, from its own directory"
              (allOf [
                (p != null)
                (p.stubKind == "crane.buildPackage")
                (substring 0 8 a.path == "benches/")
                (hasInfix "sourceRoot=\"$sourceRoot/${substring 8 (stringLength a.path - 8) a.path}\"" (p.stubArgs.postUnpack or ""))
                (elem "--locked" (words (p.stubArgs.cargoExtraArgs or "")))
                ((p.stubArgs.cargoLock or null) == root + "/${a.path}/Cargo.lock")
                (p.stubArgs.cargoArtifacts == null)
                (p.stubArgs.pname == a.package)
                (p.stubArgs.doCheck == false)
                # Its binary is next to the runner when the tests run, and it has fmt and clippy checks.
                (hasInfix "${p}/bin/${a.package} " (checks.cargo-nextest.stubArgs.preCheck or ""))
                (hasInfix (manifestArg a) (checks."cargo-fmt-${a.id}".stubArgs.cargoExtraArgs or ""))
                (hasInfix "sourceRoot=\"$sourceRoot/" (checks."cargo-clippy-${a.id}".stubArgs.postUnpack or ""))
                ((checks."cargo-clippy-${a.id}".stubArgs.cargoLock or null) == root + "/${a.path}/Cargo.lock")
                (hasInfix "--deny warnings" (checks."cargo-clippy-${a.id}".stubArgs.cargoClippyExtraArgs or ""))
              ])
          else
            c "adapter ${a.id} is a package built with -p ${a.package} on the shared deps" (allOf [
              (p != null)
              (p.stubKind == "crane.buildPackage")
              (selectsPackage (p.stubArgs.cargoExtraArgs or "") a.package)
              (p.stubArgs.pname == a.package)
              (p.stubArgs.doCheck == false)
              (sharesDeps p)
            ]))
        matrix.adapter;

      packageChecks = [
        (c "packages are exactly the adapters not unavailable in Nix, dbus-matrix and default"
          (sameSet (attrNames packages) (map (a: a.id) nixAdapters ++ [ "dbus-matrix" "default" ])))
        (c "the builds' source has the program adapters (benches/programs/), which the runner's tests run" (allOf [
          (builtins.pathExists "${deps.stubArgs.src}/programs/python/dbus_matrix_py/contract.py")
          # The canon the harness test compares and the programs load (docs/canon.md).
          (builtins.pathExists "${deps.stubArgs.src}/programs/canon.json")
          (all (a: builtins.pathExists "${deps.stubArgs.src}/${substring 8 (stringLength a.path - 8) a.path}/${a.program}") programAdapters)
        ]))
        (c "the shared deps are one buildDepsOnly of the whole workspace" (allOf [
          (deps != null)
          (deps.stubKind == "crane.buildDepsOnly")
          (elem "--workspace" (words deps.stubArgs.cargoExtraArgs))
        ]))
        (c "the builds' source is the workspace, with its Cargo.lock at the root" (allOf [
          (builtins.pathExists "${deps.stubArgs.src}/Cargo.lock")
          (builtins.pathExists "${deps.stubArgs.src}/runner/Cargo.toml")
          (!(builtins.pathExists "${deps.stubArgs.src}/target"))
        ]))
        (c "the builds have pkg-config and dbus's dev output (dbus-0.9 adapter)" (allOf [
          (elem pkgs.pkg-config.outPath (outPaths deps.stubArgs.nativeBuildInputs))
          (elem pkgs.dbus.dev.outPath (outPaths deps.stubArgs.buildInputs))
        ]))
        (c "dbus-matrix is built with -p dbus-matrix on the shared deps" (allOf [
          (packages.dbus-matrix.stubKind == "crane.buildPackage")
          (selectsPackage packages.dbus-matrix.stubArgs.cargoExtraArgs "dbus-matrix")
          (sharesDeps packages.dbus-matrix)
        ]))
      ];

      # The wrapped runner: what it sets, and that the wrapper command sets it.
      wrapperChecks =
        let
          inherit (default) env;
          command = default.stubArgs.buildCommand;
          expected = {
            DBUS_MATRIX_DBUS_DAEMON = "${pkgs.dbus}/bin/dbus-daemon";
            DBUS_MATRIX_DBUS_BROKER_LAUNCH = "${pkgs.dbus-broker}/bin/dbus-broker-launch";
            DBUS_MATRIX_BUSD = "${busdBuild}/bin/busd";
            DBUS_MATRIX_BIN_DIR = "${default.adapterBins}/bin";
            # builtins.path is content-addressed: same store path, same content.
            DBUS_MATRIX_MATRIX = "${builtins.path { path = root + "/matrix.toml"; name = "matrix.toml"; }}";
            DBUS_MATRIX_REVISION = rev;
            DBUS_MATRIX_PREBUILT = "1";
          };
        in
        map
          (name: c "default sets ${name} to ${expected.${name}}" (allOf [
            ((env.${name} or null) == expected.${name})
            (hasInfix "--set ${name} ${escapeShellArg expected.${name}}" command)
          ]))
          (attrNames expected)
        ++ [
          (c "default wraps dbus-matrix"
            (hasInfix "makeWrapper ${packages.dbus-matrix}/bin/dbus-matrix $out/bin/dbus-matrix" command))
          (c "default's bin dir joins exactly the adapter packages (the program adapters among them, none unavailable in Nix)"
            (sameSet (outPaths default.adapterBins.stubArgs.paths) (map (a: packages.${a.id}.outPath or "missing ${a.id}") nixAdapters)))
        ];

      # Apps: their scripts are checks too, which is how the test reaches them.
      appChecks = [
        (c "apps.default runs the wrapped runner: run --profile quick --out ./results" (allOf [
          (apps.default.type == "app")
          (apps.default.program == "${checks.app-default}/bin/dbus-matrix-quick")
          (hasInfix "exec ${default}/bin/dbus-matrix run --profile quick --out ./results" checks.app-default.stubArgs.text)
        ]))
        (c "apps.dbus-matrix is the wrapped runner" (allOf [
          (apps.dbus-matrix.type == "app")
          (apps.dbus-matrix.program == "${default}/bin/dbus-matrix")
        ]))
        (c "apps.vm-bench runs the driver of a full-profile VM test per bus with nixos_implementation, keeps its hydra-metrics" (allOf [
          (apps.vm-bench.type == "app")
          (apps.vm-bench.program == "${checks.app-vm-bench}/bin/dbus-matrix-vm-bench")
          (sameSet (attrNames checks.app-vm-bench.tests) (map (b: "vm-${b.id}") nixosBuses))
          (all
            (bus:
              let t = checks.app-vm-bench.tests."vm-${bus.id}"; in
              allOf [
                (t.dbusMatrix.profile == "full")
                (t.stubArgs.nodes.machine.services.dbus.implementation == bus.nixos_implementation)
                (hasInfix "${t.driver}/bin/nixos-test-driver" checks.app-vm-bench.stubArgs.text)
              ])
            nixosBuses)
          # Hydra's metrics of each VM test's $out come out with the results.
          (hasInfix "cp \"$work/nix-support/hydra-metrics\" \"results/$test/nix-support/hydra-metrics\"" checks.app-vm-bench.stubArgs.text)
        ]))
        # nix/compare.sh runs git itself: the app brings it (the user's nix runs the app).
        (c "apps.compare has git among its runtime inputs" (elem pkgs.git.outPath (map (p: p.outPath) (checks.app-compare.stubArgs.runtimeInputs or [ ]))))
        (c "app-shellcheck runs shellcheck over every app's text" (allOf [
          (elem pkgs.shellcheck.outPath (map (p: p.outPath) (checks.app-shellcheck.stubArgs.nativeBuildInputs or [ ])))
          (all (name: hasInfix "-dbus-matrix-app-${name}.sh" checks.app-shellcheck.stubArgs.buildCommand) [ "default" "compare" "vm-bench" ])
        ]))
      ];

      vmChecks = map
        (bus:
          let
            t = checks."vm-${bus.id}" or null;
            machine = t.stubArgs.nodes.machine;
            policy = builtins.head machine.services.dbus.packages;
          in
          c "VM test vm-${bus.id}: services.dbus.implementation = ${bus.nixos_implementation}, policy, smoke profile, fixed size, nix-support/hydra-metrics" (allOf [
            (t != null)
            (t.stubKind == "testers.runNixOSTest")
            (machine.services.dbus.implementation == bus.nixos_implementation)
            (policy.stubArgs.path == "share/dbus-1/system.d/dbus-matrix.conf")
            (hasInfix "<allow own_prefix=\"io.killing.spark\"/>" policy.stubArgs.text)
            # One rule per adapter's service (service_name in benches/runner/src/run/bus_session.rs): dbus-broker has no send_destination_prefix.
            (all
              (a: hasInfix "<allow send_destination=\"io.killing.spark.Bench.${builtins.replaceStrings [ "-" "." ] [ "_" "_" ] a.id}\"/>" policy.stubArgs.text)
              matrix.adapter)
            (!(hasInfix "send_destination_prefix" policy.stubArgs.text))
            (builtins.isInt machine.virtualisation.cores)
            (builtins.isInt machine.virtualisation.memorySize)
            # The wrapped runner, but with a constant revision (below: no check depends on self.rev).
            (any
              (r: (r.stubKind or "") == "runCommand" && r ? env
                && r.env == default.env // { DBUS_MATRIX_REVISION = r.env.DBUS_MATRIX_REVISION; }
                && r.env.DBUS_MATRIX_REVISION != rev
                && r.env.DBUS_MATRIX_REVISION == t.dbusMatrix.revision)
              machine.environment.systemPackages)
            (t.dbusMatrix.profile == "smoke")
            # A correctness test: a scenario selection per adapter, strict, well under 10 minutes.
            (t.dbusMatrix.strict or false)
            (builtins.isList (t.dbusMatrix.scenarios or null) && t.dbusMatrix.scenarios != [ ])
            (t.dbusMatrix.adapters or [ ] == map (a: a.id) nixAdapters)
            ((t.stubArgs.globalTimeout or 0) > 0 && t.stubArgs.globalTimeout <= 600)
            (builtins.isInt t.dbusMatrix.run_timeout && t.dbusMatrix.run_timeout < t.stubArgs.globalTimeout)
            (t.dbusMatrix.revision != rev)
            (t.dbusMatrix.implementation == bus.nixos_implementation)
            (hasInfix "--system-bus" t.stubArgs.testScript)
            (hasInfix "copy_from_vm" t.stubArgs.testScript)
            (hasInfix "schema_version" t.stubArgs.testScript)
            # $out/nix-support/hydra-metrics from the checked results file (issue 33).
            (hasInfix "--format hydra-metrics > {SUPPORT}/hydra-metrics" t.stubArgs.testScript)
            (hasInfix "SUPPORT = \"/tmp/dbus-matrix-hydra/nix-support\"" t.stubArgs.testScript)
            (hasInfix "machine.copy_from_vm(SUPPORT, \"\")" t.stubArgs.testScript)
          ]))
        nixosBuses
      ++ [
        (c "one VM test check per bus with nixos_implementation, no other"
          (sameSet (filter (n: substring 0 3 n == "vm-") (attrNames checks)) (map (b: "vm-${b.id}") nixosBuses)))
      ];

      # The build graph (issue 26, defect 8).
      ciDeps = checks.cargo-clippy.stubArgs.cargoArtifacts or null;
      workspaceBuild = checks.cargo-nextest.stubArgs.cargoArtifacts or null;
      # Relative paths of the files under a store directory.
      filesUnder = dir:
        let
          walk = rel:
            let entries = builtins.readDir (if rel == "" then dir else "${dir}/${rel}"); in
            builtins.concatMap
              (n:
                let r = if rel == "" then n else "${rel}/${n}"; in
                if entries.${n} == "directory" then walk r else [ r ])
              (attrNames entries);
        in
        walk "";
      # The real files copied over a package's dummy source (nix/package-source.nix).
      overlayOf = p:
        let m = builtins.match ".*cp -r --no-preserve=mode,ownership ([^ ]+)/[.] .*" (p.stubArgs.src.stubArgs.extraDummyScript or ""); in
        if m == null then null else builtins.head m;
      workspaceAdapters = filter (a: !(unavailableInNix a) && !(a ? program) && !(ownLock a)) matrix.adapter;
      relDir = a: substring 8 (stringLength a.path - 8) a.path;
      hasWorkspaceHack = builtins.pathExists (root + "/benches/workspace-hack/Cargo.toml");
      sourceChecks = map
        (a:
          let
            p = packages.${a.id} or { stubArgs = { }; };
            overlay = overlayOf p;
            files = if overlay == null then [ ] else filesUnder overlay;
            others = filter (b: b.id != a.id && substring 0 17 b.path == "benches/adapters/") matrix.adapter;
          in
          c "adapter ${a.id}: its source is crane's dummy source of the workspace with the real files of what it compiles, no other adapter's main.rs, not the runner" (allOf [
            ((p.stubArgs.src.stubKind or "") == "crane.mkDummySrc")
            (p.stubArgs.src.stubArgs.src == deps.stubArgs.src)
            (overlay != null)
            (elem "${relDir a}/Cargo.toml" files)
            (elem "${relDir a}/src/main.rs" files)
            (elem "harness/src/lib.rs" files)
            (!hasWorkspaceHack || elem "workspace-hack/Cargo.toml" files)
            (!(any (b: elem "${relDir b}/src/main.rs" files) others))
            (!(elem "runner/src/main.rs" files))
            (!(elem "Cargo.lock" files))
          ]))
        workspaceAdapters
      ++ [
        (c "dbus-matrix: its source is the dummy source with the runner's files, no adapter's" (
          let files = filesUnder (overlayOf packages.dbus-matrix); in
          allOf [
            ((packages.dbus-matrix.stubArgs.src.stubKind or "") == "crane.mkDummySrc")
            (elem "runner/src/main.rs" files)
            (elem "bus/src/lib.rs" files)
            (!(any (a: elem "${relDir a}/src/main.rs" files) workspaceAdapters))
          ]
        ))
      ];
      graphChecks = [
        (c "the packages' shared deps are release, without tests; the checks' are the ci profile" (allOf [
          (!(deps.stubArgs ? CARGO_PROFILE))
          ((deps.stubArgs.doCheck or true) == false)
          (ciDeps != null)
          (ciDeps.stubKind == "crane.buildDepsOnly")
          ((ciDeps.stubArgs.CARGO_PROFILE or null) == "ci")
          (elem "--workspace" (words ciDeps.stubArgs.cargoExtraArgs))
          (ciDeps.stubArgs.src == deps.stubArgs.src)
        ]))
        (c "clippy, the workspace build and nextest are on the ci profile, on the ci deps" (allOf [
          ((checks.cargo-clippy.stubArgs.CARGO_PROFILE or null) == "ci")
          ((workspaceBuild.stubArgs.CARGO_PROFILE or null) == "ci")
          (workspaceBuild.stubArgs.cargoArtifacts.outPath == ciDeps.outPath)
          ((checks.cargo-nextest.stubArgs.CARGO_PROFILE or null) == "ci")
          (all (a: hasInfix "/bin/${a.package} \"\${CARGO_TARGET_DIR:-target}/ci/\"" (checks.cargo-nextest.stubArgs.preCheck or "")) (filter ownLock nixAdapters))
        ]))
        (c "leaf checks do not install cargo's target directory (doInstallCargoArtifacts = false); the workspace build, which nextest builds on, does"
          (allOf ([
            ((workspaceBuild.stubArgs.doInstallCargoArtifacts or true) == true)
          ] ++ map
            (n: (checks.${n}.stubArgs.doInstallCargoArtifacts or true) == false)
            (filter (n: elem (checks.${n}.stubKind or "") [ "crane.cargoClippy" "crane.cargoNextest" "crane.cargoFmt" ]) (attrNames checks)))))
      ];

      otherChecks = [
        (c "checks: cargo-fmt, cargo-clippy (deny warnings), cargo-nextest, deadnix, nixpkgs-fmt" (allOf [
          (checks.cargo-fmt.stubKind == "crane.cargoFmt")
          (elem "--all" (words checks.cargo-fmt.stubArgs.cargoExtraArgs))
          (checks.cargo-clippy.stubKind == "crane.cargoClippy")
          (hasInfix "--deny warnings" checks.cargo-clippy.stubArgs.cargoClippyExtraArgs)
          (checks.cargo-nextest.stubKind == "crane.cargoNextest")
          (hasInfix "--profile nix-sandbox" checks.cargo-nextest.stubArgs.cargoNextestExtraArgs)
          (hasInfix "sed -n '/^\\[profile.nix-sandbox\\]/,/^\\[/p' .config/nextest.toml" (checks.cargo-nextest.stubArgs.preCheck or ""))
          (builtins.pathExists (root + "/benches/.config/nextest.toml"))
          (hasInfix "cp ${builtins.path { path = root + "/matrix.toml"; name = "matrix.toml"; }} matrix.toml" checks.cargo-nextest.stubArgs.postUnpack)
          (checks.cargo-nextest.stubArgs.DBUS_MATRIX_DBUS_DAEMON == "${pkgs.dbus}/bin/dbus-daemon")
          (hasInfix "docs/results\n" checks.cargo-nextest.stubArgs.postUnpack)
          (all (n: elem pkgs.${n}.outPath (outPaths checks.cargo-nextest.stubArgs.nativeBuildInputs)) [ "valgrind" "chromium" "critcmp" ])
        ]))
        (c "the nextest check runs the program adapters from the source: shebangs patched, a python3 with every Python adapter's libraries" (allOf [
          (hasInfix "patchShebangs --build source/programs" checks.cargo-nextest.stubArgs.postUnpack)
          (any
            (d: (d.stubKind or "") == "python3.withPackages"
              && sameSet (outPaths d.stubArgs.packages) (map (n: pkgs.python3Packages.${n}.outPath) [ "jeepney" "dbus-python" "pygobject3" "dbus-fast" ]))
            checks.cargo-nextest.stubArgs.nativeBuildInputs)
          (hasInfix "deadnix --fail" checks.deadnix.stubArgs.buildCommand)
          (hasInfix "nixpkgs-fmt --check" checks.nixpkgs-fmt.stubArgs.buildCommand)
        ]))
        # The runner reads matrix.toml's `unavailable_in` for its build mode:
        # not prebuilt, the check's would be host mode, and the rows the flake
        # cannot have (ruby-dbus: no gem in the check's Ruby) would run there
        # and fail. The simulation of the check (nix/tests/sandbox-nextest.sh)
        # sets it as the check does, and the dev shell has the check's Ruby.
        (c "the nextest check, its simulation and the dev shell run the runner in build mode nix (DBUS_MATRIX_BUILD_MODE)" (allOf [
          (any unavailableInNix matrix.adapter)
          ((checks.cargo-nextest.stubArgs.DBUS_MATRIX_BUILD_MODE or null) == "nix")
          (hasInfix "\n  DBUS_MATRIX_BUILD_MODE=nix\n" (builtins.readFile (root + "/nix/tests/sandbox-nextest.sh")))
          ((flake.devShells.${system}.default.stubArgs.DBUS_MATRIX_BUILD_MODE or null) == "nix")
        ]))
        # Every GLib typelib directory a Python adapter's wrapper prefixes
        # (what `nix run` runs) is on the nextest check's GI_TYPELIB_PATH
        # (where the tests run the same programs from the source).
        (c "the nextest check runs the program adapters with the wrappers' GI_TYPELIB_PATH"
          (
            let
              prefixed = builtins.concatMap
                (a:
                  let m = builtins.match ".*--prefix GI_TYPELIB_PATH : ([^ ]+) .*" (packages.${a.id}.stubArgs.buildCommand or ""); in
                  if m == null then [ ] else m)
                programAdapters;
              inCheck = builtins.filter (x: x != "") (builtins.split ":" (checks.cargo-nextest.stubArgs.GI_TYPELIB_PATH or ""));
            in
            prefixed != [ ] && all (d: elem d inCheck) prefixed
          ))
        # What it provides, module by module and program by program, is
        # checked by nix/tests/devshell_test.py.
        (c "devShells.default is crane's devShell with the toolchain and the cargo-nextest check's inputs"
          (allOf [
            (outPaths flake.devShells.${system}.default.stubArgs.inputsFrom == [ checks.cargo-nextest.outPath ])
            (all (p: elem p (outPaths flake.devShells.${system}.default.stubArgs.packages))
              (outPaths (map (n: pkgs.${n}) [ "rustc" "cargo" "clippy" "rustfmt" "cargo-nextest" "deadnix" "nixpkgs-fmt" ])))
          ]))
        # What it does with no arguments is executed by nix/tests/formatter_test.py.
        (c "formatter runs nixpkgs-fmt" (elem pkgs.nixpkgs-fmt.outPath (map (p: p.outPath) (flake.formatter.${system}.stubArgs.runtimeInputs or [ ]))))
      ];
    in
    busdChecks ++ adapterChecks ++ packageChecks ++ sourceChecks ++ graphChecks ++ wrapperChecks ++ appChecks ++ vmChecks ++ otherChecks;

  # flake.lock: the pins of the issue, and the originals of flake.nix.
  lock = builtins.fromJSON (builtins.readFile (root + "/flake.lock"));
  pin = name: rev: narHash: lastModified:
    let node = lock.nodes.${name}; in
    check "flake.lock pins ${name} to ${rev}" (allOf [
      (lock.nodes.root.inputs.${name} == name)
      (node.locked.type == "github")
      (node.locked.rev == rev)
      (node.locked.narHash == narHash)
      (node.locked.lastModified == lastModified)
      (node.locked.owner == node.original.owner)
      (node.locked.repo == node.original.repo)
    ]);
  original = name: url:
    let o = lock.nodes.${name}.original; in
    check "flake.lock's original of ${name} is flake.nix's ${url}" (allOf [
      (flake.flakeInputs.${name}.url == url)
      (url == "github:${o.owner}/${o.repo}" + (if o ? ref then "/${o.ref}" else ""))
    ]);
  # Every derivation but the wrapped runner, the apps that run it (and the
  # shellcheck of their texts), and vm-bench's driver, the same whatever the commit: a docs-only commit
  # rebuilds no adapter and boots no VM check again.
  drvsWith = r:
    let f = import ./with-stubs.nix { inherit root; rev = r; }; in
    builtins.mapAttrs (_: d: d.drvPath) (f.checks.x86_64-linux // builtins.removeAttrs f.packages.x86_64-linux [ "default" ]);
  # app-shellcheck reads the apps' texts, which name the wrapped runner: a
  # few seconds of shellcheck again per commit.
  revisionFree = builtins.removeAttrs (drvsWith rev) [ "app-default" "app-vm-bench" "app-compare" "app-shellcheck" ];
  revisionOf = args: (import ./with-stubs.nix ({ inherit root; } // args)).packages.x86_64-linux.default.env.DBUS_MATRIX_REVISION;
  defaultWithRust = rustcVersion: (import ./with-stubs.nix { inherit root rev rustcVersion; }).packages.x86_64-linux.default.drvPath;

  results =
    concatLists (map perSystem systems)
    ++ [
      (check "flake.lock is version 7" (lock.version == 7))
      (pin "nixpkgs" "531670d871c0e29724a02f3cbcac170adc65b58c" "sha256-ODZkEK9Gy50yg6h98u7KkitZ3oc/uuTFK00bh1CRdNA=" 1785734586)
      (pin "crane" "b8d87f76ea4e4b6f30f2e6eaf3fbb60ff7d87167" "sha256-H++/2dMt+5+tErKU+t5z6c4Xedvj9w+UPQYrpygwIPw=" 1785631643)
      (original "nixpkgs" "github:NixOS/nixpkgs/nixos-26.05")
      (original "crane" "github:ipetkov/crane")
      (check "outputs are for x86_64-linux and aarch64-linux" (allOf (map
        (output: sameSet (attrNames flake.${output}) systems)
        [ "packages" "checks" "apps" "devShells" "formatter" ])))
      (check "Rust 1.88.0 stops evaluation, 1.89.0 does not (workspace rust-version)" (allOf [
        (throws (defaultWithRust "1.88.0"))
        (!(throws (defaultWithRust "1.89.0")))
      ]))
      (check "no check but the apps' scripts, no package but the wrapped runner depends on the revision (self.rev): ${toString (attrNames revisionFree)}"
        (
          let other = drvsWith "fedcba9876543210fedcba9876543210fedcba98"; in
          all (n: revisionFree.${n} == other.${n}) (attrNames revisionFree)
        ))
      (check "the revision is self.rev, else self.dirtyRev, else \"dirty\"" (allOf [
        (revisionOf { inherit rev; } == rev)
        (revisionOf { dirtyRev = "abc-dirty"; } == "abc-dirty")
        (revisionOf { } == "dirty")
      ]))
    ];

  failed = filter (r: !r.ok) results;
in
if failed == [ ] then map (r: r.name) results
else throw "wiring: ${toString (length failed)} of ${toString (length results)} checks failed:\n  ${builtins.concatStringsSep "\n  " (map (r: r.name) failed)}"
