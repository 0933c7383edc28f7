# The program adapters of matrix.toml (`program = "FILE"`: another language,
# the same contract), as packages whose bin/<package> is what the runner runs
# where adapters come prebuilt (DBUS_MATRIX_PREBUILT): the same programs as in
# host mode, with interpreters and libraries from nixpkgs instead of Debian.
#
# - Python (a `library` of pythonLibraries below): the program's adapter.py
#   and the shared package benches/programs/python/ copied to share/, run by
#   `python3.withPackages` with the libraries of its matrix.toml `library`
#   (a `program` that is a shell launcher, dbus-fast's adapter.sh, only makes
#   host mode's PyPI venv: Nix has the library, so adapter.py runs directly);
# - C (`*.sh`, libdbus-c): its adapter.sh compiles the *.c sources with
#   pkg-config's flags for dbus-1 (dbus.dev) once, at build time; the
#   binary is installed. It reports dbus_get_version() of the libdbus it
#   runs with, so its version in the results is the one Nix links;
# - anything else (ruby-dbus: not in nixpkgs) must be marked
#   `unavailable_in = { nix = "reason" }` in matrix.toml; the flake does not
#   build it, and the runner shows its row with that reason (nix/matrix.nix).
#
# Every nixpkgs attribute named here is in nix/tests/stub-nixpkgs/model.json,
# with the file and commit it was read at.
{ pkgs }:
let
  # The nixpkgs Python libraries each Python program imports, by matrix.toml
  # `library`.
  pythonLibraries = {
    jeepney = [ pkgs.python3Packages.jeepney ];
    # The adapter serves on the GLib main loop: dbus.mainloop.glib and gi.repository.GLib.
    dbus-python = [ pkgs.python3Packages.dbus-python pkgs.python3Packages.pygobject3 ];
    # dbus-fast-<major> (asyncio: the standard library's event loop).
    dbus-fast = [ pkgs.python3Packages.dbus-fast ];
  };

  # Where gi.repository finds GLib's typelib (GLib-2.0.typelib: glib >= 2.80
  # builds it, in its `out` output's lib/girepository-1.0 with introspection
  # enabled, as nixpkgs' glib package.nix does), by library: the dbus-python
  # adapter imports gi.repository.GLib. Python programs are not wrapped with
  # wrapGAppsHook, which would set it.
  typelibPackages = {
    dbus-python = [ pkgs.glib.out ];
  };

  # Every program's sources, as in the repository (the Python programs find
  # the shared package at ../python beside their own directory).
  programsSource = builtins.path { path = ../benches/programs; name = "dbus-matrix-programs"; };

  prefix = "benches/programs/";
  directoryOf = adapter:
    let n = builtins.stringLength prefix; in
    if builtins.substring 0 n adapter.path == prefix
    then builtins.substring n (builtins.stringLength adapter.path - n) adapter.path
    else throw "matrix.toml: program adapter ${adapter.id}: path ${adapter.path} is not under ${prefix}";

  hasSuffix = suffix: s:
    let n = builtins.stringLength suffix; l = builtins.stringLength s; in
    l >= n && builtins.substring (l - n) n s == suffix;

  pythonFor = adapter:
    pkgs.python3.withPackages (_: pythonLibraries.${adapter.library} or (throw
      "matrix.toml: program adapter ${adapter.id}: nix/programs.nix knows no nixpkgs Python libraries for library ${adapter.library}: add them (verified in nix/tests/stub-nixpkgs/model.json), or mark the adapter unavailable_in.nix with the reason"));

  python = adapter:
    let
      env = pythonFor adapter;
      program = "$out/share/dbus-matrix/programs/${directoryOf adapter}/adapter.py";
      typelibs = map (p: "--prefix GI_TYPELIB_PATH : ${p}/lib/girepository-1.0 ") (typelibPackages.${adapter.library} or [ ]);
    in
    pkgs.runCommand adapter.package
      {
        nativeBuildInputs = [ pkgs.makeWrapper ];
        passthru = { python = env; inherit program; };
        meta.mainProgram = adapter.package;
      }
      ''
        mkdir -p $out/share/dbus-matrix $out/bin
        cp -r ${programsSource} $out/share/dbus-matrix/programs
        makeWrapper ${env}/bin/python3 $out/bin/${adapter.package} \
          --unset PYTHONPATH --unset PYTHONHOME ${builtins.concatStringsSep "" typelibs}\
          --add-flags ${program}
      '';

  # adapter.sh builds the binary when it is missing and then runs it; here it
  # builds into the build directory and runs `list` once (the listing must
  # name the adapter: a binary that cannot describe itself fails the build).
  c = adapter: pkgs.stdenv.mkDerivation {
    name = adapter.package;
    src = builtins.path { path = ../. + "/${adapter.path}"; name = "dbus-matrix-program-${adapter.id}"; };
    nativeBuildInputs = [ pkgs.pkg-config ];
    buildInputs = [ pkgs.dbus.dev ];
    buildPhase = ''
      runHook preBuild
      DBUS_MATRIX_PROGRAM_BUILD_DIR=$PWD/build sh ./${adapter.program} list > listing.json
      grep -q '"id": "${adapter.id}"' listing.json
      runHook postBuild
    '';
    installPhase = ''
      runHook preInstall
      install -D -m 755 build/${directoryOf adapter}/adapter $out/bin/${adapter.package}
      runHook postInstall
    '';
    meta.mainProgram = adapter.package;
  };

  package = adapter:
    if pythonLibraries ? ${adapter.library} then python adapter
    else if hasSuffix ".sh" adapter.program then c adapter
    else throw "matrix.toml: program adapter ${adapter.id}: the flake builds Python (*.py) and C (*.sh) programs, not ${adapter.program}: mark it unavailable_in = { nix = \"reason\" }";
in
{
  inherit package;
  # One interpreter with every Python library above, for the cargo-nextest
  # check (the runner's tests run the programs from the source, by their
  # patched shebangs).
  # dbus-fast's adapter.sh skips its venv when $DBUS_MATRIX_DBUS_FAST_PYTHON
  # names an interpreter with the library: the check sets it to this one.
  checkPython = pkgs.python3.withPackages (_: builtins.concatLists (builtins.attrValues pythonLibraries));
  # The typelib directories of every Python program's wrapper, for the same
  # check: it runs the programs from the source, without those wrappers, and
  # must give them what `nix run` gives them.
  checkTypelibPath = builtins.concatStringsSep ":"
    (map (p: "${p}/lib/girepository-1.0") (builtins.concatLists (builtins.attrValues typelibPackages)));
}
