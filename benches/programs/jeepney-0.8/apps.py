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
holds the call."""

import threading

from jeepney import DBusAddress, HeaderFields, MessageFlag, MessageType, message_bus, new_error, \
    new_method_call, new_method_return

from dbus_matrix_py import apps, canon, service

KINDS = (apps.IN_ONLY_BYTES,)
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


def client(connect, check_reply, t, op):
    """The operation of an application op; `connect()` opens a bus connection,
    `check_reply(reply, what)` returns its body or raises on an error reply."""
    kind, n = op
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
