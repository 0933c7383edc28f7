# The NixOS test script of vm-tests/default.nix, which puts `import json`,
# `import re` and `params` (profile, bus, implementation, cores, memory_mib,
# revision, run_timeout, scenarios, adapters, unavailable, baselines, user,
# strict) before
# it. `machine` comes from the NixOS test driver; nix/tests/vm_script_test.py
# runs this file unchanged against real system buses through a local shim of
# it (nix/tests/vm_shim.py).

RESULTS = "/tmp/dbus-matrix-results"
# Copied to $out/nix-support/hydra-metrics (copy_from_vm keeps the last name):
# Hydra plots its lines per job over evaluations.
SUPPORT = "/tmp/dbus-matrix-hydra/nix-support"
DAEMONS = {"dbus": "dbus-daemon", "broker": "dbus-broker"}
STATUSES = {"ok", "unsupported", "failed"}
# How an adapter says it cannot run as root (tokio-dbus-0.2: "cannot
# authenticate as uid 0"): never the case for the VM's normal user.
ROOT_ONLY_REASON = re.compile(r"\buid 0\b|\bas root\b")


def check_results(results, params):
    """Every problem with a results file, as a list of messages."""
    problems = []
    if results.get("format") != "dbus-matrix-results":
        problems.append(f"format is {results.get('format')!r}")
    if results.get("schema_version") != 2:
        problems.append(f"schema_version is {results.get('schema_version')!r}, not 2")
    if not isinstance(results.get("plan"), dict):
        problems.append("no plan (run --resume needs it)")
    run = results.get("run", {})
    if run.get("profile") != params["profile"]:
        problems.append(f"run.profile is {run.get('profile')!r}, not {params['profile']!r}")
    if run.get("revision") != params["revision"]:
        problems.append(f"run.revision is {run.get('revision')!r}, not {params['revision']!r}")
    if run.get("complete") is not True:
        problems.append("run.complete is not true")
    env = results.get("environment", {})
    if env.get("mode") != "nixos-vm":
        problems.append(f"environment.mode is {env.get('mode')!r}, not 'nixos-vm'")
    if env.get("cpus") != params["cores"]:
        problems.append(f"environment.cpus is {env.get('cpus')!r}, not {params['cores']}")
    memory = env.get("memory_bytes", 0)
    if not params["memory_mib"] * 1024 * 1024 // 2 < memory <= params["memory_mib"] * 1024 * 1024:
        problems.append(f"environment.memory_bytes {memory} does not fit a {params['memory_mib']} MiB VM")
    if not env.get("cpu_model"):
        problems.append("environment.cpu_model is empty")
    cells = results.get("cells")
    if not isinstance(cells, list) or not cells:
        problems.append("no cells")
        cells = []
    for i, cell in enumerate(cells):
        if cell.get("status") not in STATUSES:
            problems.append(f"cells[{i}] ({cell.get('adapter')} {cell.get('scenario')}) has status {cell.get('status')!r}")
        elif cell["status"] != "ok" and not cell.get("reason"):
            problems.append(f"cells[{i}] ({cell.get('adapter')} {cell.get('scenario')}) is {cell['status']} without a reason")
    if not any(c.get("status") == "ok" for c in cells):
        problems.append("no cell is ok")
    # The point of the test: IPC over the VM's system bus worked at least once
    # (this needs the system.d policy for io.killing.spark.*).
    if not any(c.get("status") == "ok" and c.get("bus") not in (None, "p2p") for c in cells):
        problems.append("no IPC cell over the system bus is ok")
    if params["strict"]:
        problems += check_selection(results, params)
    return problems


def check_selection(results, params):
    """A correctness run (the checks): the cells the runner's own plan has.
    The plan (recorded in the file) must be the selection asked for, over
    the system bus and p2p; its rule (benches/runner/src/run/plan.rs) is a
    codec cell for every adapter and IPC cells only for library adapters
    (a baseline has none), so every library adapter needs its IPC cells
    over the system bus. None failed, and every adapter the flake builds has
    an ok cell (an adapter may declare an IPC shape unsupported, with its
    reason: dbus-message-parser has no transport). An unsupported cell is judged by its
    reason: a library saying it cannot run as uid 0 is a run that was not
    the VM's normal user, whatever the exit status says."""
    problems = []
    cells = results.get("cells") or []
    plan = results.get("plan") or {}
    resolved = plan.get("resolved") or {}
    if plan.get("system_bus") is not True:
        problems.append("plan.system_bus is not true")
    # Every adapter of matrix.toml: those the flake builds, and those
    # unavailable in Nix, whose every cell is unsupported with the reason.
    planned = sorted(params["adapters"] + params["unavailable"])
    if sorted(resolved.get("adapters") or []) != planned:
        problems.append(f"plan.resolved.adapters is {sorted(resolved.get('adapters') or [])!r}, not {planned!r}")
    for c in cells:
        if c.get("adapter") in params["unavailable"] and (c.get("status") != "unsupported" or not c.get("reason")):
            problems.append(f"cell {c.get('adapter')} {c.get('scenario')} of an adapter unavailable in Nix is {c.get('status')}")
    # The runner's own record of which adapters are baselines, which must be
    # matrix.toml's (params): the plan gives baselines no IPC cells.
    recorded = {a.get("id"): a for a in results.get("adapters") or []}
    baselines = {i for i, a in recorded.items() if a.get("baseline")}
    if baselines != set(params["baselines"]):
        problems.append(f"baselines recorded {sorted(baselines)}, matrix.toml says {sorted(params['baselines'])}")
    for adapter in params["adapters"]:
        if adapter not in recorded:
            problems.append(f"adapter {adapter} is not recorded in the results")
        mine = [c for c in cells if c.get("adapter") == adapter]
        library = adapter not in params["baselines"]
        for scenario in params["scenarios"]:
            codec = scenario.startswith(("marshal/", "demarshal/"))
            here = [c for c in mine if c.get("scenario") == scenario]
            if codec and not any(c.get("bus") is None for c in here):
                problems.append(f"no cell {adapter} {scenario}")
            elif not codec and library and not any(c.get("bus") == "system" for c in here):
                problems.append(f"no cell {adapter} {scenario} over the system bus")
            elif not codec and not library and here:
                problems.append(f"baseline {adapter} has IPC cells of {scenario}, which the runner's plan never makes")
        if not any(c.get("status") == "ok" for c in mine):
            problems.append(f"adapter {adapter} has no ok cell")
    for c in cells:
        if c.get("scenario") not in params["scenarios"]:
            problems.append(f"cell {c.get('adapter')} {c.get('scenario')} is outside the selection")
        if c.get("status") == "failed":
            problems.append(f"cell {c.get('adapter')} {c.get('scenario')} {c.get('bus')} failed: {c.get('reason')}")
        if c.get("status") == "unsupported" and ROOT_ONLY_REASON.search(c.get("reason") or ""):
            problems.append(
                f"cell {c.get('adapter')} {c.get('scenario')} {c.get('bus')} is unsupported for uid 0 "
                f"({c.get('reason')[:80]}...): the run was not {params['user']}'s"
            )
    return problems


machine.start()
machine.wait_for_unit("multi-user.target")
machine.wait_for_file("/run/dbus/system_bus_socket")

# The system bus is the implementation this test is about.
running = DAEMONS[params["implementation"]]
for daemon in DAEMONS.values():
    if daemon == running:
        machine.succeed(f"pgrep -x {daemon}")
    else:
        machine.fail(f"pgrep -x {daemon}")

# The matrix runs as the VM's normal user (isNormalUser), as on a desktop:
# root is the driver's user, not a user's. setpriv (util-linux) changes only
# the ids and keeps the environment, so PATH still finds the runner.
user = params["user"]
if machine.succeed(f"id -u {user}").strip() == "0":
    raise Exception(f"the VM's user {user} is root")
machine.succeed(f"rm -rf {RESULTS} && install -d -o {user} -m 755 {RESULTS}")
selection = f" --scenarios {','.join(params['scenarios'])}" if params["scenarios"] else ""
status, _ = machine.execute(
    f"cd /tmp && DBUS_MATRIX_MODE=nixos-vm HOME=/home/{user} USER={user} LOGNAME={user}"
    f" setpriv --reuid={user} --regid=users --init-groups"
    f" dbus-matrix run --profile {params['profile']} --system-bus{selection} --quiet --out {RESULTS}"
    f" > {RESULTS}/run.log 2>&1",
    timeout=params["run_timeout"],
)
# 0: every cell ok or unsupported; 1: some cell failed (recorded in the file;
# a failure for the strict correctness run). Anything else (bad input,
# interrupted, crash) is a broken run.
machine.copy_from_vm(RESULTS, "")
if status not in ((0,) if params["strict"] else (0, 1)):
    print(machine.succeed(f"tail -n 50 {RESULTS}/run.log"))
    raise Exception(f"dbus-matrix run exited with {status}")

files = machine.succeed(f"ls {RESULTS}/*.json").split()
if len(files) != 1:
    raise Exception(f"expected one results file in {RESULTS}, found {files}")
results = json.loads(machine.succeed(f"cat {files[0]}"))
problems = check_results(results, params)
if problems:
    raise Exception("results file " + files[0] + ":\n  " + "\n  ".join(problems))
print(f"{files[0]}: {len(results['cells'])} cells, schema_version {results['schema_version']}, all statuses valid")

# A checked run only: `NAME VALUE UNIT` per ok cell (median ns, instructions).
machine.succeed(
    f"rm -rf {SUPPORT} && mkdir -p {SUPPORT}"
    f" && dbus-matrix report {files[0]} --format hydra-metrics > {SUPPORT}/hydra-metrics"
)
machine.copy_from_vm(SUPPORT, "")
