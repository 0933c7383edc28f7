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
loop iterated until the empty reply came back, as `_in_flight` does.

`proxy/create-call/<server>`: connection A owns `<service>.Proxied` and
answers every method call from a message filter (`add_message_filter`,
dbus-python's low-level hook) with dbus_matrix_py.proxied's answers (the
harness's raw server is Rust: the programs serve the object themselves,
with or without Properties). One op builds a proxy with dbus-python's
defaults, `get_object` (which asks the bus for the name's owner, blocking,
and introspects before its first call) and dbus.Interface, calls `Void`
with reply_handler (the loop iterated until it returns), and drops it.

`call/connections-in-process/<k>`: k connections of the client process
(BusConnection on a bus, Connection to the p2p server's socket), each with
its proxy of the benchmark service (`get_object` + dbus.Interface, which
introspects once, before timing); one op makes the blocking `InOutInt(i)`
on connection i in turn (the server is another process: nothing of this
thread's loop has to answer).

`proxy/startup/<n>`: connection A owns `<service>.Proxied` and answers the
tree of dbus_matrix_py.startup from a message filter. One op: the root's
Introspect (`get_object(..., introspect=False)`: its own Introspect would be
a second one) and its XML read with xml.etree: dbus-python's parser
(dbus/_expat_introspect_parser.py, `process_introspection_data`) keeps only
`interface.method` -> in-signature and drops child nodes, so nothing of
dbus-python lists them; then per child `get_object` with its defaults
(GetNameOwner of the name, and the Introspect its parser reads into the
proxy's method map, where `Id` must be found) and `Id` through
dbus.Interface. Every call is made with reply_handler and the loop iterated
(A answers on this thread)."""

import xml.etree.ElementTree as ET

import dbus
import dbus.bus
import dbus.lowlevel
import dbus.service
from gi.repository import GLib

from dbus_matrix_py import apps, canon, proxied, startup

KINDS = (apps.IN_ONLY_BYTES, apps.CONNECTIONS, startup.KIND) + proxied.KINDS
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


def _typed(sig, body):
    """proxied's neutral ("u", 7) values as dbus-python variants."""
    if sig == "v":
        return [dbus.UInt32(body[0][1], variant_level=1)]
    if sig == "a{sv}":
        return [dbus.Dictionary({k: dbus.UInt32(v[1], variant_level=1) for k, v in body[0].items()},
                                signature="sv")]
    return body


def _proxied_filter(server, tally):
    def on_message(conn, msg):
        if not isinstance(msg, dbus.lowlevel.MethodCallMessage):
            return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED
        a = proxied.answer(server, msg.get_path(), msg.get_interface(), msg.get_member(), msg.get_args_list())
        if msg.get_no_reply():
            return dbus.lowlevel.HANDLER_RESULT_HANDLED
        if a[0] == "error":
            reply = dbus.lowlevel.ErrorMessage(msg, a[1], a[2])
        else:
            if a[3]:
                tally.receive(b"")
            reply = dbus.lowlevel.MethodReturnMessage(msg)
            if a[1]:
                reply.append(*_typed(a[1], a[2]), signature=a[1])
        conn.send_message(reply)
        return dbus.lowlevel.HANDLER_RESULT_HANDLED
    return on_message


def _startup_filter(n, tally):
    def on_message(conn, msg):
        if not isinstance(msg, dbus.lowlevel.MethodCallMessage):
            return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED
        a = startup.answer(n, tally, msg.get_path(), msg.get_interface(), msg.get_member())
        if msg.get_no_reply():
            return dbus.lowlevel.HANDLER_RESULT_HANDLED
        if a[0] == "error":
            reply = dbus.lowlevel.ErrorMessage(msg, a[1], a[2])
        else:
            reply = dbus.lowlevel.MethodReturnMessage(msg)
            if a[1] == "a{sv}":
                reply.append(dbus.Dictionary({}, signature="sv"), signature=a[1])
            elif a[1]:
                reply.append(*a[2], signature=a[1])
        conn.send_message(reply)
        return dbus.lowlevel.HANDLER_RESULT_HANDLED
    return on_message


def _await(method, *args, **kw):
    """A call made with reply_handler, the loop iterated until it is answered."""
    done, errors = [], []
    method(*args, reply_handler=lambda *r: done.append(r), error_handler=errors.append, **kw)
    _iterate_until(lambda: done or errors)
    if errors:
        raise RuntimeError("%s: %s" % (getattr(method, "_method_name", method), errors[0]))
    return done[0]


def _startup(connect, t, n):
    tally = startup.Tally()
    name = proxied.proxied_name(t["service_name"])
    a = connect()
    a.add_message_filter(_startup_filter(n, tally))
    owned = a.request_name(name, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
    if owned != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
        raise RuntimeError("could not own %s (RequestName answered %d)" % (name, owned))
    b = connect()
    key = "%s.%s" % (startup.INTERFACE, startup.METHOD)

    def start_up():
        root = b.get_object(name, startup.ROOT, introspect=False)
        xml, = _await(root.Introspect, dbus_interface=startup.INTROSPECTABLE)
        ids = []
        for child in ET.fromstring(str(xml)).findall("node"):
            obj = b.get_object(name, "%s/%s" % (startup.ROOT, child.attrib["name"]))
            ids.append(int(_await(dbus.Interface(obj, startup.INTERFACE).Id)[0]))
            # What dbus-python's parser made of the child's XML: Id must be in it.
            if key not in obj._introspect_method_map:
                raise RuntimeError("the proxy of %s parsed no %s from its introspection" % (obj.object_path, key))
        return startup.op_digest(ids, tally.take())
    start_up.keep = (a, b)  # a BusConnection nobody references is closed: they live with the op
    return start_up


def _proxy_create(connect, t, server):
    tally = apps.SinkTally()
    name = proxied.proxied_name(t["service_name"])
    a = connect()
    a.add_message_filter(_proxied_filter(server, tally))
    owned = a.request_name(name, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
    if owned != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
        raise RuntimeError("could not own %s (RequestName answered %d)" % (name, owned))
    b = connect()

    def create_call():
        iface = dbus.Interface(b.get_object(name, proxied.PATH), proxied.INTERFACE)
        done, errors = [], []
        getattr(iface, proxied.METHOD)(reply_handler=lambda: done.append(True),
                                       error_handler=lambda e: (errors.append(e), done.append(True)))
        _iterate_until(lambda: done)
        if errors:
            raise RuntimeError("%s: %s" % (proxied.METHOD, errors[0]))
        return tally.take()
    create_call.keep = (a, b)  # a BusConnection nobody references is closed: they live with the op
    return create_call


def _connections(connect, t, k):
    conns = [connect() for _ in range(k)]
    calls = [dbus.Interface(c.get_object(t["service_name"] or None, canon.OBJECT_PATH),
                            canon.BENCH_INTERFACE).InOutInt for c in conns]

    def round_robin():
        return apps.connections_digest([call(dbus.Int32(i)) for i, call in enumerate(calls)])
    round_robin.keep = conns  # a BusConnection nobody references is closed: they live with the op
    return round_robin


def client(connect, t, op):
    """The operation of an application op; `connect()` opens a connection
    (to the bus, or to the p2p server where the op runs peer to peer)."""
    kind, n = op
    if kind == apps.CONNECTIONS:
        return _connections(connect, t, n)
    if kind == startup.KIND:
        return _startup(connect, t, n)
    if kind in proxied.KINDS:
        return _proxy_create(connect, t, proxied.SERVERS[kind])
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
