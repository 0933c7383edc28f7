"""The canonical values, the field digest and the benchmark service, as the
harness defines them: every value comes from benches/programs/canon.json,
which `dbus-matrix canon` writes from harness/src (canon.rs) and a harness
test keeps current (docs/canon.md); this module only turns it into Python
values and digests what a library decoded. Test runner/tests/
program_adapters.rs checks the result against the harness end to end: emit
output through the reference decoder, demarshal digests of the canonical
bytes and of perturbed ones, and every IPC reply digest."""

import json
import os
import struct

# benches/programs/canon.json: beside python/ in the repository and in Nix's
# share/dbus-matrix/programs (nix/programs.nix copies the whole directory).
CANON_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "canon.json")
with open(CANON_FILE) as _f:
    CANON = json.load(_f)
_SERVICE = CANON["service"]
_PROPS = CANON["props"]

# --- digest.rs -------------------------------------------------------------
_K = CANON["digest"]["multiplier"]
_INIT = CANON["digest"]["init"]
_ROT = CANON["digest"]["rotate_left"]
_M = (1 << 64) - 1


class Digest:
    """FxHash-style mixing over 64-bit words, as harness::digest::Digest."""

    __slots__ = ("h",)

    def __init__(self):
        self.h = _INIT

    def word(self, w):
        h = self.h
        self.h = ((((h << _ROT) | (h >> (64 - _ROT))) & _M) ^ w) * _K & _M
    def u64(self, v):
        self.word(v)

    def i32(self, v):
        self.word(v & 0xFFFFFFFF)

    def len(self, n):
        self.word(n | (1 << 63))

    def str(self, s):
        self.bytes(s.encode())

    def bytes(self, b):
        n = len(b)
        self.word(n)
        full = n // 8
        if full:
            for w in struct.unpack_from("<%dQ" % full, b):
                self.word(w)
        rest = b[full * 8:]
        if rest:
            self.word(int.from_bytes(rest, "little"))

    def finish(self):
        return self.h


# --- payload.rs --------------------------------------------------------------
PATH = CANON["signal"]["path"]
INTERFACE = CANON["signal"]["interface"]
MEMBER = CANON["signal"]["member"]
SERIAL = CANON["signal"]["serial"]
UNIT_SIGNATURE = CANON["signal"]["unit_signature"]
ASV_SIGNATURE = CANON["signal"]["asv_signature"]


def _strings(spec):
    """Literal strings, or the decimal i repeated R times for i below N."""
    if "strings" in spec:
        return list(spec["strings"])
    r = spec["decimal_repeated"]
    return [str(i) * r for i in range(spec["count"])]


def _payload(spec):
    """A body: ("units", [(s, t, (t, s), a{si} as (key, value) pairs in wire order, at, as)]) or ("asv", pairs)."""
    if spec["kind"] == "asv":
        return ("asv", [(k, k) for k in _strings(spec["asv"]["keys"])])
    u = spec["units"]["unit"]
    dict_ = [(k, v) for k, v in u["dict"]]
    at = [u["at"]["value"]] * u["at"]["count"]
    as_ = _strings(u["as"])
    st = (u["st"][0], u["st"][1])
    return ("units", [(u["s"], u["t"], st, list(dict_), list(at), list(as_)) for _ in range(spec["units"]["count"])])


PAYLOADS = {p["name"]: (lambda p=p: _payload(p)) for p in CANON["payloads"]}


def mixed():
    return PAYLOADS["mixed"]()


def signature(body):
    kind, values = body
    return UNIT_SIGNATURE * len(values) if kind == "units" else ASV_SIGNATURE


def body_digest(body):
    """Every field in wire order (payload.rs `Body::digest_into`)."""
    d = Digest()
    kind, values = body
    if kind == "units":
        for s, t, st, dict_, at, as_ in values:
            d.str(s)
            d.u64(t)
            d.u64(st[0])
            d.str(st[1])
            for k, v in dict_:
                d.str(k)
                d.i32(v)
            d.len(len(dict_))
            for x in at:
                d.u64(x)
            d.len(len(at))
            for x in as_:
                d.str(x)
            d.len(len(as_))
    else:
        for k, v in values:
            d.str(k)
            d.str(v)
        d.len(len(values))
    return d.finish()


# --- ipc.rs ------------------------------------------------------------------
OBJECT_PATH = _SERVICE["object_path"]
BENCH_INTERFACE = _SERVICE["interface"]
PROPERTY = _SERVICE["property"]
PROPERTY_SIGNATURE = _SERVICE["property_signature"]
SIGNAL = _SERVICE["signal"]
SIGNAL_TEXT = _SERVICE["signal_text"]
IN_INT = _SERVICE["in_int"]
OUT_INT = _SERVICE["out_int"]
IN_STRING = _SERVICE["in_string"]
OUT_STRING = _SERVICE["out_string"]
ECHO_SIZES = _SERVICE["echo_sizes"]
FANOUT_SIZES = _SERVICE["fanout_sizes"]
NONMATCHING_RULE_COUNTS = _SERVICE["nonmatching_rule_counts"]
PARALLEL_CLIENTS = _SERVICE["parallel_clients"]
MATCH_RULE_COUNTS = _SERVICE["match_rule_counts"]
IN_FLIGHT_COUNTS = _SERVICE["in_flight_counts"]
IDLE_CONNECTION_COUNTS = _SERVICE["idle_connection_counts"]
PROPS_COUNTS = _SERVICE["props_counts"]
# ipc/props.rs: the objects of property/get-all/<n> and objects/get-managed-objects/<n>.
# A value is (signature, value) with signature "s", "u" or "b" (jeepney's variant form).
GET_ALL_INTERFACE = _PROPS["get_all_interface"]
ITEM_INTERFACE = _PROPS["item_interface"]
OBJECT_MANAGER_INTERFACE = CANON["standard"]["object_manager"]


def props_path(n):
    return _PROPS["props_path"] % n


def objects_path(n):
    return _PROPS["objects_path"] % n


def object_child_path(n, i):
    return _PROPS["object_child_path"] % (n, i)


def _typed(row):
    name, sig, value = row
    return (name, (sig, value))


def properties(n):
    """Every property of the property/get-all/<n> object, in name order (ipc/props.rs)."""
    return [_typed(row) for row in _PROPS["properties"][:n]]


def item_properties(i):
    """props.rs `item_properties`: child i's properties of ITEM_INTERFACE, in name order."""
    return [_typed(row) for row in _PROPS["item_properties"][i]]


def _digest_value(d, value):
    sig, v = value
    if sig == "s":
        d.u64(0)
        d.str(v)
    elif sig == "u":
        d.u64(1)
        d.u64(v)
    elif sig == "b":
        d.u64(2)
        d.u64(1 if v else 0)
    else:
        raise RuntimeError("a property of signature %r, not s, u or b" % sig)


def _digest_properties(d, props):
    props = sorted(props, key=lambda p: p[0].encode())
    for name, value in props:
        d.str(name)
        _digest_value(d, value)
    d.len(len(props))


def properties_digest(props):
    """props.rs `properties_digest`: (name, (signature, value)) pairs in any order."""
    d = Digest()
    _digest_properties(d, props)
    return d.finish()


def managed_objects_digest(objects):
    """props.rs `managed_objects_digest`: (path, the benchmark interface's properties) in any order."""
    objects = sorted(objects, key=lambda o: o[0].encode())
    d = Digest()
    for path, props in objects:
        d.str(path)
        _digest_properties(d, props)
    d.len(len(objects))
    return d.finish()


# ipc/fd_passing.rs: ReadFd(h) -> t on a second interface; the memfd holds echo_payload(size).
FD_SIZES = _SERVICE["fd_sizes"]
FD_READ_LIMIT = _SERVICE["fd_read_limit"]
FD_INTERFACE = _SERVICE["fd_interface"]
READ_FD, READ_FD_IN, READ_FD_OUT = _SERVICE["read_fd"]

# (slug, member, in signature, out signature), in Method::ALL order.
METHODS = [(m["slug"], m["member"], m["in"], m["out"]) for m in _SERVICE["methods"]]
ECHO_BYTES = _SERVICE["echo_bytes"]
INTERFACE_METHODS = [tuple(m) for m in _SERVICE["interface_methods"]]
_OBJECT_PATHS = _SERVICE["object_paths"]
_ITEMS = [tuple(i) for i in _SERVICE["items"]]


def object_path(i):
    return _OBJECT_PATHS[i]


def object_paths():
    """Every object path ObjectRef and RelationSet name, in order."""
    return list(_OBJECT_PATHS)


def items():
    return list(_ITEMS)


def echo_payload(size):
    m = _SERVICE["echo_modulus"]
    return bytes(i % m for i in range(size))


def payload_memfd(size):
    """ipc/fd_passing.rs `payload_memfd`: echo_payload(size) written once; the offset left at the end."""
    fd = os.memfd_create("dbus-matrix-fd-passing", os.MFD_CLOEXEC)
    os.write(fd, echo_payload(size))
    return fd


def read_fd_digest(fd):
    """ipc/fd_passing.rs `read_fd_digest`: the whole file behind fd with pread from offset 0
    (the fd shares the sender's offset); a file over FD_READ_LIMIT is an error (OSError),
    never read into memory. The caller still closes fd."""
    size = os.fstat(fd).st_size
    if size > FD_READ_LIMIT:
        raise OSError("the passed file holds %d bytes, more than the %d ReadFd reads" % (size, FD_READ_LIMIT))
    content = b""
    while len(content) < size:
        chunk = os.pread(fd, size - len(content), len(content))
        if not chunk:
            break
        content += chunk
    d = Digest()
    d.bytes(content)
    return d.finish()


def ping_rule():
    return _SERVICE["ping_rule"]


def nonmatching_rule(i):
    return _SERVICE["nonmatching_rule"] % i


def digest_items(d, values):
    for a, b in values:
        d.str(a)
        d.str(b)
    d.len(len(values))


# --- scenario.rs -------------------------------------------------------------
def _op(op):
    return (op[0], op[1])


# What the client must receive per op (ipc.rs `expected_digest`); None where it
# names the service (ObjectRef, RelationSet: digested here from the name).
_EXPECTED = {_op(s["op"]): s["expected_digest"] for s in CANON["scenarios"] if s["kind"] == "ipc"}
# ipc.rs `IpcOp::opt_in`: ops an adapter runs only where it says so (its
# `implements`); elsewhere "this adapter does not implement <family> yet".
OPT_IN_FAMILIES = {s["op"][0]: s["opt_in_family"] for s in CANON["scenarios"] if "opt_in_family" in s}
_NEEDS_BUS = {s["op"][0]: s["needs_bus"] for s in CANON["scenarios"] if "needs_bus" in s}
_RUNNER_NEEDS_BUS = {s["id"]: s["runner_needs_bus"] for s in CANON["scenarios"] if "runner_needs_bus" in s}
_SCENARIOS = [(s["id"], (s["kind"], s["payload"]) if s["kind"] != "ipc" else ("ipc", _op(s["op"])))
              for s in CANON["scenarios"]]


def expected_digest(op, service_name):
    """What the client must receive per operation (ipc.rs `expected_digest`)."""
    expected = _EXPECTED[_op(op)]
    if expected is not None:
        return expected
    d = Digest()
    paths = _OBJECT_PATHS[:1] if op[1] == "ObjectRef" else _OBJECT_PATHS
    for p in paths:
        d.str(service_name)
        d.str(p)
    if op[1] == "RelationSet":
        d.len(len(paths))
    return d.finish()


def scenarios():
    """Every scenario id with its kind, in the harness's order:
    ("marshal"|"demarshal", payload name) or ("ipc", op)."""
    return list(_SCENARIOS)


def runner_needs_bus(sid):
    """scenario.rs `runner_needs_bus`: why a runner-driven cell has no p2p form."""
    return _RUNNER_NEEDS_BUS.get(sid)


def subscribers_of(op):
    """(connections, extra rules) for ops that need a subscriber process."""
    kind, arg = op
    if kind == "fanout":
        return (arg, 0)
    if kind == "nonmatching-rules":
        return (1, arg)
    return None


def needs_bus(op):
    """ipc.rs `needs_bus`: ops that cannot run peer to peer whatever the library."""
    return _NEEDS_BUS.get(op[0])
