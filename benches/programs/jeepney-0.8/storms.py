"""jeepney's arm of `property/changed-storm/<n>` (harness/src/ipc/storm.rs;
the canon and the check in dbus_matrix_py.storm).

jeepney has no object layer and no property cache. Connection A, a second
blocking connection of the client process, serves the storm's object by
hand: a thread of its own answers `Get` and `GetAll` of `Level` (a blocking
connection is read only by the thread that calls it), and the program
announces each update with a `new_signal` of PropertiesChanged on A (its
sends and the thread's replies take one lock: jeepney's `send` is a
`sendall` on the socket). Connection B subscribes as an application of
jeepney must: jeepney's `MatchRule` of the canon's rule, sent with
`message_bus.AddMatch` and used as the local filter into an unbounded deque
(subscriptions.py), keeping the value of each message. B is read only
inside `recv_until_filtered`, after the storm is sent (the updates wait in
the bus's queue and the socket, as in `signal/burst`), until it holds the
last value or the canon's settle time has passed."""

import threading
import time
from collections import deque

from jeepney import DBusAddress, HeaderFields, MessageFlag, MessageType, message_bus, new_error, \
    new_method_return, new_signal

from dbus_matrix_py import service
from dbus_matrix_py import storm as st

import subscriptions  # (beside this file)

KINDS = (st.KIND,)
HOLDER = "the program (jeepney has no property cache)"


class _Object:
    """The storm's object: its level, and the lock of A's sends."""

    def __init__(self, conn):
        self.conn = conn
        self.level = st.INITIAL_LEVEL
        self.lock = threading.Lock()
        self.emitter = DBusAddress(st.PATH, interface=st.PROPERTIES)

    def send(self, msg):
        with self.lock:
            self.conn.send(msg)

    def set_level(self, value):
        self.level = value
        self.send(new_signal(self.emitter, st.PROPERTIES_CHANGED, "sa{sv}as",
                             (st.INTERFACE, {st.PROPERTY: ("i", value)}, [])))

    def answer(self, msg):
        f = msg.header.fields
        member, args = f.get(HeaderFields.member), list(msg.body)
        ours = (f.get(HeaderFields.path) == st.PATH and f.get(HeaderFields.interface) in (st.PROPERTIES, None)
                and args[:1] == [st.INTERFACE])
        if member == "GetAll" and f.get(HeaderFields.path) == st.PATH:
            return new_method_return(msg, "a{sv}", ({st.PROPERTY: ("i", self.level)} if ours else {},))
        if member == "Get" and ours and args[1:2] == [st.PROPERTY]:
            return new_method_return(msg, "v", (("i", self.level),))
        if member == "Get":
            return new_error(msg, service.UNKNOWN_PROPERTY, "s", ("no property %s" % ".".join(map(str, args)),))
        return new_error(msg, service.UNKNOWN_METHOD, "s", ("no method %s.%s at %s" % (
            f.get(HeaderFields.interface), member, f.get(HeaderFields.path)),))

    def serve(self):
        """A's thread: every method call answered (Get, GetAll), until the process ends."""
        while True:
            try:
                msg = self.conn.receive()
            except (ConnectionError, OSError):
                return
            h = msg.header
            if h.message_type == MessageType.method_call and not h.flags & MessageFlag.no_reply_expected:
                self.send(self.answer(msg))


def client(connect, check, op):
    """The operation of `property-storm`: `connect()` opens a bus connection,
    `check(reply, what)` raises on an error reply."""
    _, n = op
    seen = st.Seen()
    obj = _Object(connect())
    threading.Thread(target=obj.serve, name="storm", daemon=True).start()
    b = connect()
    rule = subscriptions.match_rule(st.CHANGED_RULE)
    check(b.send_and_get_reply(message_bus.AddMatch(rule)), "AddMatch")
    queue = deque()  # unbounded: filter()'s own default (bufsize=1) would keep only the newest
    b.filter(rule, queue=queue)

    def storm():
        for i in range(n):
            obj.set_level(st.level(i))
        deadline = time.monotonic() + st.SETTLE_S
        while not seen.done(n):
            try:
                msg = b.recv_until_filtered(queue, timeout=max(deadline - time.monotonic(), 0))
            except TimeoutError:
                break  # the check says what was lost
            seen.take({k: v for k, (_sig, v) in msg.body[1].items()})
        return seen.digest(HOLDER, n)
    storm.keep = (obj, b)
    return storm
