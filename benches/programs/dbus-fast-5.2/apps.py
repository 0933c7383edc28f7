"""dbus-fast's arm of the application families (issue 31; definitions in
harness/src/ipc/application.rs, the tally in dbus_matrix_py.apps).

`call/in-only-bytes/<n>`: connection A, a second MessageBus of the client
process, exports the sink as a ServiceInterface (dbus-fast's object server,
`SinkBytes(ay)` with no out arguments) and owns `<service>.Sink`
(request_name, DO_NOT_QUEUE); connection B calls it by that name through a
proxy built from the sink's introspection data (get_proxy_object with a
parsed Node: no Introspect call, as `_interface` builds the benchmark's) and
awaits the empty reply. Both connections are read by the one event loop, so
A answers while B awaits."""

from dbus_fast import NameFlag, RequestNameReply
from dbus_fast.introspection import Node
from dbus_fast.service import ServiceInterface, dbus_method

from dbus_matrix_py import apps, canon

KINDS = (apps.IN_ONLY_BYTES,)


class _Sink(ServiceInterface):
    def __init__(self, tally):
        super().__init__(apps.SINK_INTERFACE)
        self.tally = tally

    @dbus_method(name=apps.SINK_BYTES)
    def sink_bytes(self, value: "ay"):  # noqa: F821
        self.tally.receive(value)


def client(run, connect, t, op):
    """The operation of an application op; `run` runs a coroutine on the
    adapter's loop, `connect()` opens a bus connection (a coroutine)."""
    kind, n = op
    if kind != apps.IN_ONLY_BYTES:
        raise RuntimeError("no application client for %s" % kind)
    tally = apps.SinkTally()
    name = apps.sink_name(t["service_name"])

    async def setup():
        a = await connect()
        a.export(apps.SINK_PATH, _Sink(tally))
        owned = await a.request_name(name, NameFlag.DO_NOT_QUEUE)
        if owned != RequestNameReply.PRIMARY_OWNER:
            raise RuntimeError("could not own %s (RequestName answered %s)" % (name, owned))
        b = await connect()
        proxy = b.get_proxy_object(name, apps.SINK_PATH, Node.parse(apps.SINK_XML))
        return a, b, proxy.get_interface(apps.SINK_INTERFACE)

    a, b, iface = run(setup())
    payload = canon.echo_payload(n)

    async def in_only():
        await iface.call_sink_bytes(payload)
        return tally.take()

    def op_():
        return run(in_only())
    op_.conns = (a, b)  # the connections live with the op
    return op_
