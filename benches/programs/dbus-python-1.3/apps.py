"""dbus-python's arm of the application families (issue 31; definitions in
harness/src/ipc/application.rs, the tally in dbus_matrix_py.apps).

`call/in-only-bytes/<n>`: connection A, a second BusConnection of the
client process, serves the sink as a dbus.service.Object (dbus-python's
object server, `SinkBytes(ay)` with no out arguments, byte_arrays) and owns
`<service>.Sink` (request_name, DO_NOT_QUEUE); connection B calls it by that
name through `get_object` + dbus.Interface (a proxy that introspects before
its first call, done before timing). A and B share the one GLib main loop
and thread, so a blocking call from B would never let A answer: the call is
made with reply_handler/error_handler (libdbus's send_with_reply) and the
loop iterated until the empty reply came back, as `_in_flight` does."""

import dbus
import dbus.bus
import dbus.service
from gi.repository import GLib

from dbus_matrix_py import apps, canon

KINDS = (apps.IN_ONLY_BYTES,)
if apps.SINK_BYTES != "SinkBytes":  # dbus-python names a method by its Python name
    raise RuntimeError("the canon's sink method %r is not the Sink class's SinkBytes" % apps.SINK_BYTES)


class Sink(dbus.service.Object):
    def __init__(self, conn, tally):
        super().__init__(conn, apps.SINK_PATH)
        self.tally = tally

    @dbus.service.method(apps.SINK_INTERFACE, in_signature="ay", out_signature="", byte_arrays=True)
    def SinkBytes(self, value):
        self.tally.receive(value)


def _iterate_until(done):
    ctx = GLib.MainContext.default()
    while not done():
        ctx.iteration(True)


def client(connect, t, op):
    """The operation of an application op; `connect()` opens a bus connection."""
    kind, n = op
    if kind != apps.IN_ONLY_BYTES:
        raise RuntimeError("no application client for %s" % kind)
    tally = apps.SinkTally()
    name = apps.sink_name(t["service_name"])
    a = connect()
    sink = Sink(a, tally)
    owned = a.request_name(name, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
    if owned != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
        raise RuntimeError("could not own %s (RequestName answered %d)" % (name, owned))
    b = connect()
    iface = dbus.Interface(b.get_object(name, apps.SINK_PATH), apps.SINK_INTERFACE)
    payload = dbus.ByteArray(canon.echo_payload(n))

    def in_only():
        done, errors = [], []
        iface.SinkBytes(payload, reply_handler=lambda: done.append(True),
                        error_handler=lambda e: (errors.append(e), done.append(True)))
        _iterate_until(lambda: done)
        if errors:
            raise RuntimeError("%s: %s" % (apps.SINK_BYTES, errors[0]))
        return tally.take()
    in_only.keep = (a, b, sink)  # a BusConnection nobody references is closed: they live with the op
    return in_only
