# The source of one package's own build (an adapter, the runner): crane's
# dummy source of the whole workspace (every Cargo.toml, cleaned, the
# Cargo.lock and a dummy file for every target: what cargo needs to load the
# workspace, and what the shared dependency build compiled), with the real
# files of what this package compiles copied over it:
# - its directory and those of its path dependencies, transitively
#   (`harness`, `lockfile`, `workspace-hack`; dev-dependencies are not built);
# - every file its Rust sources include by `#[path = "…"]` (code shared
#   between the majors of one library), found by reading them here; for a
#   file under benches/adapter-shared/<family>/, that whole directory.
# So a change to one adapter's files rebuilds that adapter only, and a change
# to the code two adapters share rebuilds those two. Derived from the
# manifests and the sources, never listed by hand; nix/tests/run.sh checks
# each package's files against the files cargo's dep-info says rustc read.
{ lib, craneLib, workspaceSrc }:
let
  inherit (builtins) attrNames attrValues concatMap filter fromTOML genericClosure isAttrs pathExists readDir readFile split substring stringLength;
  root = ../benches;
  workspaceDeps = (fromTOML (readFile (root + "/Cargo.toml"))).workspace.dependencies or { };

  # The Rust and TOML files and the Cargo.lock (an adapter with a lockfile
  # of its own) of a package directory, as nix/source.nix keeps them.
  cargoFiles = lib.fileset.fileFilter (file: file.hasExt "rs" || file.hasExt "toml" || file.name == "Cargo.lock");

  # Directories of the path dependencies (normal and build, also per target) of the package in `dir`.
  pathDeps = dir:
    let
      toml = fromTOML (readFile (dir + "/Cargo.toml"));
      tables = [ (toml.dependencies or { }) (toml.build-dependencies or { }) ]
        ++ concatMap (t: [ (t.dependencies or { }) (t.build-dependencies or { }) ]) (attrValues (toml.target or { }));
      depDir = name: spec:
        if isAttrs spec && spec ? path then [ (dir + "/${spec.path}") ]
        else if isAttrs spec && (spec.workspace or false) && isAttrs (workspaceDeps.${name} or null) && workspaceDeps.${name} ? path
        then [ (root + "/${workspaceDeps.${name}.path}") ]
        else [ ];
    in
    concatMap (t: concatMap (name: depDir name t.${name}) (attrNames t)) tables;

  # Files a package's manifest names outside its directory: its build
  # script, and the directories of its targets' roots (their modules),
  # e.g. zbus-6-tokio builds ../zbus-6/src/main.rs with ../zbus-6/build.rs.
  targetItems = dir:
    let
      toml = fromTOML (readFile (dir + "/Cargo.toml"));
      build = toml.package.build or null;
      roots = map (t: t.path) (filter (t: t ? path) ((toml.bin or [ ]) ++ (if toml ? lib then [ toml.lib ] else [ ])));
    in
    (if builtins.isString build then [{ path = dir + "/${build}"; kind = "file"; }] else [ ])
    ++ map (r: { path = dirOf (dir + "/${r}"); kind = "dir"; }) roots;

  packageDirs = dir: map (x: x.path) (genericClosure {
    startSet = [{ key = toString dir; path = dir; }];
    operator = x: map (d: { key = toString d; path = d; }) (pathDeps x.path);
  });

  # Every .rs file under a directory.
  rustFiles = dir:
    let entries = readDir dir; in
    concatMap
      (name:
        if entries.${name} == "directory" then rustFiles (dir + "/${name}")
        else if builtins.match ".*\\.rs" name != null then [ (dir + "/${name}") ]
        else [ ])
      (attrNames entries);

  # The files a Rust file names in `#[path = "…"]`, relative to its directory;
  # lines that are comments (`//`, `//!`, `///`) name none, though a test's
  # documentation may spell the attribute.
  codeLines = file:
    filter (l: builtins.isString l && builtins.match "[[:space:]]*//.*" l == null)
      (split "\n" (readFile file));
  pathIncludes = file:
    map (m: dirOf file + "/${builtins.head m}")
      (filter builtins.isList (concatMap (split "#[[]path[[:space:]]*=[[:space:]]*\"([^\"]+)\"[[:space:]]*[]]") (codeLines file)));

  sharedRoot = toString root + "/adapter-shared/";
  # A file under benches/adapter-shared/<family>/: that family's directory.
  sharedFamily = file:
    let
      s = toString file;
      rest = substring (stringLength sharedRoot) (stringLength s) s;
      family = builtins.head (split "/" rest);
    in
    if substring 0 (stringLength sharedRoot) s == sharedRoot && family != rest
    then root + "/adapter-shared/${family}"
    else null;

  # What one package compiles: directories and single files, with the files
  # every newly reached Rust file includes.
  compiled = dir:
    let
      dirs = packageDirs dir;
      item = path: kind: { key = toString path; inherit path kind; };
      included = f:
        let family = sharedFamily f; in
        if family != null then item family "dir" else item f "file";
      reached = genericClosure {
        startSet = map (d: item d "dir") dirs ++ map (t: item t.path t.kind) (concatMap targetItems dirs);
        operator = x:
          let files = if x.kind == "dir" then rustFiles x.path else [ x.path ]; in
          map included (concatMap pathIncludes files);
      };
    in
    map (x: if x.kind == "dir" then cargoFiles x.path else x.path) reached;

  # The real files of the package's build, as a store path of their own.
  realFiles = dir: lib.fileset.toSource {
    inherit root;
    fileset = lib.fileset.unions (compiled dir);
  };
in
# `dir`: the package's directory (a path under benches/).
dir:
if !(pathExists (dir + "/Cargo.toml")) then throw "nix/package-source.nix: ${toString dir} has no Cargo.toml"
else
  craneLib.mkDummySrc {
    src = workspaceSrc;
    # crane has just copied its stubs (each member's Cargo.toml and dummy
    # sources) in from the store, read-only; a build user is not root and
    # cannot replace them until they are writable.
    extraDummyScript = ''
      chmod -R u+w "$out"
      cp -r --no-preserve=mode,ownership ${realFiles dir}/. "$out"/
    '';
  }
