"""What a hand-built server answers to any method call (harness/src/ipc/
standard.rs and introspect.rs), for Python libraries without an object
server: the benchmark methods are left to the library, everything else
(Introspect, Peer, Properties, unknown members, wrong arguments) answered
here, so gdbus, busctl and dbus-send get a reply or a proper error."""

from . import canon

INTROSPECTABLE = "org.freedesktop.DBus.Introspectable"
PEER = "org.freedesktop.DBus.Peer"
PROPERTIES = "org.freedesktop.DBus.Properties"
UNKNOWN_METHOD = "org.freedesktop.DBus.Error.UnknownMethod"
UNKNOWN_INTERFACE = "org.freedesktop.DBus.Error.UnknownInterface"
UNKNOWN_OBJECT = "org.freedesktop.DBus.Error.UnknownObject"
UNKNOWN_PROPERTY = "org.freedesktop.DBus.Error.UnknownProperty"
PROPERTY_READ_ONLY = "org.freedesktop.DBus.Error.PropertyReadOnly"
INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"
FAILED = "org.freedesktop.DBus.Error.Failed"

_DOCTYPE = ('<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"\n'
            ' "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">\n')
_INTROSPECTABLE_XML = """  <interface name="org.freedesktop.DBus.Introspectable">
    <method name="Introspect">
      <arg name="xml_data" type="s" direction="out"/>
    </method>
  </interface>
  <interface name="org.freedesktop.DBus.Peer">
    <method name="Ping"/>
    <method name="GetMachineId">
      <arg name="machine_uuid" type="s" direction="out"/>
    </method>
  </interface>
"""
_PROPERTIES_XML = """  <interface name="org.freedesktop.DBus.Properties">
    <method name="Get">
      <arg name="interface_name" type="s" direction="in"/>
      <arg name="property_name" type="s" direction="in"/>
      <arg name="value" type="v" direction="out"/>
    </method>
    <method name="GetAll">
      <arg name="interface_name" type="s" direction="in"/>
      <arg name="properties" type="a{sv}" direction="out"/>
    </method>
    <method name="Set">
      <arg name="interface_name" type="s" direction="in"/>
      <arg name="property_name" type="s" direction="in"/>
      <arg name="value" type="v" direction="in"/>
    </method>
    <signal name="PropertiesChanged">
      <arg name="interface_name" type="s"/>
      <arg name="changed_properties" type="a{sv}"/>
      <arg name="invalidated_properties" type="as"/>
    </signal>
  </interface>
"""


def _bench_interface():
    x = '  <interface name="%s">\n' % canon.BENCH_INTERFACE
    for member, args_in, args_out in canon.INTERFACE_METHODS:
        if not args_in and not args_out:
            x += '    <method name="%s"/>\n' % member
            continue
        x += '    <method name="%s">\n' % member
        # every signature of the table is one complete type
        if args_in:
            x += '      <arg name="value" type="%s" direction="in"/>\n' % args_in
        if args_out:
            x += '      <arg name="result" type="%s" direction="out"/>\n' % args_out
        x += "    </method>\n"
    x += ('    <property name="%s" type="a(ss)" access="read"/>\n    <signal name="%s">\n'
          '      <arg name="text" type="s"/>\n    </signal>\n  </interface>\n' % (canon.PROPERTY, canon.SIGNAL))
    return x


def introspection_xml_of(path):
    if path == canon.OBJECT_PATH:
        return "%s<node>\n%s%s%s</node>\n" % (_DOCTYPE, _bench_interface(), _INTROSPECTABLE_XML, _PROPERTIES_XML)
    if path == "/":
        rest = canon.OBJECT_PATH[1:]
    elif canon.OBJECT_PATH.startswith(path + "/"):
        rest = canon.OBJECT_PATH[len(path) + 1:]
    else:
        return None
    return '%s<node>\n%s  <node name="%s"/>\n</node>\n' % (_DOCTYPE, _INTROSPECTABLE_XML, rest.split("/")[0])


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
    return ("a(ss)", canon.items())


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


def bench_reply(member, args, service_name):
    """The benchmark methods' replies (ipc.rs's table): (signature, body)."""
    if member in ("Void", "InInt", "InString"):
        return ("", ())
    if member == "OutInt":
        return ("i", (canon.OUT_INT,))
    if member == "InOutInt":
        return ("i", (args[0] + 1,))
    if member == "OutString":
        return ("s", (canon.OUT_STRING,))
    if member == "InOutString":
        return ("s", (args[0],))
    if member == "ObjectRef":
        return ("(so)", ((service_name, canon.object_path(0)),))
    if member == "RelationSet":
        return ("a(so)", ([(service_name, canon.object_path(i)) for i in range(10)],))
    if member == canon.ECHO_BYTES:
        return ("ay", (bytes(args[0]),))
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
