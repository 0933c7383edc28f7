"""jeepney's arm of the subscription families (issue 31; definitions in
harness/src/ipc/subscription.rs, checks in dbus_matrix_py.subscription).

jeepney.io.blocking reads a connection only inside a call on it (receive,
recv_until_filtered, send_and_get_reply), so the subscriber of a burst is
truly not read while the burst is emitted: the signals wait in the bus's
queue and the socket. A subscription is jeepney's `MatchRule` of the
canon's rule text (arg0 through `add_arg_condition`), sent with
`message_bus.AddMatch` and used as the local filter into an unbounded deque
(`filter`'s default queue keeps only the newest message)."""

from collections import deque

from jeepney import DBusAddress, MatchRule, message_bus, new_signal

from dbus_matrix_py import canon
from dbus_matrix_py import subscription as sub

DO_NOT_QUEUE = 4
KINDS = ("match-churn", "burst", "delivered-broad", "delivered-arg0", "name-owner-churn-broad",
         "name-owner-churn-arg0")


def match_rule(text):
    """jeepney's MatchRule of the canon's rule text (argN through add_arg_condition)."""
    fields = sub.rule_fields(text)
    args = {k: fields.pop(k) for k in list(fields) if k.startswith("arg")}
    rule = MatchRule(**fields)
    for k, v in args.items():
        rule.add_arg_condition(int(k[3:]), v)
    return rule


def _subscribe(connect, check, rule):
    """A second connection, its rule on the bus (AddMatch awaited) and as a local filter."""
    conn = connect()
    rule = match_rule(rule)
    check(conn.send_and_get_reply(message_bus.AddMatch(rule)), "AddMatch")
    queue = deque()  # unbounded: filter()'s own default (bufsize=1) would keep only the newest
    conn.filter(rule, queue=queue)
    return conn, queue


def client(connect, check, op):
    """The operation of a subscription op: `connect()` opens a bus connection,
    `check(reply, what)` raises on an error reply."""
    kind, n = op
    tx = connect()
    emitter = DBusAddress(canon.OBJECT_PATH, interface=canon.BENCH_INTERFACE)

    def ping(text):
        tx.send(new_signal(emitter, canon.SIGNAL, "s", (text,)))

    if kind == "match-churn":
        # The bus's AddMatch and RemoveMatch of the rule text, each reply awaited.
        def churn():
            check(tx.send_and_get_reply(message_bus.AddMatch(sub.CHURN_RULE)), "AddMatch")
            check(tx.send_and_get_reply(message_bus.RemoveMatch(sub.CHURN_RULE)), "RemoveMatch")
            return canon.Digest().finish()
        return churn
    if kind == "burst":
        rx, queue = _subscribe(connect, check, canon.ping_rule())
        texts = sub.burst_texts(n)

        def burst():
            for text in texts:
                ping(text)
            ping(sub.BURST_END)
            received = []
            while True:
                text = rx.recv_until_filtered(queue).body[0]
                if text == sub.BURST_END:
                    return sub.burst_digest(received, n)
                received.append(text)
        return burst
    if kind.startswith("delivered-"):
        scope = sub.scope_of(kind)
        rx, queue = _subscribe(connect, check, sub.delivered_rule(scope))
        texts = sub.delivered_texts()

        def delivered():
            for text in texts:
                ping(text)
            received = []
            while not received or received[-1] != canon.SIGNAL_TEXT:
                received.append(rx.recv_until_filtered(queue).body[0])
            return sub.delivered_digest(received, scope)
        return delivered
    if kind.startswith("name-owner-churn-"):
        scope = sub.scope_of(kind)
        names = sub.churn_names()
        rx, queue = _subscribe(connect, check, sub.name_owner_rule(scope))

        def name_churn():
            for name in [names[0]] * sub.NAME_CHURNS + [names[1]]:
                check(tx.send_and_get_reply(message_bus.RequestName(name, DO_NOT_QUEUE)), "RequestName")
                check(tx.send_and_get_reply(message_bus.ReleaseName(name)), "ReleaseName")
            received = []
            while not received or not sub.is_sentinel_release(*received[-1], names):
                name, _old, new = rx.recv_until_filtered(queue).body
                received.append((name, new))
            return sub.name_churn_digest(received, scope, names)
        return name_churn
    raise RuntimeError("no subscription client for %s" % kind)
