"""dbus-fast's arm of the application families (issue 31; definitions in
harness/src/ipc/application.rs, the tally in dbus_matrix_py.apps).

`call/in-only-bytes/<n>`: connection A, a second MessageBus of the client
process, exports the sink as a ServiceInterface (dbus-fast's object server,
`SinkBytes(ay)` with no out arguments) and owns `<service>.Sink`
(request_name, DO_NOT_QUEUE); connection B calls it by that name through a
proxy built from the sink's introspection data (get_proxy_object with a
parsed Node: no Introspect call, as `_interface` builds the benchmark's) and
awaits the empty reply. Both connections are read by the one event loop, so
A answers while B awaits.

`proxy/create-call/<server>`: connection A owns `<service>.Proxied` and
answers every method call from a message handler (`add_message_handler`)
with dbus_matrix_py.proxied's answers (the harness's raw server is Rust:
the programs serve the object themselves, with or without Properties). One
op builds a proxy as dbus-fast's documentation does, `introspect` (one
Introspect call) then `get_proxy_object` and `get_interface`, calls
`call_void` and drops it."""

from dbus_fast import Message, MessageFlag, MessageType, NameFlag, RequestNameReply, Variant
from dbus_fast.introspection import Node
from dbus_fast.service import ServiceInterface, dbus_method

from dbus_matrix_py import apps, canon, proxied

KINDS = (apps.IN_ONLY_BYTES,) + proxied.KINDS


class _Sink(ServiceInterface):
    def __init__(self, tally):
        super().__init__(apps.SINK_INTERFACE)
        self.tally = tally

    @dbus_method(name=apps.SINK_BYTES)
    def sink_bytes(self, value: "ay"):  # noqa: F821
        self.tally.receive(value)


def _typed(sig, body):
    """proxied's neutral ("u", 7) values as dbus-fast Variants."""
    if sig == "v":
        return [Variant(*body[0])]
    if sig == "a{sv}":
        return [{k: Variant(*v) for k, v in body[0].items()}]
    return body


def _proxied_handler(server, tally):
    def handler(msg):
        if msg.message_type != MessageType.METHOD_CALL:
            return None
        a = proxied.answer(server, msg.path, msg.interface, msg.member, msg.body)
        if msg.flags & MessageFlag.NO_REPLY_EXPECTED:
            return True
        if a[0] == "error":
            return Message.new_error(msg, a[1], a[2])
        if a[3]:
            tally.receive(b"")
        return Message.new_method_return(msg, a[1], _typed(a[1], a[2]))
    return handler


def _proxy_create(run, connect, t, server):
    tally = apps.SinkTally()
    name = proxied.proxied_name(t["service_name"])

    async def setup():
        a = await connect()
        a.add_message_handler(_proxied_handler(server, tally))
        owned = await a.request_name(name, NameFlag.DO_NOT_QUEUE)
        if owned != RequestNameReply.PRIMARY_OWNER:
            raise RuntimeError("could not own %s (RequestName answered %s)" % (name, owned))
        return a, await connect()

    a, b = run(setup())

    async def create_call():
        node = await b.introspect(name, proxied.PATH)
        iface = b.get_proxy_object(name, proxied.PATH, node).get_interface(proxied.INTERFACE)
        await iface.call_void()
        return tally.take()

    def op_():
        return run(create_call())
    op_.conns = (a, b)  # the connections live with the op
    return op_


def client(run, connect, t, op):
    """The operation of an application op; `run` runs a coroutine on the
    adapter's loop, `connect()` opens a bus connection (a coroutine)."""
    kind, n = op
    if kind in proxied.KINDS:
        return _proxy_create(run, connect, t, proxied.SERVERS[kind])
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
