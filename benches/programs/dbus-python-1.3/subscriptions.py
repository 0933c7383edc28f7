"""dbus-python's arm of the subscription families (issue 31; definitions in
harness/src/ipc/subscription.rs, checks in dbus_matrix_py.subscription).

A connection on the GLib main loop (dbus.mainloop.glib) is read only while
the program iterates the loop, so the subscriber of a burst is not read
while the burst is emitted: libdbus queues it unbounded once it is read.
A subscription is `add_signal_receiver` with the canon rule's fields as its
keywords (arg0 included: dbus-python puts it in the AddMatch it sends with
`add_match_string`, which blocks for the reply, and matches it again before
calling the handler). Match churn is `add_match_string` and
`remove_match_string`, the blocking forms (each waits for the bus's reply);
names are `request_name` / `release_name`, blocking calls to the bus."""

import dbus
import dbus.bus
import dbus.lowlevel
from gi.repository import GLib

from dbus_matrix_py import canon
from dbus_matrix_py import subscription as sub

KINDS = ("match-churn", "burst", "delivered-broad", "delivered-arg0", "name-owner-churn-broad",
         "name-owner-churn-arg0")
# A rule's keys as add_signal_receiver's keywords (argN keep their names).
KEYWORDS = {"sender": "bus_name", "interface": "dbus_interface", "member": "signal_name", "path": "path"}


def _iterate_until(done):
    ctx = GLib.MainContext.default()
    while not done():
        ctx.iteration(True)


def receive_with(conn, rule, handler):
    """`add_signal_receiver(handler, **the rule's fields)`: the AddMatch reply awaited."""
    fields = sub.rule_fields(rule)
    if fields.pop("type", None) != "signal":
        raise RuntimeError("match rule %r is not a signal rule" % rule)
    conn.add_signal_receiver(handler, **{KEYWORDS.get(k, k): v for k, v in fields.items()})


def client(connect, op):
    """The operation of a subscription op; `connect()` opens a bus connection."""
    kind, n = op
    tx = connect()

    def ping(text):
        msg = dbus.lowlevel.SignalMessage(canon.OBJECT_PATH, canon.BENCH_INTERFACE, canon.SIGNAL)
        msg.append(text, signature="s")
        tx.send_message(msg)

    if kind == "match-churn":
        def churn():
            tx.add_match_string(sub.CHURN_RULE)
            tx.remove_match_string(sub.CHURN_RULE)
            return canon.Digest().finish()
        return churn
    received = []
    if kind == "burst":
        end = []
        rx = connect()
        receive_with(rx, canon.ping_rule(),
                     lambda text: end.append(True) if text == sub.BURST_END else received.append(str(text)))
        texts = sub.burst_texts(n)

        def burst():
            for text in texts:
                ping(text)
            ping(sub.BURST_END)
            tx.flush()
            _iterate_until(lambda: end)
            got = received[:]
            del received[:], end[:]
            return sub.burst_digest(got, n)
        burst.rx = rx  # a BusConnection nobody references is closed: the subscriber lives with the op
        return burst
    if kind.startswith("delivered-"):
        scope = sub.scope_of(kind)
        rx = connect()
        receive_with(rx, sub.delivered_rule(scope), lambda text: received.append(str(text)))
        texts = sub.delivered_texts()

        def delivered():
            for text in texts:
                ping(text)
            tx.flush()
            _iterate_until(lambda: received and received[-1] == canon.SIGNAL_TEXT)
            got = received[:]
            del received[:]
            return sub.delivered_digest(got, scope)
        delivered.rx = rx  # a BusConnection nobody references is closed: the subscriber lives with the op
        return delivered
    if kind.startswith("name-owner-churn-"):
        scope = sub.scope_of(kind)
        names = sub.churn_names()
        rx = connect()
        receive_with(rx, sub.name_owner_rule(scope),
                     lambda name, _old, new: received.append((str(name), str(new))))

        def name_churn():
            for name in [names[0]] * sub.NAME_CHURNS + [names[1]]:
                tx.request_name(name, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
                tx.release_name(name)
            _iterate_until(lambda: received and sub.is_sentinel_release(*received[-1], names))
            got = received[:]
            del received[:]
            return sub.name_churn_digest(got, scope, names)
        name_churn.rx = rx  # a BusConnection nobody references is closed: the subscriber lives with the op
        return name_churn
    raise RuntimeError("no subscription client for %s" % kind)
