"""dbus-matrix adapter for dbus-fast (asyncio; "the fastest Python D-Bus
library", Cython-compiled), from PyPI into a venv under the build directory
(adapter.sh makes it; never the system site-packages).

A program, not a Cargo package (matrix.toml `program`): it speaks the
adapter contract through benches/programs/python/dbus_matrix_py. asyncio is
dbus-fast's only API, so every operation is a coroutine on one event loop and
the contract's synchronous operation is `loop.run_until_complete` of it (the
runtime string says so)."""

import asyncio
import importlib.metadata
import io
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "python"))

import dbus_fast.message  # noqa: E402
from dbus_fast import Message, MessageType, NameFlag, RequestNameReply, Variant  # noqa: E402
from dbus_fast._private.unmarshaller import Unmarshaller  # noqa: E402
from dbus_fast.aio import MessageBus  # noqa: E402
from dbus_fast.introspection import Node  # noqa: E402
from dbus_fast.service import (PropertyAccess, ServiceInterface, dbus_method, dbus_property,  # noqa: E402
                               dbus_signal)

from dbus_matrix_py import canon, contract, service  # noqa: E402

import apps  # noqa: E402  (beside this file)
import props  # noqa: E402  (beside this file)
import storms  # noqa: E402  (beside this file)
import subscriptions  # noqa: E402  (beside this file)

VERSION = importlib.metadata.version("dbus-fast")
COMPILED = dbus_fast.message.__file__.endswith(".so")
NO_P2P = ("dbus-fast has no peer-to-peer connection: MessageBus.connect() always sends Hello and waits "
          "for a bus's reply, and there is no server side to accept a connection")
# call/in-flight sizes whose calls, written at once, fill the socket's send buffer.
WRITER_FULL_FROM = 1000
WRITER_FULL = ("dbus-fast %s cannot have 1000 calls in flight: its message writer "
               "(dbus_fast/aio/message_bus.py, _MessageWriter.write_callback) sends the queued messages "
               "in a loop and takes the BlockingIOError of a full socket send buffer (EAGAIN) for a "
               "broken connection, which it finalizes; 1000 calls queued at once fill the buffer before "
               "the bus reads them (measured: the batch fails on dbus-daemon, dbus-broker and busd, "
               "100 calls do not)" % VERSION)
# property/changed-storm sizes whose signals, sent at once, fill the socket's send buffer.
STORM_WRITER_FULL = ("dbus-fast %s cannot emit 1000 PropertiesChanged at once: its message writer "
                     "(dbus_fast/aio/message_bus.py, _MessageWriter.write_callback) takes the BlockingIOError "
                     "of a full socket send buffer (EAGAIN) for a broken connection, which it finalizes; 1000 "
                     "signals queued in one loop iteration fill the buffer before the bus reads them "
                     "(measured: the storm fails on dbus-daemon and busd, 100 signals do not)" % VERSION)
BUS = "org.freedesktop.DBus"
BUS_PATH = "/org/freedesktop/DBus"


async def _round_trip(bus):
    """A call the bus answers only after reading all that was sent before it."""
    _check(await bus.call(Message(destination=BUS, path=BUS_PATH, interface=BUS, member="NameHasOwner",
                                  signature="s", body=[BUS])), "NameHasOwner")


def _check(reply, what):
    if reply.message_type == MessageType.ERROR:
        raise RuntimeError("%s: %s %s" % (what, reply.error_name, reply.body))
    return reply.body


def _args(body):
    """The signal's arguments as dbus-fast takes them: lists for structs and
    arrays, dicts for a{..} (insertion order is wire order), Variant for v."""
    kind, values = body
    if kind == "asv":
        return [{k: Variant("s", v) for k, v in values}]
    args = []
    for s, t, st, dict_, at, as_ in values:
        args += [s, t, list(st), dict(dict_), at, as_]
    return args


def _ping():
    return Message.new_signal(canon.OBJECT_PATH, canon.BENCH_INTERFACE, canon.SIGNAL, "s",
                              [canon.SIGNAL_TEXT])


def _bench_interface(service_name):
    """The benchmark interface as a dbus-fast ServiceInterface (its object
    server answers Introspect, Peer and Properties itself)."""

    class Bench(ServiceInterface):
        def __init__(self):
            super().__init__(canon.BENCH_INTERFACE)

        @dbus_method()
        def Void(self):
            pass

        @dbus_method()
        def InInt(self, value: "i"):  # noqa: F821
            pass

        @dbus_method()
        def OutInt(self) -> "i":  # noqa: F821
            return canon.OUT_INT

        @dbus_method()
        def InOutInt(self, value: "i") -> "i":  # noqa: F821
            return value + 1

        @dbus_method()
        def InString(self, value: "s"):  # noqa: F821
            pass

        @dbus_method()
        def OutString(self) -> "s":  # noqa: F821
            return canon.OUT_STRING

        @dbus_method()
        def InOutString(self, value: "s") -> "s":  # noqa: F821
            return value

        @dbus_method()
        def ObjectRef(self) -> "(so)":  # noqa: F821
            return [service_name, canon.object_path(0)]

        @dbus_method()
        def RelationSet(self) -> "a(so)":  # noqa: F821
            return [[service_name, p] for p in canon.object_paths()]

        @dbus_method()
        def EchoBytes(self, value: "ay") -> "ay":  # noqa: F821
            return value

        @dbus_property(access=PropertyAccess.READ)
        def Items(self) -> "a(ss)":  # noqa: F821
            return [list(pair) for pair in canon.items()]

        # Declared for introspection only: clients emit Ping, the server does not.
        @dbus_signal()
        def Ping(self) -> "s":  # noqa: F821
            return canon.SIGNAL_TEXT

    return Bench()


class _FdInterface(ServiceInterface):
    """call/fd-passing (ipc/fd_passing.rs): ReadFd(h) -> t on the second interface. On a
    connection made with negotiate_unix_fd, dbus-fast hands the method the received fd
    as an int, which the method owns: closed after the read."""

    def __init__(self):
        super().__init__(canon.FD_INTERFACE)

    @dbus_method()
    def ReadFd(self, fd: "h") -> "t":  # noqa: F821
        try:
            return canon.read_fd_digest(fd)
        finally:
            os.close(fd)


def _invalid_args(msg):
    """dbus-fast answers a known method called with the wrong signature with
    UnknownMethod; standard tools expect InvalidArgs (docs/scenarios.md), so
    the shared routing decides those before the object server sees them."""
    if msg.message_type != MessageType.METHOD_CALL or msg.path != canon.OBJECT_PATH:
        return None
    if msg.interface not in (None, canon.BENCH_INTERFACE):
        return None
    answer = service.route(msg.path, msg.interface, msg.member, msg.signature, lambda: [])
    if answer[0] == "error" and answer[1] == service.INVALID_ARGS:
        return Message.new_error(msg, answer[1], answer[2])
    return None


class DbusFast:
    # contract.py: the opt-in ops (canon.OPT_IN_FAMILIES) this adapter implements.
    IMPLEMENTS = ("in-flight", "idle-connections", "fd-passing", "property-get-all",
                  "get-managed-objects") + subscriptions.KINDS + apps.KINDS + storms.KINDS
    id = "dbus-fast-5.2"
    library = "dbus-fast"
    version = VERSION
    runtime = ("asyncio: dbus_fast.aio.MessageBus on one event loop (asyncio is the library's only API), "
               "each operation one loop.run_until_complete; %s" % (
                   "Cython-compiled modules" if COMPILED else "pure-Python modules (not compiled)"))

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)

    def _run(self, coro):
        return self.loop.run_until_complete(coro)

    # --- codec -----------------------------------------------------------
    def unsupported_codec(self, kind, name):
        return None

    def marshal(self, body):
        # Message._marshall is what MessageBus.send writes; no connection needed.
        msg = Message(path=canon.PATH, interface=canon.INTERFACE, member=canon.MEMBER,
                      message_type=MessageType.SIGNAL, signature=canon.signature(body),
                      body=_args(body), serial=canon.SERIAL)
        return bytes(msg._marshall(False))

    def canonical_bytes(self, body):
        # demarshal input: dbus-fast's own marshal output, which the runner
        # decodes with the reference decoder (`emit`) before the first round.
        return self.marshal(body)

    def demarshal(self, data, shape, d):
        # The Unmarshaller the connection reads with, over a byte stream.
        body = Unmarshaller(io.BytesIO(data), negotiate_unix_fd=False).unmarshall().body
        if shape == "units":
            for u in range(0, len(body), 6):
                s, t, st, dict_, at, as_ = body[u:u + 6]
                d.str(s)
                d.u64(t)
                d.u64(st[0])
                d.str(st[1])
                for k, v in dict_.items():
                    d.str(k)
                    d.i32(v)
                d.len(len(dict_))
                for x in at:
                    d.u64(x)
                d.len(len(at))
                for x in as_:
                    d.str(x)
                d.len(len(as_))
        else:
            entries = body[0]
            for k, v in entries.items():
                if v.signature != "s":
                    raise RuntimeError("a{sv} value of signature %r, not a string" % v.signature)
                d.str(k)
                d.str(v.value)
            d.len(len(entries))

    # --- IPC ---------------------------------------------------------------
    def unsupported_ipc(self, op, p2p):
        if p2p:
            return NO_P2P
        if op[0] == "in-flight" and op[1] >= WRITER_FULL_FROM:
            return WRITER_FULL
        if op[0] == storms.KINDS[0] and op[1] >= WRITER_FULL_FROM:
            return STORM_WRITER_FULL
        return None

    async def _connect(self, t, negotiate_unix_fd=False):
        # negotiate_unix_fd: NEGOTIATE_UNIX_FD in the SASL exchange (the server's, and call/fd-passing's client).
        return await MessageBus(bus_address=t["address"], negotiate_unix_fd=negotiate_unix_fd).connect()

    def idle_connection(self, t):
        """MessageBus.connect (SASL, Hello); the returned function disconnects it."""
        bus = self._run(self._connect(t))

        def close():
            bus.disconnect()
            self._run(bus.wait_for_disconnect())
        return close

    def serve(self, t, ready):
        async def serve():
            bus = await self._connect(t, negotiate_unix_fd=True)
            bus.add_message_handler(_invalid_args)
            bus.export(canon.OBJECT_PATH, _bench_interface(t["service_name"]))
            bus.export(canon.OBJECT_PATH, _FdInterface())
            await props.export(bus, lambda: _round_trip(bus))
            owned = await bus.request_name(t["service_name"], NameFlag.DO_NOT_QUEUE)
            if owned != RequestNameReply.PRIMARY_OWNER:
                raise RuntimeError("could not own %s (RequestName answered %s)" % (t["service_name"], owned))
            ready()
            await bus.wait_for_disconnect()
        self._run(serve())

    async def _add_match(self, bus, rule):
        _check(await bus.call(Message(destination=BUS, path=BUS_PATH, interface=BUS, member="AddMatch",
                                      signature="s", body=[rule])), "AddMatch")

    def subscriber(self, t, extra_rules):
        queue = asyncio.Queue()

        def on_message(msg):
            if (msg.message_type == MessageType.SIGNAL and msg.interface == canon.BENCH_INTERFACE
                    and msg.member == canon.SIGNAL and msg.path == canon.OBJECT_PATH):
                queue.put_nowait(msg)
            return None

        async def subscribe():
            bus = await self._connect(t)
            bus.add_message_handler(on_message)
            await self._add_match(bus, canon.ping_rule())
            for i in range(extra_rules):
                await self._add_match(bus, canon.nonmatching_rule(i))
            return bus
        self._run(subscribe())

        def receive():
            msg = self._run(queue.get())
            d = canon.Digest()
            d.str(msg.body[0])
            return d.finish()
        return receive

    def _interface(self, bus, t):
        # A proxy from the introspection data the program already has (no
        # Introspect call), as a dbus-fast user with a known interface writes it.
        node = Node.parse(service.introspection_xml_of(canon.OBJECT_PATH))
        return bus.get_proxy_object(t["service_name"], canon.OBJECT_PATH, node).get_interface(
            canon.BENCH_INTERFACE)

    def client(self, t, op):
        kind, arg = op
        empty = canon.Digest().finish()
        if kind == "connect-hello":
            async def hello():
                bus = await self._connect(t)
                bus.disconnect()
                await bus.wait_for_disconnect()
                return empty
            return lambda: self._run(hello())
        if kind == "connect-marshal-send":
            body = canon.mixed()

            async def marshal_send():
                bus = await self._connect(t)
                await bus.send(Message(path=canon.PATH, interface=canon.INTERFACE, member=canon.MEMBER,
                                       message_type=MessageType.SIGNAL, signature=canon.signature(body),
                                       body=_args(body)))
                bus.disconnect()
                await bus.wait_for_disconnect()
                return empty
            return lambda: self._run(marshal_send())
        if kind == "fd-passing":
            fd_bus = self._run(self._connect(t, negotiate_unix_fd=True))
            memfd = canon.payload_memfd(arg)

            async def read_fd():
                # The body holds the fd's index in unix_fds; dbus-fast sends the fds with SCM_RIGHTS.
                reply = await fd_bus.call(Message(destination=t["service_name"], path=canon.OBJECT_PATH,
                                                  interface=canon.FD_INTERFACE, member="ReadFd", signature="h",
                                                  body=[0], unix_fds=[memfd]))
                return _check(reply, "ReadFd")[0]
            return lambda: self._run(read_fd())
        if kind in subscriptions.KINDS:
            return subscriptions.client(self._run, lambda: self._connect(t), op)
        if kind in storms.KINDS:
            return storms.client(self._run, lambda: self._connect(t), op)
        if kind in apps.KINDS:
            return apps.client(self._run, lambda: self._connect(t), t, op, lambda bus: self._interface(bus, t))
        bus = self._run(self._connect(t))
        if kind in ("property-get-all", "get-managed-objects"):
            op = props.client(bus, t, kind, arg)
            return lambda: self._run(op())
        if kind in ("call", "in-flight", "echo-bytes", "property-get", "property-get-x100"):
            iface = self._interface(bus, t)
        if kind == "call":
            member = arg
            sig_in = next(i for _, m, i, _ in canon.METHODS if m == member)
            args = {"i": [canon.IN_INT], "s": [canon.IN_STRING if member == "InString" else canon.OUT_STRING],
                    "": []}[sig_in]
            # The proxy's snake-case method: OutInt -> call_out_int.
            snake = "".join("_" + c.lower() if c.isupper() else c for c in member)
            proxy_call = getattr(iface, "call" + snake)

            async def call():
                result = await proxy_call(*args)
                d = canon.Digest()
                if member in ("OutInt", "InOutInt"):
                    d.i32(result)
                elif member in ("OutString", "InOutString"):
                    d.str(result)
                elif member == "ObjectRef":
                    d.str(result[0])
                    d.str(result[1])
                elif member == "RelationSet":
                    for name, path in result:
                        d.str(name)
                        d.str(path)
                    d.len(len(result))
                return d.finish()
            return lambda: self._run(call())
        if kind == "in-flight":
            async def in_flight():
                # gather's tasks each run to their first await in one loop iteration, and
                # each has sent its call (MessageBus.call) by then: all n are in flight
                # before any reply is read.
                replies = await asyncio.gather(*(iface.call_in_out_int(i) for i in range(arg)))
                d = canon.Digest()
                for r in replies:
                    d.i32(r)
                d.len(arg)
                return d.finish()
            return lambda: self._run(in_flight())
        if kind == "echo-bytes":
            payload = canon.echo_payload(arg)

            async def echo():
                d = canon.Digest()
                d.bytes(await iface.call_echo_bytes(payload))
                return d.finish()
            return lambda: self._run(echo())
        if kind in ("property-get", "property-get-x100"):
            reads = 100 if kind == "property-get-x100" else 1

            async def get():
                # Each get_items() is one Properties.Get (dbus-fast's proxy does not cache).
                d = canon.Digest()
                for _ in range(reads):
                    canon.digest_items(d, await iface.get_items())
                return d.finish()
            return lambda: self._run(get())
        if kind == "emit-receive":
            receiver = self.subscriber(t, 0)

            def emit_receive():
                self._run(bus.send(_ping()))
                return receiver()
            return emit_receive
        if kind in ("fanout", "nonmatching-rules"):
            async def emit():
                await bus.send(_ping())
                return empty
            return lambda: self._run(emit())
        raise RuntimeError("no client for %s" % kind)

    def cold_start(self, t):
        async def cold():
            bus = await self._connect(t)
            value = await self._interface(bus, t).get_items()
            bus.disconnect()
            await bus.wait_for_disconnect()
            return [tuple(pair) for pair in value]
        return self._run(cold())


if __name__ == "__main__":
    contract.main(DbusFast())
