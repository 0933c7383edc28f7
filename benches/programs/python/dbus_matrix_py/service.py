"""What a hand-built server answers to any method call (harness/src/ipc/
standard.rs and introspect.rs), for Python libraries without an object
server: the benchmark methods are left to the library, everything else
(Introspect, Peer, Properties, unknown members, wrong arguments) answered
here, so gdbus, busctl and dbus-send get a reply or a proper error."""

from . import canon

_STD = canon.CANON["standard"]
INTROSPECTABLE = _STD["introspectable"]
PEER = _STD["peer"]
PROPERTIES = _STD["properties"]
UNKNOWN_METHOD = _STD["errors"]["unknown_method"]
UNKNOWN_INTERFACE = _STD["errors"]["unknown_interface"]
UNKNOWN_OBJECT = _STD["errors"]["unknown_object"]
UNKNOWN_PROPERTY = _STD["errors"]["unknown_property"]
PROPERTY_READ_ONLY = _STD["errors"]["property_read_only"]
INVALID_ARGS = _STD["errors"]["invalid_args"]
FAILED = _STD["errors"]["failed"]


def introspection_xml_of(path):
    """ipc/introspect.rs: the object's XML, an ancestor's (naming the next
    element as a child node), or None for any other path."""
    return canon.CANON["introspection"].get(path)


def _machine_id():
    for p in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            s = open(p).read().strip()
        except OSError:
            continue
        if len(s) == 32 and all(c in "0123456789abcdefABCDEF" for c in s):
            return s
    return None


def items_value():
    return (canon.PROPERTY_SIGNATURE, canon.items())


class Answer(Exception):
    """An error reply: (name, message)."""

    def __init__(self, name, message):
        super().__init__(message)
        self.name = name
        self.message = message


def _expect(signature, member, expected):
    if signature != expected:
        raise Answer(INVALID_ARGS, '%s takes arguments of signature "%s", not "%s"' % (member, expected, signature))


def route(path, interface, member, signature, string_args):
    """What to answer: ("bench", member), ("items",) for Get of Items,
    ("reply", signature, body) or ("error", name, message). `string_args`
    returns the leading string arguments (asked for Properties calls only)."""
    try:
        return _route(path, interface, member, signature, string_args)
    except Answer as e:
        return ("error", e.name, e.message)


def _interface_of(member):
    if any(m == member for m, _, _ in canon.INTERFACE_METHODS):
        return canon.BENCH_INTERFACE
    return {"Introspect": INTROSPECTABLE, "Ping": PEER, "GetMachineId": PEER,
            "Get": PROPERTIES, "GetAll": PROPERTIES, "Set": PROPERTIES}.get(member)


def _route(path, interface, member, signature, string_args):
    interface = interface or _interface_of(member)
    if interface is None:
        raise Answer(UNKNOWN_METHOD, "no method %s" % member)
    if interface == PEER:
        if member == "Ping":
            _expect(signature, member, "")
            return ("reply", "", ())
        if member == "GetMachineId":
            _expect(signature, member, "")
            mid = _machine_id()
            if mid is None:
                raise Answer(FAILED, "this machine has no machine id")
            return ("reply", "s", (mid,))
        raise Answer(UNKNOWN_METHOD, "no method %s.%s" % (PEER, member))
    if interface == INTROSPECTABLE:
        if member != "Introspect":
            raise Answer(UNKNOWN_METHOD, "no method %s.%s" % (interface, member))
        _expect(signature, member, "")
        xml = introspection_xml_of(path)
        if xml is None:
            raise Answer(UNKNOWN_OBJECT, "no object at %s" % path)
        return ("reply", "s", (xml,))
    if path != canon.OBJECT_PATH:
        raise Answer(UNKNOWN_OBJECT, "no object at %s" % path)
    if interface == PROPERTIES:
        return _properties(member, signature, string_args)
    if interface != canon.BENCH_INTERFACE:
        raise Answer(UNKNOWN_INTERFACE, "no interface %s at %s" % (interface, canon.OBJECT_PATH))
    for m, args_in, _ in canon.INTERFACE_METHODS:
        if m == member:
            _expect(signature, member, args_in)
            return ("bench", member)
    raise Answer(UNKNOWN_METHOD, "no method %s.%s" % (canon.BENCH_INTERFACE, member))


def _properties(member, signature, string_args):
    expected = {"Get": "ss", "GetAll": "s", "Set": "ssv"}.get(member)
    if expected is None:
        raise Answer(UNKNOWN_METHOD, "no method %s.%s" % (PROPERTIES, member))
    _expect(signature, member, expected)
    args = string_args()
    wanted = 1 if member == "GetAll" else 2
    if len(args) < wanted:
        raise Answer(INVALID_ARGS, "%s needs %d string arguments" % (member, wanted))
    if args[0] != canon.BENCH_INTERFACE:
        raise Answer(UNKNOWN_INTERFACE, "no interface %s at %s" % (args[0], canon.OBJECT_PATH))
    if member == "GetAll":
        return ("reply", "a{sv}", ([(canon.PROPERTY, items_value())],))
    if args[1] != canon.PROPERTY:
        raise Answer(UNKNOWN_PROPERTY, "no property %s.%s" % (canon.BENCH_INTERFACE, args[1]))
    if member == "Set":
        raise Answer(PROPERTY_READ_ONLY, "%s.%s is read-only" % (canon.BENCH_INTERFACE, canon.PROPERTY))
    return ("items",)


_OUT_SIGNATURE = {m: out for m, _, out in canon.INTERFACE_METHODS}


def bench_reply(member, args, service_name):
    """The benchmark methods' replies (ipc.rs's table): (signature, body)."""
    sig = _OUT_SIGNATURE.get(member)
    if sig is None:
        raise RuntimeError("no benchmark method %s" % member)
    if member in ("Void", "InInt", "InString"):
        return (sig, ())
    if member == "OutInt":
        return (sig, (canon.OUT_INT,))
    if member == "InOutInt":
        return (sig, (args[0] + 1,))
    if member == "OutString":
        return (sig, (canon.OUT_STRING,))
    if member == "InOutString":
        return (sig, (args[0],))
    if member == "ObjectRef":
        return (sig, ((service_name, canon.object_path(0)),))
    if member == "RelationSet":
        return (sig, ([(service_name, p) for p in canon.object_paths()],))
    if member == canon.ECHO_BYTES:
        return (sig, (bytes(args[0]),))
    raise RuntimeError("no benchmark method %s" % member)


def props_route(path, interface, member, signature, string_args):
    """property/get-all/<n> and objects/get-managed-objects/<n> (ipc/props.rs) for
    hand-built servers: None when the call is not to their objects, else what
    `route` returns. Values are (signature, value) pairs, dicts lists of pairs."""
    try:
        return _props_route(path, interface, member, signature, string_args)
    except Answer as e:
        return ("error", e.name, e.message)


def _props_objects():
    """path -> ("props", n) | ("manager", n) | ("child", (n, i))."""
    global _PROPS_OBJECTS
    if _PROPS_OBJECTS is None:
        _PROPS_OBJECTS = {}
        for n in canon.PROPS_COUNTS:
            _PROPS_OBJECTS[canon.props_path(n)] = ("props", n)
            _PROPS_OBJECTS[canon.objects_path(n)] = ("manager", n)
            for i in range(n):
                _PROPS_OBJECTS[canon.object_child_path(n, i)] = ("child", (n, i))
    return _PROPS_OBJECTS


_PROPS_OBJECTS = None


def _props_route(path, interface, member, signature, string_args):
    obj = _props_objects().get(path)
    if obj is None:
        return None
    what, arg = obj
    if what == "manager":
        if interface not in (None, canon.OBJECT_MANAGER_INTERFACE) or member != "GetManagedObjects":
            raise Answer(UNKNOWN_METHOD, "only %s.GetManagedObjects at %s" % (canon.OBJECT_MANAGER_INTERFACE, path))
        _expect(signature, member, "")
        return ("reply", "a{oa{sa{sv}}}", (managed_objects(arg),))
    if interface not in (None, PROPERTIES) or member != "GetAll":
        raise Answer(UNKNOWN_METHOD, "only %s.GetAll at %s" % (PROPERTIES, path))
    _expect(signature, member, "s")
    args = string_args()
    interface_name, props = ((canon.GET_ALL_INTERFACE, canon.properties(arg)) if what == "props"
                             else (canon.ITEM_INTERFACE, canon.item_properties(arg[1])))
    if not args or args[0] != interface_name:
        raise Answer(UNKNOWN_INTERFACE, "no interface %s at %s" % (args[0] if args else "", path))
    return ("reply", "a{sv}", (props,))


def managed_objects(n):
    """The GetManagedObjects body of the manager of objects/get-managed-objects/<n>."""
    return [(canon.object_child_path(n, i), [(canon.ITEM_INTERFACE, canon.item_properties(i))]) for i in range(n)]
