"""dbus-fast's arm of `property/changed-storm/<n>` (harness/src/ipc/storm.rs;
the canon and the check in dbus_matrix_py.storm).

Connection A, a second MessageBus of the client process, exports the storm's
object as a ServiceInterface with the read-only property `Level` (dbus-fast's
object server answers Get and GetAll) and announces each update with the
interface's `emit_properties_changed`, as a dbus-fast service does.
dbus-fast has no property cache (its proxies read properties with a Get
each time), so connection B subscribes as an application of it must: an
AddMatch of the canon's rule and a message handler (`add_message_handler`)
that keeps the value of each PropertiesChanged of the storm's interface.
Both connections are read by the one event loop, so B reads during the
storm; the operation ends when B holds the last value, or the canon's
settle time after the storm was sent."""

import asyncio

from dbus_fast import Message, MessageType
from dbus_fast.service import PropertyAccess, ServiceInterface, dbus_property

from dbus_matrix_py import storm as st

KINDS = (st.KIND,)
HOLDER = "the program (dbus-fast has no property cache)"
BUS = "org.freedesktop.DBus"
if st.PROPERTY != "Level":  # dbus-fast names a property by its Python name
    raise RuntimeError("the canon's storm property %r is not the Storm class's Level" % st.PROPERTY)


class _Storm(ServiceInterface):
    def __init__(self):
        super().__init__(st.INTERFACE)
        self.level = st.INITIAL_LEVEL

    @dbus_property(access=PropertyAccess.READ)
    def Level(self) -> "i":  # noqa: F821
        return self.level


def client(run, connect, op):
    """The operation of `property-storm`; `run` runs a coroutine on the
    adapter's loop, `connect()` opens a bus connection (a coroutine)."""
    _, n = op
    seen = st.Seen()
    waiting = [None]  # the future the op waits on for the last value

    def on_message(msg):
        if (msg.message_type == MessageType.SIGNAL and msg.member == st.PROPERTIES_CHANGED
                and msg.interface == st.PROPERTIES and msg.path == st.PATH and msg.body[0] == st.INTERFACE):
            seen.take({k: v.value for k, v in msg.body[1].items()})
            if seen.done(n) and waiting[0] is not None and not waiting[0].done():
                waiting[0].set_result(True)
        return None

    async def setup():
        a = await connect()
        obj = _Storm()
        a.export(st.PATH, obj)
        b = await connect()
        b.add_message_handler(on_message)
        reply = await b.call(Message(destination=BUS, path="/org/freedesktop/DBus", interface=BUS,
                                     member="AddMatch", signature="s", body=[st.CHANGED_RULE]))
        if reply.message_type == MessageType.ERROR:
            raise RuntimeError("AddMatch: %s %s" % (reply.error_name, reply.body))
        return a, b, obj

    a, b, obj = run(setup())

    async def storm():
        waiting[0] = asyncio.get_running_loop().create_future()
        for i in range(n):
            obj.level = st.level(i)
            obj.emit_properties_changed({st.PROPERTY: obj.level})
        if not seen.done(n):
            try:
                await asyncio.wait_for(waiting[0], st.SETTLE_S)
            except asyncio.TimeoutError:
                pass  # the check says what was lost
        waiting[0] = None
        return seen.digest(HOLDER, n)

    def op_():
        return run(storm())
    op_.conns = (a, b)  # the connections live with the op
    return op_
