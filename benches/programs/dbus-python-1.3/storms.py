"""dbus-python's arm of `property/changed-storm/<n>` (harness/src/ipc/storm.rs;
the canon and the check in dbus_matrix_py.storm).

Connection A, a second BusConnection of the client process, serves the
storm's object as a dbus.service.Object: dbus-python's object server has no
Properties of its own, so `Get` and `GetAll` of `Level` are methods of the
object, and each update is its `PropertiesChanged` signal method
(`@dbus.service.signal`, `sa{sv}as`), as a dbus-python service announces
one. dbus-python has no property cache, so connection B subscribes as an
application of it must: `add_signal_receiver` with the canon rule's fields
(arg0 included, see subscriptions.py), keeping the value of each
PropertiesChanged. Both connections are on the GLib main loop of the calling
thread, so B is read only after the storm is sent (it waits in libdbus's,
the bus's and the socket's queues, as in `signal/burst`); the loop is then
iterated until B holds the last value, or the canon's settle time."""

import dbus
import dbus.service
from gi.repository import GLib

from dbus_matrix_py import service
from dbus_matrix_py import storm as st

import subscriptions  # (beside this file)

KINDS = (st.KIND,)
HOLDER = "the program (dbus-python has no property cache)"


class StormObject(dbus.service.Object):
    def __init__(self, conn):
        super().__init__(conn, st.PATH)
        self.level = st.INITIAL_LEVEL

    @dbus.service.method(st.PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        if interface != st.INTERFACE or name != st.PROPERTY:
            raise dbus.exceptions.DBusException("no property %s.%s" % (interface, name),
                                                name=service.UNKNOWN_PROPERTY)
        return dbus.Int32(self.level, variant_level=1)

    @dbus.service.method(st.PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        ours = {st.PROPERTY: dbus.Int32(self.level)} if interface == st.INTERFACE else {}
        return dbus.Dictionary(ours, signature="sv")

    @dbus.service.signal(st.PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def set_level(self, value):
        self.level = value
        self.PropertiesChanged(st.INTERFACE, dbus.Dictionary({st.PROPERTY: dbus.Int32(value)}, signature="sv"),
                               dbus.Array([], signature="s"))


def client(connect, op):
    """The operation of `property-storm`; `connect()` opens a bus connection."""
    _, n = op
    seen = st.Seen()
    a = connect()
    obj = StormObject(a)
    b = connect()
    subscriptions.receive_with(
        b, st.CHANGED_RULE,
        lambda interface, changed, invalidated: seen.take({str(k): int(v) for k, v in changed.items()}))
    ctx = GLib.MainContext.default()

    def storm():
        for i in range(n):
            obj.set_level(st.level(i))
        a.flush()
        settled = []
        timer = GLib.timeout_add(int(st.SETTLE_S * 1000), lambda: settled.append(True) and False)
        while not seen.done(n) and not settled:
            ctx.iteration(True)
        if not settled:
            GLib.source_remove(timer)
        return seen.digest(HOLDER, n)
    storm.keep = (a, b, obj)  # a BusConnection nobody references is closed: they live with the op
    return storm
