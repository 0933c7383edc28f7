"""The tree of objects of `proxy/startup/<n>` (harness/src/ipc/startup.rs)
for the Python adapters, which serve it themselves on a second connection of
the client process owning `<service>.Proxied` (the harness's raw server is
Rust, inside the Rust adapters): the root's XML (canon.json `startup`:
head, one line per child, tail), each child's XML, what the server answers
to each call (as startup.rs `answer`, the sound server) with its tally of
Introspect and `Id` calls, and the operation's check `op_digest` (the Ids
in any order, then the tally: n + 1 Introspects and n Ids per op).
runner/tests/program_startup.rs compares them with the harness's."""

import threading

from . import canon

_T = canon.CANON["startup"]
_STD = canon.CANON["standard"]
_E = _STD["errors"]
KIND = "proxy-startup"
ROOT = _T["root"]
INTERFACE = _T["interface"]
METHOD = _T["method"]
INTROSPECTABLE = _STD["introspectable"]


def child_name(i):
    return _T["child_name"] % i


def child_path(i):
    return "%s/%s" % (ROOT, child_name(i))


def root_xml(n):
    """The root's introspection XML, listing the n children."""
    return _T["root_xml_head"] + "".join(_T["root_xml_child"] % i for i in range(n)) + _T["root_xml_tail"]


def child_xml():
    return _T["child_xml"]


class Tally:
    """Introspect and Id calls the server answered since the client last took
    them (the server may answer on another thread: jeepney)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts = [0, 0]

    def count(self, which):
        with self._lock:
            self._counts[which] += 1

    def take(self):
        """(introspects, ids), from zero again."""
        with self._lock:
            counts, self._counts = tuple(self._counts), [0, 0]
        return counts


def _child_index(path, n):
    prefix = ROOT + "/o"
    if not path.startswith(prefix) or not path[len(prefix):].isascii() or not path[len(prefix):].isdigit():
        return None
    i = int(path[len(prefix):])
    return i if i < n and child_path(i) == path else None


def answer(n, tally, path, interface, member):
    """("return", signature, body) or ("error", name, message), as startup.rs
    `answer` of the sound server of n children (no INTERFACE: the first
    interface that has the member), counted in `tally`."""
    if interface is None:
        interface = {"Introspect": INTROSPECTABLE, "Ping": _STD["peer"], "GetMachineId": _STD["peer"],
                     "Get": _STD["properties"], "GetAll": _STD["properties"],
                     "Set": _STD["properties"]}.get(member, INTERFACE)
    child = _child_index(path, n)
    if path != ROOT and child is None:
        return ("error", _E["unknown_object"], "no object at %s" % path)
    if (interface, member) == (INTROSPECTABLE, "Introspect"):
        tally.count(0)
        return ("return", "s", [root_xml(n) if child is None else child_xml()])
    if (interface, member) == (INTERFACE, METHOD) and child is not None:
        tally.count(1)
        return ("return", "u", [child])
    if (interface, member) == (_STD["peer"], "Ping"):
        return ("return", "", [])
    if (interface, member) == (_STD["properties"], "GetAll"):
        return ("return", "a{sv}", [{}])
    return ("error", _E["unknown_method"], "no method %s.%s at %s" % (interface, member, path))


def op_digest(ids, tally):
    """startup.rs `op_digest`: the Ids (sorted: any order), then the tally."""
    ids = sorted(int(i) for i in ids)
    d = canon.Digest()
    d.len(len(ids))
    for i in ids:
        d.u64(i)
    introspects, id_calls = tally
    d.len(introspects)
    d.len(id_calls)
    return d.finish()
