#!/usr/bin/env bash
# Compiles the adapter template (template/adapter) against today's
# harness, so that it cannot drift from the code it is copied into: a copy in a
# throwaway workspace under benches/target/template-check with the workspace's
# shared dependencies and versions (benches/Cargo.toml's [workspace.*] tables,
# benches/Cargo.lock), and an empty crate `mylib` 1.2.3 standing in for the
# library. `cargo check --profile ci` only: the todo!() bodies type-check,
# nothing runs.
# scripts/test.sh runs it; it needs no network (the registry cache of the
# workspace's own build).
set -euo pipefail
cd "$(dirname "$0")/../benches"
dir=target/template-check
rm -rf "$dir"
mkdir -p "$dir/adapters" "$dir/mylib/src"
cp -r ../template/adapter "$dir/adapters/mylib-1"
cp Cargo.lock "$dir/Cargo.lock"
: > "$dir/mylib/src/lib.rs"
printf '[package]\nname = "mylib"\nversion = "1.2.3"\nedition = "2021"\npublish = false\n' > "$dir/mylib/Cargo.toml"
python3 - "$dir" <<'PY'
import json, pathlib, sys, tomllib
dir = pathlib.Path(sys.argv[1])
benches = pathlib.Path.cwd()
root = tomllib.loads((benches / "Cargo.toml").read_text())
ws = root["workspace"]

def value(v):
    # TOML inline values: strings, booleans, arrays of strings, inline tables.
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"

deps = {}
for name, spec in ws["dependencies"].items():
    if isinstance(spec, dict) and "path" in spec:
        spec = dict(spec, path=str(benches / spec["path"]))
    deps[name] = spec
out = ['[workspace]', 'resolver = "2"', 'members = ["adapters/mylib-1"]', '', '[workspace.package]']
out += [f"{k} = {value(v)}" for k, v in ws["package"].items()]
out += ['', '[workspace.dependencies]'] + [f"{k} = {value(v)}" for k, v in deps.items()]
# The workspace's profiles: checked in `ci`, as scripts/test.sh builds, so that
# build scripts and proc macros already built there are reused.
for name, settings in root.get("profile", {}).items():
    out += ['', f'[profile.{name}]'] + [f"{k} = {value(v) if not isinstance(v, int) or isinstance(v, bool) else v}" for k, v in settings.items()]
(dir / "Cargo.toml").write_text("\n".join(out) + "\n")
manifest = dir / "adapters/mylib-1/Cargo.toml"
text = manifest.read_text()
assert 'mylib = "=1.2.3"' in text, "the template no longer depends on mylib = \"=1.2.3\""
manifest.write_text(text.replace('mylib = "=1.2.3"', 'mylib = { version = "=1.2.3", path = "../../mylib" }'))
PY
cargo check --offline --quiet --profile ci --manifest-path "$dir/Cargo.toml" --target-dir target
echo "adapter template: compiles (template/adapter)"
