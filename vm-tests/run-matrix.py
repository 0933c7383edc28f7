# The NixOS test script of vm-tests/default.nix, which puts `import json` and
# `params` (profile, bus, implementation, cores, memory_mib, revision,
# run_timeout, scenarios, adapters, strict) before it. `machine` comes from
# the NixOS test driver.

RESULTS = "/tmp/dbus-matrix-results"
DAEMONS = {"dbus": "dbus-daemon", "broker": "dbus-broker"}
STATUSES = {"ok", "unsupported", "failed"}


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
        problems += check_selection(cells, params)
    return problems


def check_selection(cells, params):
    """A correctness run (the checks): every adapter x scenario of the
    selection has a cell (an IPC one over the system bus), none failed, and
    every adapter has an ok cell."""
    problems = []
    for adapter in params["adapters"]:
        mine = [c for c in cells if c.get("adapter") == adapter]
        for scenario in params["scenarios"]:
            ipc = not scenario.startswith(("marshal/", "demarshal/"))
            if not any(c.get("scenario") == scenario and (not ipc or c.get("bus") == "system") for c in mine):
                where = " over the system bus" if ipc else ""
                problems.append(f"no cell {adapter} {scenario}{where}")
        if not any(c.get("status") == "ok" for c in mine):
            problems.append(f"adapter {adapter} has no ok cell")
    for c in cells:
        if c.get("scenario") not in params["scenarios"]:
            problems.append(f"cell {c.get('adapter')} {c.get('scenario')} is outside the selection")
        if c.get("status") == "failed":
            problems.append(f"cell {c.get('adapter')} {c.get('scenario')} {c.get('bus')} failed: {c.get('reason')}")
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

machine.succeed(f"rm -rf {RESULTS} && mkdir -p {RESULTS}")
selection = f" --scenarios {','.join(params['scenarios'])}" if params["scenarios"] else ""
status, _ = machine.execute(
    "DBUS_MATRIX_MODE=nixos-vm"
    f" DBUS_MATRIX_VM_CORES={params['cores']}"
    f" DBUS_MATRIX_VM_MEMORY_MIB={params['memory_mib']}"
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
print(f"{files[0]}: {len(results['cells'])} cells, schema_version 1, all statuses valid")
