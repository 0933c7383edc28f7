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
`call_void` and drops it.

`call/connections-in-process/<k>`: k MessageBus connections of the client
process, each with its proxy of the benchmark service (from the
introspection data the program has, as the adapter's other calls); one op
awaits `call_in_out_int(i)` on connection i in turn, all on the one loop.

`proxy/startup/<n>`: connection A owns `<service>.Proxied` and answers the
tree of dbus_matrix_py.startup from a message handler. One op is what
dbus-fast's own start-up benchmark does: `introspect` the root (one
Introspect, its XML parsed by `Node.parse`) for its child nodes, then per
child `introspect` it, `get_proxy_object` with the parsed Node and
`get_interface` (which finds the interface and `Id` in it, or raises), and
await `call_id`."""

from dbus_fast import Message, MessageFlag, MessageType, NameFlag, RequestNameReply, Variant
from dbus_fast.introspection import Node
from dbus_fast.service import ServiceInterface, dbus_method

from dbus_matrix_py import apps, canon, proxied, startup

KINDS = (apps.IN_ONLY_BYTES, apps.CONNECTIONS, startup.KIND) + proxied.KINDS


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


async def _own(bus, name):
    owned = await bus.request_name(name, NameFlag.DO_NOT_QUEUE)
    if owned != RequestNameReply.PRIMARY_OWNER:
        raise RuntimeError("could not own %s (RequestName answered %s)" % (name, owned))


def _startup_handler(n, tally):
    def handler(msg):
        if msg.message_type != MessageType.METHOD_CALL:
            return None
        a = startup.answer(n, tally, msg.path, msg.interface, msg.member)
        if msg.flags & MessageFlag.NO_REPLY_EXPECTED:
            return True
        if a[0] == "error":
            return Message.new_error(msg, a[1], a[2])
        return Message.new_method_return(msg, a[1], a[2])
    return handler


def _startup(run, connect, t, n):
    tally = startup.Tally()
    name = proxied.proxied_name(t["service_name"])

    async def setup():
        a = await connect()
        a.add_message_handler(_startup_handler(n, tally))
        await _own(a, name)
        return a, await connect()

    a, b = run(setup())

    async def start_up():
        root = await b.introspect(name, startup.ROOT)
        ids = []
        for child in root.nodes:
            path = "%s/%s" % (startup.ROOT, child.name)
            node = await b.introspect(name, path)
            iface = b.get_proxy_object(name, path, node).get_interface(startup.INTERFACE)
            ids.append(await iface.call_id())
        return startup.op_digest(ids, tally.take())

    def op_():
        return run(start_up())
    op_.conns = (a, b)  # the connections live with the op
    return op_


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


def _connections(run, connect, proxy_of, k):
    async def setup():
        buses = [await connect() for _ in range(k)]
        return buses, [proxy_of(b) for b in buses]

    buses, ifaces = run(setup())

    async def round_robin():
        return apps.connections_digest([await iface.call_in_out_int(i) for i, iface in enumerate(ifaces)])

    def op_():
        return run(round_robin())
    op_.conns = buses  # the connections live with the op
    return op_


def client(run, connect, t, op, proxy_of):
    """The operation of an application op; `run` runs a coroutine on the
    adapter's loop, `connect()` opens a bus connection (a coroutine),
    `proxy_of(bus)` is the benchmark service's proxy on it."""
    kind, n = op
    if kind == apps.CONNECTIONS:
        return _connections(run, connect, proxy_of, n)
    if kind == startup.KIND:
        return _startup(run, connect, t, n)
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
