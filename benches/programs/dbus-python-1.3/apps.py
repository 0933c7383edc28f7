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
with reply_handler (the loop iterated until it returns), and drops it."""

import dbus
import dbus.bus
import dbus.lowlevel
import dbus.service
from gi.repository import GLib

from dbus_matrix_py import apps, canon, proxied

KINDS = (apps.IN_ONLY_BYTES,) + proxied.KINDS
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


def client(connect, t, op):
    """The operation of an application op; `connect()` opens a bus connection."""
    kind, n = op
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
