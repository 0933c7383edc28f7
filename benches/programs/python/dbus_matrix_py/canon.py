"""The canonical values, the field digest and the benchmark service, as the
harness defines them (harness/src/payload.rs, digest.rs, ipc.rs, scenario.rs).
Test runner/tests/program_adapters.rs checks these against the harness:
emit output through the reference decoder, demarshal digests of the
canonical bytes and of perturbed ones, and every IPC reply digest."""

import os
import struct

# --- digest.rs -------------------------------------------------------------
_K = 0x517CC1B727220A95
_M = (1 << 64) - 1


class Digest:
    """FxHash-style mixing over 64-bit words, as harness::digest::Digest."""

    __slots__ = ("h",)

    def __init__(self):
        self.h = 0xCBF29CE484222325

    def word(self, w):
        h = self.h
        self.h = ((((h << 5) | (h >> 59)) & _M) ^ w) * _K & _M

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
PATH = "/io/killing/spark"
INTERFACE = "io.killing.spark"
MEMBER = "TestSignal"
SERIAL = 1
UNIT_SIGNATURE = "st(ts)a{si}atas"
ASV_SIGNATURE = "a{sv}"
U64_MAX = (1 << 64) - 1


def repeated_decimal(i):
    return str(i) * 12


def _unit(dict_, at, as_):
    # (s, t, (t, s), a{si} as (key, value) pairs in wire order, at, as)
    return ("Testtest", U64_MAX, (U64_MAX, "TesttestTestest"), dict_, at, as_)


def mixed():
    d = [(k, 1234567) for k in "ABCDE"]
    return ("units", [_unit(list(d), [U64_MAX] * 15, [""]) for _ in range(10)])


def big_array():
    return ("units", [_unit([("A", 1234567)], [0] * 10240, [""])])


def str_array():
    return ("units", [_unit([("A", 1234567)], [0], [repeated_decimal(i) for i in range(10240)])])


def asv_dict():
    return ("asv", [(repeated_decimal(i), repeated_decimal(i)) for i in range(10240)])


PAYLOADS = {"mixed": mixed, "big-array": big_array, "str-array": str_array, "asv-dict": asv_dict}


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
OBJECT_PATH = "/io/killing/spark"
BENCH_INTERFACE = "io.killing.spark.Bench"
PROPERTY = "Items"
SIGNAL = "Ping"
SIGNAL_TEXT = "Testtest"
IN_INT = 7
OUT_INT = 42
IN_STRING = "Testtest"
OUT_STRING = "TesttestTestest"
ECHO_SIZES = [1, 64, 1024, 4096, 32768, 131072, 1048576]
FANOUT_SIZES = [1, 10, 100]
NONMATCHING_RULE_COUNTS = [10, 100, 1000, 10000]
# Runner-driven cells (scenario.rs `Driver`): the runner runs this adapter's
# call/void or signal/fanout/1 around them, so they are listed as those ops.
PARALLEL_CLIENTS = [1, 2, 4, 8]
MATCH_RULE_KINDS = ["sender", "wildcard"]
MATCH_RULE_COUNTS = [1 << i for i in range(18)]
IN_FLIGHT_COUNTS = [1, 10, 100, 1000]
IDLE_CONNECTION_COUNTS = [10, 100, 1000, 10000]
# ipc.rs `IpcOp::opt_in`: ops an adapter runs only where it says so (its
# `implements`); elsewhere "this adapter does not implement <family> yet".
PROPS_COUNTS = [10, 1000]
OPT_IN_FAMILIES = {
    "in-flight": "call/in-flight",
    "idle-connections": "connect/idle-connections",
    "property-get-all": "property/get-all",
    "get-managed-objects": "objects/get-managed-objects",
}
# ipc/props.rs: the objects of property/get-all/<n> and objects/get-managed-objects/<n>.
# A value is (signature, value) with signature "s", "u" or "b" (jeepney's variant form).
GET_ALL_INTERFACE = "org.dbusmatrix.Props"
ITEM_INTERFACE = "org.dbusmatrix.Item"
OBJECT_MANAGER_INTERFACE = "org.freedesktop.DBus.ObjectManager"


def props_path(n):
    return "/org/dbusmatrix/props/%d" % n


def objects_path(n):
    return "/org/dbusmatrix/objects/%d" % n


def object_child_path(n, i):
    return "/org/dbusmatrix/objects/%d/o%04d" % (n, i)


def property_value(i):
    """props.rs `property_value`: i % 3 = 0 a string, 1 a u, 2 a b."""
    return [("s", "value %d" % i), ("u", i * 7), ("b", i % 2 == 0)][i % 3]


def properties(n):
    """Every property of the property/get-all/<n> object, in name order."""
    return [("P%04d" % i, property_value(i)) for i in range(n)]


def item_properties(i):
    """props.rs `item_properties`: child i's properties of ITEM_INTERFACE, in name order."""
    return [("Enabled", ("b", i % 2 == 1)), ("Id", ("s", "item-%d" % i)), ("Index", ("u", i))]


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
FD_SIZES = [4096, 1048576]
FD_READ_LIMIT = FD_SIZES[-1]  # ipc/fd_passing.rs FD_READ_LIMIT
FD_INTERFACE = "io.killing.spark.BenchFd"
OPT_IN_FAMILIES["fd-passing"] = "call/fd-passing"

# (slug, member, in signature, out signature), in Method::ALL order.
METHODS = [
    ("void", "Void", "", ""),
    ("in-int", "InInt", "i", ""),
    ("out-int", "OutInt", "", "i"),
    ("in-out-int", "InOutInt", "i", "i"),
    ("in-string", "InString", "s", ""),
    ("out-string", "OutString", "", "s"),
    ("in-out-string", "InOutString", "s", "s"),
    ("object-ref", "ObjectRef", "", "(so)"),
    ("relation-set", "RelationSet", "", "a(so)"),
]
ECHO_BYTES = "EchoBytes"
INTERFACE_METHODS = [(m, i, o) for _, m, i, o in METHODS] + [(ECHO_BYTES, "ay", "ay")]


def object_path(i):
    return "%s/object/%d" % (OBJECT_PATH, i)


def items():
    return [("id%d" % i, "Item number %d" % i) for i in range(10)]


def echo_payload(size):
    return bytes(i % 251 for i in range(size))


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
    return "type='signal',interface='%s',member='%s',path='%s'" % (BENCH_INTERFACE, SIGNAL, OBJECT_PATH)


def nonmatching_rule(i):
    return "type='signal',interface='%s',member='NoSuchSignal%d'" % (BENCH_INTERFACE, i)


def digest_items(d, values):
    for a, b in values:
        d.str(a)
        d.str(b)
    d.len(len(values))


def expected_digest(op, service_name):
    """What the client must receive per operation (ipc.rs `expected_digest`)."""
    kind, arg = op
    d = Digest()
    if kind == "call":
        if arg == "OutInt":
            d.i32(OUT_INT)
        elif arg == "InOutInt":
            d.i32(IN_INT + 1)
        elif arg in ("OutString", "InOutString"):
            d.str(OUT_STRING)
        elif arg == "ObjectRef":
            d.str(service_name)
            d.str(object_path(0))
        elif arg == "RelationSet":
            for i in range(10):
                d.str(service_name)
                d.str(object_path(i))
            d.len(10)
    elif kind in ("echo-bytes", "raw-socket", "fd-passing"):
        # fd-passing: ReadFd answers the digest of the memfd's bytes, this same value.
        d.bytes(echo_payload(arg))
    elif kind in ("property-get", "property-cold-start"):
        digest_items(d, items())
    elif kind == "property-get-x100":
        for _ in range(100):
            digest_items(d, items())
    elif kind == "emit-receive":
        d.str(SIGNAL_TEXT)
    elif kind == "idle-connections":
        d.len(arg)
    elif kind == "property-get-all":
        return properties_digest(properties(arg))
    elif kind == "get-managed-objects":
        return managed_objects_digest([(object_child_path(arg, i), item_properties(i)) for i in range(arg)])
    elif kind == "in-flight":
        # ipc.rs `in_flight_digest`: call i sends i, gets i + 1; then the count.
        for i in range(arg):
            d.i32(i + 1)
        d.len(arg)
    return d.finish()


# --- scenario.rs -------------------------------------------------------------
def scenarios():
    """Every scenario id with its kind, in the harness's order:
    ("marshal"|"demarshal", payload name) or ("ipc", op)."""
    out = []
    for prefix in ("marshal", "demarshal"):
        for name in PAYLOADS:
            out.append(("%s/%s" % (prefix, name), (prefix, name)))
    for slug, member, _, _ in METHODS:
        out.append(("call/" + slug, ("ipc", ("call", member))))
    for n in ECHO_SIZES:
        out.append(("call/echo-bytes/%d" % n, ("ipc", ("echo-bytes", n))))
    for n in IN_FLIGHT_COUNTS:
        out.append(("call/in-flight/%d" % n, ("ipc", ("in-flight", n))))
    for n in FD_SIZES:
        out.append(("call/fd-passing/%d" % n, ("ipc", ("fd-passing", n))))
    out.append(("property/get", ("ipc", ("property-get", None))))
    out.append(("property/get-x100", ("ipc", ("property-get-x100", None))))
    for n in PROPS_COUNTS:
        out.append(("property/get-all/%d" % n, ("ipc", ("property-get-all", n))))
    for n in PROPS_COUNTS:
        out.append(("objects/get-managed-objects/%d" % n, ("ipc", ("get-managed-objects", n))))
    out.append(("property/cold-start", ("ipc", ("property-cold-start", None))))
    out.append(("signal/emit-receive", ("ipc", ("emit-receive", None))))
    for n in FANOUT_SIZES:
        out.append(("signal/fanout/%d" % n, ("ipc", ("fanout", n))))
    for n in NONMATCHING_RULE_COUNTS:
        out.append(("signal/nonmatching-rules/%d" % n, ("ipc", ("nonmatching-rules", n))))
    out.append(("connect/hello", ("ipc", ("connect-hello", None))))
    for n in IDLE_CONNECTION_COUNTS:
        out.append(("connect/idle-connections/%d" % n, ("ipc", ("idle-connections", n))))
    out.append(("connect/marshal-send", ("ipc", ("connect-marshal-send", None))))
    for n in ECHO_SIZES:
        out.append(("baseline/raw-socket/%d" % n, ("ipc", ("raw-socket", n))))
    for k in PARALLEL_CLIENTS:
        out.append(("call/parallel-clients/%d" % k, ("ipc", ("call", "Void"))))
    for rule_kind in MATCH_RULE_KINDS:
        for n in MATCH_RULE_COUNTS:
            out.append(("signal/match-rules/%s/%d" % (rule_kind, n), ("ipc", ("fanout", 1))))
    return out


def runner_needs_bus(sid):
    """scenario.rs `runner_needs_bus`: why a runner-driven cell has no p2p form."""
    if sid.startswith("call/parallel-clients/"):
        return ("parallel clients are measured against one bus: peer to peer each client would "
                "need a server connection of its own")
    if sid.startswith("signal/match-rules/"):
        return "match rules are held by a bus (AddMatch); peer to peer there is no bus to hold them"
    return None


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
    kind = op[0]
    return {
        "connect-hello": "peer to peer there is no bus to say Hello to: a p2p connection is SASL only",
        "emit-receive": "needs a bus to route the signal: peer to peer, a signal emitted on one connection "
        "reaches only the server at the other end, never a second client connection",
        "fanout": "fan-out needs a bus: peer to peer there are no match rules and nothing routes "
        "one signal to other connections",
        "nonmatching-rules": "match rules are installed on a bus (AddMatch); peer to peer there is no bus to "
        "hold them",
        "idle-connections": "idle connections are what each costs the bus daemon (Hello, memory); peer to peer "
        "there is no daemon, only the server at the other end",
    }.get(kind)
