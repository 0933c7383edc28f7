"""The adapter commands (harness/src/contract.rs) for a Python adapter: the
same flags, exit codes, `unsupported:` lines and READY/WINDOW/go words; the
runner drives a Python adapter exactly as a Rust one."""

import argparse
import json
import os
import platform
import sys
import time

from . import canon, timing

_CONTRACT = canon.CANON["contract"]
EXIT_UNSUPPORTED = _CONTRACT["exit_unsupported"]
READY = _CONTRACT["ready"]
WINDOW_BEGIN = _CONTRACT["window_begin"]
WINDOW_END = _CONTRACT["window_end"]
GO = _CONTRACT["go"]
RAW_SOCKET_REASON = _CONTRACT["raw_socket_reason"]
UNSUPPORTED_PREFIX = _CONTRACT["unsupported_prefix"]
# The flags of each command (contract.rs), for their defaults and choices; the
# parser below spells the flags itself and a test checks it against this table.
_FLAGS = {c["name"]: {f["name"]: f for f in c["flags"]} for c in _CONTRACT["commands"]}


def _default(command, flag, convert):
    return convert(_FLAGS[command][flag]["default"])


def _choices(command, flag):
    return _FLAGS[command][flag]["choices"]


class Unsupported(Exception):
    """This library cannot do the scenario (exit 3, `unsupported: reason`)."""


def _positive_seconds(text):
    v = float(text)
    if not (v > 0 and v < 1e9):
        raise argparse.ArgumentTypeError("%s is not a number of seconds above 0" % v)
    return v


def _at_least_one(text):
    v = int(text)
    if v < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return v


def _transport_args(p):
    p.add_argument("--bus-address")
    p.add_argument("--bus-socket")
    p.add_argument("--service-name")
    p.add_argument("--p2p-socket")


def _parser():
    p = argparse.ArgumentParser(description="A dbus-matrix adapter (see harness::contract for the contract)")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list")
    for name in ("emit", "demarshal"):
        sub.add_parser(name).add_argument("--scenario", required=True)
    b = sub.add_parser("bench")
    b.add_argument("--scenario", required=True)
    b.add_argument("--result", required=True)
    b.add_argument("--criterion-dir")
    b.add_argument("--sample-size", type=_at_least_one, default=_default("bench", "sample-size", int))
    b.add_argument("--warm-up", type=_positive_seconds, default=_default("bench", "warm-up", float))
    b.add_argument("--measurement", type=_positive_seconds, default=_default("bench", "measurement", float))
    b.add_argument("--nresamples", type=int, default=_default("bench", "nresamples", int))
    b.add_argument("--timer", choices=_choices("bench", "timer"), default=_default("bench", "timer", str))
    b.add_argument("--budget", type=_positive_seconds)
    _transport_args(b)
    b.add_argument("--ack-fifo")
    r = sub.add_parser("repeat")
    r.add_argument("--scenario", required=True)
    r.add_argument("--iterations", type=int, required=True)
    r.add_argument("--windows", type=int, default=_default("repeat", "windows", int))
    _transport_args(r)
    r.add_argument("--ack-fifo")
    _transport_args(sub.add_parser("serve"))
    s = sub.add_parser("subscribe")
    _transport_args(s)
    s.add_argument("--connections", type=int, required=True)
    s.add_argument("--extra-rules", type=int, default=_default("subscribe", "extra-rules", int))
    s.add_argument("--ack-fifo", required=True)
    _transport_args(sub.add_parser("cold-start"))
    return p


def _transport(parser, a, required):
    """contract.rs `TransportArgs`: a bus needs all three, p2p stands alone."""
    bus = (a.bus_address, a.bus_socket, a.service_name)
    if a.p2p_socket is not None:
        if any(x is not None for x in bus):
            parser.error("--p2p-socket cannot be used with --bus-address, --bus-socket or --service-name")
        return {"kind": "p2p", "socket": a.p2p_socket, "service_name": ""}
    if all(x is None for x in bus):
        if required:
            parser.error("this command needs a transport: --bus-address/--bus-socket/--service-name or --p2p-socket")
        return None
    if any(x is None for x in bus):
        parser.error("a bus transport needs --bus-address, --bus-socket and --service-name together")
    return {"kind": "bus", "address": a.bus_address, "socket": a.bus_socket, "service_name": a.service_name}


def _scenario(sid):
    for s, kind in canon.scenarios():
        if s == sid:
            return kind
    raise RuntimeError("unknown scenario %r; known: %s" % (sid, ", ".join(s for s, _ in canon.scenarios())))


def _ipc_unsupported(lib, op, p2p):
    """listing.rs `ipc_unsupported`: the floor is the baseline's; needs-bus reasons for p2p."""
    if op[0] == "raw-socket":
        return RAW_SOCKET_REASON
    if p2p and canon.needs_bus(op) and lib.unsupported_ipc(op, False) is None:
        return canon.needs_bus(op)
    reason = lib.unsupported_ipc(op, p2p)
    family = canon.OPT_IN_FAMILIES.get(op[0])
    if reason is None and family and op[0] not in getattr(lib, "IMPLEMENTS", ()):
        return _CONTRACT["not_implemented"] % family
    return reason


def _unsupported(lib, kind, transport):
    if kind[0] == "ipc":
        return _ipc_unsupported(lib, kind[1], transport is not None and transport["kind"] == "p2p")
    return lib.unsupported_codec(kind[0], kind[1])


def _listing(lib):
    scenarios = []
    for sid, kind in canon.scenarios():
        entry = {"id": sid}
        if kind[0] == "ipc":
            reason = _ipc_unsupported(lib, kind[1], False)
            p2p_reason = _ipc_unsupported(lib, kind[1], True)
            if reason is None and canon.runner_needs_bus(sid):
                p2p_reason = canon.runner_needs_bus(sid)
        else:
            reason, p2p_reason = lib.unsupported_codec(kind[0], kind[1]), None
        entry["supported"] = reason is None
        if reason is not None:
            entry["reason"] = reason
        if kind[0] == "ipc":
            entry["p2p_supported"] = p2p_reason is None
            if p2p_reason is not None:
                entry["p2p_reason"] = p2p_reason
        scenarios.append(entry)
    return {"id": lib.id, "library": lib.library, "version": lib.version, "runtime": lib.runtime,
            "interpreter": interpreter(), "scenarios": scenarios}


def interpreter():
    """This machine's Python, exact version and path: the listing keeps it apart
    from the runtime (results record it; the committed coverage table does not)."""
    where = sys.executable
    if sys.prefix != sys.base_prefix:
        where = "a venv of %s" % os.path.realpath(sys.executable)
    return "%s %s (%s)" % (platform.python_implementation(), platform.python_version(), where)


def _ready():
    print(READY, flush=True)


def _announce_and_wait(what):
    print(what, flush=True)
    line = sys.stdin.readline().strip()
    if line != GO:
        raise RuntimeError("after %s the runner said %r, not %r" % (what, line, GO))


def _subscribe(lib, t, connections, extra_rules, ack_fifo):
    """service.rs `subscribe`: N subscribers, READY, one byte per complete round."""
    if t["kind"] == "p2p":
        raise RuntimeError("subscribers need a bus (match rules)")
    fd = os.open(ack_fifo, os.O_RDWR)  # opening does not wait for the reader
    subs = [lib.subscriber(t, extra_rules if i == 0 else 0) for i in range(connections)]
    _ready()
    expected = canon.expected_digest(("emit-receive", None), "")
    while True:
        for receive in subs:
            if receive() != expected:
                raise RuntimeError("a subscriber received a Ping with the wrong text")
        os.write(fd, b"!")


def _run(lib, parser, a):
    if a.command == "list":
        print(json.dumps(_listing(lib), indent=2))
        return 0
    if a.command in ("serve", "subscribe", "cold-start"):
        t = _transport(parser, a, required=True)
        if a.command == "serve":
            lib.serve(t, _ready)
        elif a.command == "subscribe":
            _subscribe(lib, t, a.connections, a.extra_rules, a.ack_fifo)
        else:
            out = "".join("%s\t%s\n" % pair for pair in lib.cold_start(t))
            sys.stdout.write(out)
        return 0
    transport = _transport(parser, a, required=False) if a.command in ("bench", "repeat") else None
    kind = _scenario(a.scenario)
    reason = _unsupported(lib, kind, transport)
    if reason is not None:
        raise Unsupported(reason)
    if a.command == "emit":
        if kind[0] != "marshal":
            raise RuntimeError("emit takes a marshal scenario, not %s" % a.scenario)
        sys.stdout.buffer.write(lib.marshal(canon.PAYLOADS[kind[1]]()))
        return 0
    if a.command == "demarshal":
        if kind[0] != "demarshal":
            raise RuntimeError("demarshal takes a demarshal scenario, not %s" % a.scenario)
        d = canon.Digest()
        lib.demarshal(sys.stdin.buffer.read(), canon.PAYLOADS[kind[1]]()[0], d)
        print("%016x" % d.finish())
        return 0
    prepared = timing.prepare(lib, kind, transport, a.ack_fifo)
    if a.command == "bench":
        result = timing.measure(prepared, a)
        with open(a.result, "w") as f:
            json.dump(result, f, indent=2)
        return 0
    # repeat: N operations, once or once per window (no callgrind region in Python)
    def region():
        for _ in range(a.iterations):
            prepared.op()
    if a.windows == 0:
        region()
    for _ in range(a.windows):
        if prepared.release is not None:
            prepared.release()
        _announce_and_wait(WINDOW_BEGIN)
        region()
        _announce_and_wait(WINDOW_END)
    return 0


def main(lib):
    """Entry point of a Python adapter: bad arguments exit 2 (argparse),
    errors 1, an unsupported scenario 3."""
    parser = _parser()
    a = parser.parse_args()
    try:
        code = _run(lib, parser, a)
    except Unsupported as e:
        print(UNSUPPORTED_PREFIX + str(e), file=sys.stderr)
        code = EXIT_UNSUPPORTED
    except KeyboardInterrupt:
        code = 1
    except Exception as e:  # the contract: any error is a message on stderr and exit 1
        print("error: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.exit(code)
