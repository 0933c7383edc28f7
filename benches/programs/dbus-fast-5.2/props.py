"""property/get-all/<n> and objects/get-managed-objects/<n> (harness/src/ipc/props.rs)
with dbus-fast's own layers: the server exports ServiceInterfaces (the n
properties as dbus_property getters of a class made per n, the children as
an interface whose getters read the child's index); dbus-fast answers
Properties.GetAll and ObjectManager.GetManagedObjects itself (its default
handlers walk the exported objects). The client is a proxy built from
introspection data the program already has, as for the benchmark object."""

from dbus_fast.introspection import Node
from dbus_fast.service import PropertyAccess, ServiceInterface, dbus_property

from dbus_matrix_py import canon

PROPERTIES = "org.freedesktop.DBus.Properties"
_PROXY_XML = """<node>
  <interface name="org.freedesktop.DBus.Properties">
    <method name="GetAll">
      <arg name="interface_name" type="s" direction="in"/>
      <arg name="properties" type="a{sv}" direction="out"/>
    </method>
  </interface>
  <interface name="org.freedesktop.DBus.ObjectManager">
    <method name="GetManagedObjects">
      <arg name="objects" type="a{oa{sa{sv}}}" direction="out"/>
    </method>
  </interface>
</node>
"""


def _constant(name, sig, value):
    def get(self):
        return value
    get.__name__ = name
    get.__annotations__ = {"return": sig}
    return dbus_property(access=PropertyAccess.READ, name=name)(get)


def _props_interface(n):
    """A ServiceInterface with the n read-only properties of property/get-all/<n>."""
    attrs = {name: _constant(name, sig, v) for name, (sig, v) in canon.properties(n)}

    def __init__(self):
        ServiceInterface.__init__(self, canon.GET_ALL_INTERFACE)
    attrs["__init__"] = __init__
    return type("Props%d" % n, (ServiceInterface,), attrs)()


class _Item(ServiceInterface):
    """ITEM_INTERFACE of child i (props.rs `item_properties`)."""

    def __init__(self, i):
        super().__init__(canon.ITEM_INTERFACE)
        self._props = dict(canon.item_properties(i))

    @dbus_property(access=PropertyAccess.READ)
    def Enabled(self) -> "b":  # noqa: F821
        return self._props["Enabled"][1]

    @dbus_property(access=PropertyAccess.READ)
    def Id(self) -> "s":  # noqa: F821
        return self._props["Id"][1]

    @dbus_property(access=PropertyAccess.READ)
    def Index(self) -> "u":  # noqa: F821
        return self._props["Index"][1]


# dbus-fast sends an InterfacesAdded signal for every export, at once, and its
# message writer takes a full socket send buffer (EAGAIN) for a broken
# connection: 1,010 signals in one burst killed the server whenever the bus
# daemon, on the same CPU, had not read them yet. Exports go in batches, each
# followed by a round trip to the bus (its reply comes after it has read
# everything sent before), so the buffer never holds more than one batch.
EXPORT_BATCH = 100


async def export(bus, round_trip):
    """Exports both families' objects on `bus` (the managers need no export:
    dbus-fast answers GetManagedObjects on any path with the objects below it);
    `round_trip()` is awaited after every EXPORT_BATCH exports."""
    exported = 0
    for n in canon.PROPS_COUNTS:
        paths = [(canon.props_path(n), _props_interface(n))]
        paths += [(canon.object_child_path(n, i), _Item(i)) for i in range(n)]
        for path, interface in paths:
            bus.export(path, interface)
            exported += 1
            if exported % EXPORT_BATCH == 0:
                await round_trip()


def _props_of(variants):
    return [(name, (v.signature, v.value)) for name, v in variants.items()]


def client(bus, t, kind, n):
    """The coroutine function of one GetAll or GetManagedObjects; it returns the digest."""
    node = Node.parse(_PROXY_XML)
    if kind == "property-get-all":
        props = bus.get_proxy_object(t["service_name"], canon.props_path(n), node).get_interface(PROPERTIES)

        async def get_all():
            return canon.properties_digest(_props_of(await props.call_get_all(canon.GET_ALL_INTERFACE)))
        return get_all
    manager = bus.get_proxy_object(t["service_name"], canon.objects_path(n), node).get_interface(
        canon.OBJECT_MANAGER_INTERFACE)

    async def managed_objects():
        objects = await manager.call_get_managed_objects()
        # Only the benchmark interface counts (a server may list the standard ones too).
        return canon.managed_objects_digest(
            (path, _props_of(interfaces[canon.ITEM_INTERFACE]))
            for path, interfaces in objects.items() if canon.ITEM_INTERFACE in interfaces)
    return managed_objects
