"""The object of `proxy/create-call/<server>` (harness/src/ipc/proxied.rs)
for the Python adapters, which serve it themselves on a second connection of
the client process (the harness's raw server is Rust, inside the Rust
adapters): what it answers to each call, from canon.json, as the harness's
`proxied::answer`. Each library sends the answer with its own low-level
API; the one counted answer (`Void`) is the op's tally."""

from . import canon

_P = canon.CANON["proxied"]
_STD = canon.CANON["standard"]
_E = _STD["errors"]
PATH = _P["path"]
INTERFACE = _P["interface"]
METHOD = _P["method"]
PROPERTY = _P["property"]
COUNT = _P["count"]
SERVERS = {"proxy-create-props": "props", "proxy-create-no-props": "no-props"}
KINDS = tuple(SERVERS)


def proxied_name(service_name):
    """The name the serving connection owns and every proxy is built for."""
    return service_name + _P["name_suffix"]


def xml(server):
    return _P["xml"][server]


def answer(server, path, interface, member, args):
    """("return", signature, body, counted) or ("error", name, message), as
    proxied.rs `answer` for a call of `interface.member` on `path` (no
    INTERFACE: the first interface that has the member)."""
    if path != PATH:
        return ("error", _E["unknown_object"], "no object at %s" % path)
    if interface is None:
        interface = {"Introspect": _STD["introspectable"], "Ping": _STD["peer"], "GetMachineId": _STD["peer"],
                     "Get": _STD["properties"], "GetAll": _STD["properties"],
                     "Set": _STD["properties"]}.get(member, INTERFACE)
    if (interface, member) == (INTERFACE, METHOD):
        return ("return", "", [], True)
    if (interface, member) == (_STD["introspectable"], "Introspect"):
        return ("return", "s", [xml(server)], False)
    if (interface, member) == (_STD["peer"], "Ping"):
        return ("return", "", [], False)
    if interface == _STD["properties"] and server == "no-props":
        return ("error", _E["unknown_interface"], "no interface %s at %s" % (_STD["properties"], PATH))
    if interface == _STD["properties"]:
        return _properties(member, args)
    return ("error", _E["unknown_method"], "no method %s.%s at %s" % (interface, member, PATH))


def _properties(member, args):
    strings = [a for a in args if isinstance(a, str)]
    iface = strings[0] if strings else ""
    name = strings[1] if len(strings) > 1 else ""
    ours = iface == INTERFACE
    if member == "GetAll":
        return ("return", "a{sv}", [{PROPERTY: ("u", COUNT)} if ours else {}], False)
    if member == "Get" and ours and name == PROPERTY:
        return ("return", "v", [("u", COUNT)], False)
    if member == "Get":
        return ("error", _E["unknown_property"], "no property %s.%s" % (iface, name))
    if member == "Set":
        return ("error", _E["property_read_only"], "%s.%s is read-only" % (iface, name))
    return ("error", _E["unknown_method"], "no method %s.%s" % (_STD["properties"], member))
