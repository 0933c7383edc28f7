"""dbus-fast's arm of the subscription families (issue 31; definitions in
harness/src/ipc/subscription.rs, checks in dbus_matrix_py.subscription).

dbus-fast has no match-rule API of its own outside its proxies (their
`on_<signal>` handlers add a rule per proxy), so a subscription is what a
dbus-fast program without a proxy writes: the bus's AddMatch of the canon's
rule text through `MessageBus.call` (reply awaited) and a message handler
(`add_message_handler`) that takes the rule's signals into an unbounded
asyncio.Queue. The handler matches the rule's header fields, not its argN:
dbus-fast has no argument matching, so what the queue gets is what the bus
delivered. The library reads every connection whenever the event loop runs
(its reader is a loop callback), so in a burst the subscriber's socket is
read while the emitter awaits its sends; it is the program that does not
read (the queue), as zbus's streams. Names: `request_name` / `release_name`."""

import asyncio

from dbus_fast import Message, MessageType, NameFlag

from dbus_matrix_py import canon
from dbus_matrix_py import subscription as sub

KINDS = ("match-churn", "burst", "delivered-broad", "delivered-arg0", "name-owner-churn-broad",
         "name-owner-churn-arg0")
BUS = "org.freedesktop.DBus"
BUS_PATH = "/org/freedesktop/DBus"
# A rule's header keys as dbus-fast Message attributes.
ATTRIBUTES = {"sender": "sender", "interface": "interface", "member": "member", "path": "path"}


def _check(reply, what):
    if reply.message_type == MessageType.ERROR:
        raise RuntimeError("%s: %s %s" % (what, reply.error_name, reply.body))
    return reply.body


async def _bus_call(bus, member, rule):
    _check(await bus.call(Message(destination=BUS, path=BUS_PATH, interface=BUS, member=member,
                                  signature="s", body=[rule])), member)


async def subscribe(bus, rule):
    """AddMatch of `rule` (awaited) and a handler queueing the signals whose header the rule matches."""
    fields = sub.rule_fields(rule)
    if fields.pop("type", None) != "signal":
        raise RuntimeError("match rule %r is not a signal rule" % rule)
    header = [(ATTRIBUTES[k], v) for k, v in fields.items() if not k.startswith("arg")]
    queue = asyncio.Queue()

    def on_message(msg):
        if msg.message_type == MessageType.SIGNAL and all(getattr(msg, a) == v for a, v in header):
            queue.put_nowait(msg.body)
        return None
    bus.add_message_handler(on_message)
    await _bus_call(bus, "AddMatch", rule)
    return queue


def client(run, connect, op):
    """The operation of a subscription op: `run(coro)` runs it on the adapter's
    loop, `connect()` is the coroutine that opens a bus connection."""
    kind, n = op
    tx = run(connect())

    async def ping(text):
        await tx.send(Message.new_signal(canon.OBJECT_PATH, canon.BENCH_INTERFACE, canon.SIGNAL, "s", [text]))

    if kind == "match-churn":
        async def churn():
            await _bus_call(tx, "AddMatch", sub.CHURN_RULE)
            await _bus_call(tx, "RemoveMatch", sub.CHURN_RULE)
            return canon.Digest().finish()
        return lambda: run(churn())
    rx = run(connect())
    if kind == "burst":
        queue = run(subscribe(rx, canon.ping_rule()))
        texts = sub.burst_texts(n)

        async def burst():
            for text in texts:
                await ping(text)
            await ping(sub.BURST_END)
            received = []
            while True:
                text = (await queue.get())[0]
                if text == sub.BURST_END:
                    return sub.burst_digest(received, n)
                received.append(text)
        return lambda: run(burst())
    if kind.startswith("delivered-"):
        scope = sub.scope_of(kind)
        queue = run(subscribe(rx, sub.delivered_rule(scope)))
        texts = sub.delivered_texts()

        async def delivered():
            for text in texts:
                await ping(text)
            received = []
            while not received or received[-1] != canon.SIGNAL_TEXT:
                received.append((await queue.get())[0])
            return sub.delivered_digest(received, scope)
        return lambda: run(delivered())
    if kind.startswith("name-owner-churn-"):
        scope = sub.scope_of(kind)
        names = sub.churn_names()
        queue = run(subscribe(rx, sub.name_owner_rule(scope)))

        async def name_churn():
            for name in [names[0]] * sub.NAME_CHURNS + [names[1]]:
                await tx.request_name(name, NameFlag.DO_NOT_QUEUE)
                await tx.release_name(name)
            received = []
            while not received or not sub.is_sentinel_release(*received[-1], names):
                name, _old, new = await queue.get()
                received.append((name, new))
            return sub.name_churn_digest(received, scope, names)
        return lambda: run(name_churn())
    raise RuntimeError("no subscription client for %s" % kind)
