"""jeepney's arm of the application families (issue 31; definitions in
harness/src/ipc/application.rs, the tally in dbus_matrix_py.apps).

`call/in-only-bytes/<n>`: jeepney has no object layer, so connection A (a
second blocking connection of the client process, owning `<service>.Sink`:
RequestName, DO_NOT_QUEUE) answers `SinkBytes(ay)` by hand on a thread of
its own (`receive`, then an empty `new_method_return`; a blocking connection
is read only by the thread that calls it, as rustbus's `wait_call`).
Connection B calls it by that name with `send_and_get_reply` of a
`new_method_call` and awaits the empty reply. The handler records the bytes
before it sends the reply, so the tally the client takes after the reply
holds the call.

`proxy/create-call/<server>`: connection A owns `<service>.Proxied` and
answers every method call on a thread of its own with
dbus_matrix_py.proxied's answers (the harness's raw server is Rust: the
programs serve the object themselves; jeepney's variants are already the
neutral ("u", 7) pairs). One op builds jeepney's proxy, `Proxy` from
jeepney.io.blocking over a `MessageGenerator` of the interface (what
jeepney's generator tool writes from introspection data, written here once:
the proxy sends nothing of its own), calls `Void` and drops it.

`call/connections-in-process/<k>`: k blocking connections of the client
process, each with its `Proxy` of the benchmark interface (a
`MessageGenerator` written once here, as for the proxied object); one op
calls `InOutInt(i)` on connection i in turn, each reply awaited."""

import threading

from jeepney import DBusAddress, HeaderFields, MessageFlag, MessageGenerator, MessageType, message_bus, \
    new_error, new_method_call, new_method_return
from jeepney.io.blocking import Proxy

from dbus_matrix_py import apps, canon, proxied, service

KINDS = (apps.IN_ONLY_BYTES, apps.CONNECTIONS) + proxied.KINDS
DO_NOT_QUEUE = 4
PRIMARY_OWNER = 1


def _serve_sink(conn, tally):
    """A's thread: every SinkBytes recorded and answered, anything else an error."""
    while True:
        try:
            msg = conn.receive()
        except (ConnectionError, OSError):
            return  # the process is ending
        h = msg.header
        if h.message_type != MessageType.method_call:
            continue
        f = h.fields
        ours = (f.get(HeaderFields.path) == apps.SINK_PATH and f.get(HeaderFields.member) == apps.SINK_BYTES
                and f.get(HeaderFields.interface) in (apps.SINK_INTERFACE, None))
        if ours and f.get(HeaderFields.signature, "") == "ay":
            tally.receive(msg.body[0])
            reply = new_method_return(msg)
        elif ours:
            reply = new_error(msg, service.INVALID_ARGS, "s", ("SinkBytes takes \"ay\"",))
        else:
            reply = new_error(msg, service.UNKNOWN_METHOD, "s", ("no method %s.%s at %s" % (
                f.get(HeaderFields.interface), f.get(HeaderFields.member), f.get(HeaderFields.path)),))
        if not h.flags & MessageFlag.no_reply_expected:
            conn.send(reply)


class ProxiedGen(MessageGenerator):
    """The proxied interface's messages, as jeepney's generator writes them."""
    interface = proxied.INTERFACE

    def __init__(self, object_path, bus_name):
        super().__init__(object_path=object_path, bus_name=bus_name)

    def Void(self):
        return new_method_call(self, proxied.METHOD)


class BenchGen(MessageGenerator):
    """The benchmark interface's InOutInt, as jeepney's generator writes it."""
    interface = canon.BENCH_INTERFACE

    def __init__(self, object_path, bus_name):
        super().__init__(object_path=object_path, bus_name=bus_name)

    def InOutInt(self, value):
        return new_method_call(self, "InOutInt", "i", (value,))


def _connections(connect, t, k):
    conns = [connect() for _ in range(k)]
    proxies = [Proxy(BenchGen(canon.OBJECT_PATH, t["service_name"]), c) for c in conns]

    def round_robin():
        # Each Proxy call returns the reply's body (an error reply raises DBusErrorResponse).
        return apps.connections_digest([p.InOutInt(i)[0] for i, p in enumerate(proxies)])
    round_robin.keep = conns
    return round_robin


def _serve_proxied(conn, server, tally):
    """A's thread: every method call answered as proxied.answer says."""
    while True:
        try:
            msg = conn.receive()
        except (ConnectionError, OSError):
            return  # the process is ending
        h = msg.header
        if h.message_type != MessageType.method_call:
            continue
        f = h.fields
        a = proxied.answer(server, f.get(HeaderFields.path), f.get(HeaderFields.interface),
                           f.get(HeaderFields.member), list(msg.body))
        if h.flags & MessageFlag.no_reply_expected:
            continue
        if a[0] == "error":
            conn.send(new_error(msg, a[1], "s", (a[2],)))
            continue
        if a[3]:
            tally.receive(b"")
        conn.send(new_method_return(msg, a[1] or None, tuple(a[2])))


def _proxy_create(connect, check_reply, t, server):
    tally = apps.SinkTally()
    name = proxied.proxied_name(t["service_name"])
    a = connect()
    owned = check_reply(a.send_and_get_reply(message_bus.RequestName(name, DO_NOT_QUEUE)), "RequestName")
    if owned[0] != PRIMARY_OWNER:
        raise RuntimeError("could not own %s (RequestName answered %d)" % (name, owned[0]))
    threading.Thread(target=_serve_proxied, args=(a, server, tally), name="proxied", daemon=True).start()
    b = connect()

    def create_call():
        proxy = Proxy(ProxiedGen(proxied.PATH, name), b)
        getattr(proxy, proxied.METHOD)()  # raises DBusErrorResponse on an error reply
        return tally.take()
    create_call.keep = (a, b)
    return create_call


def client(connect, check_reply, t, op):
    """The operation of an application op; `connect()` opens a bus connection,
    `check_reply(reply, what)` returns its body or raises on an error reply."""
    kind, n = op
    if kind == apps.CONNECTIONS:
        return _connections(connect, t, n)
    if kind in proxied.KINDS:
        return _proxy_create(connect, check_reply, t, proxied.SERVERS[kind])
    if kind != apps.IN_ONLY_BYTES:
        raise RuntimeError("no application client for %s" % kind)
    tally = apps.SinkTally()
    name = apps.sink_name(t["service_name"])
    a = connect()
    owned = check_reply(a.send_and_get_reply(message_bus.RequestName(name, DO_NOT_QUEUE)), "RequestName")
    if owned[0] != PRIMARY_OWNER:
        raise RuntimeError("could not own %s (RequestName answered %d)" % (name, owned[0]))
    threading.Thread(target=_serve_sink, args=(a, tally), name="sink", daemon=True).start()
    b = connect()
    call = new_method_call(DBusAddress(apps.SINK_PATH, bus_name=name, interface=apps.SINK_INTERFACE),
                           apps.SINK_BYTES, "ay", (canon.echo_payload(n),))

    def in_only():
        check_reply(b.send_and_get_reply(call), apps.SINK_BYTES)
        return tally.take()
    in_only.keep = (a, b)
    return in_only
