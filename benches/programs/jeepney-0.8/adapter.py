#!/usr/bin/env python3
"""dbus-matrix adapter for jeepney (pure-Python D-Bus), its blocking API
(jeepney.io.blocking), on Debian's interpreter and python3-jeepney.

A program, not a Cargo package (matrix.toml `program`): it speaks the
adapter contract through benches/programs/python/dbus_matrix_py."""

import os
import sys
from collections import deque

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "python"))

import jeepney  # noqa: E402
from jeepney import (DBusAddress, HeaderFields, MatchRule, Message, MessageFlag,  # noqa: E402
                     MessageType, Properties, message_bus, new_error, new_method_call,
                     new_method_return, new_signal)
from jeepney.io.blocking import DBusConnection, prep_socket  # noqa: E402

from dbus_matrix_py import canon, contract, service  # noqa: E402

import apps  # noqa: E402  (beside this file)
import storms  # noqa: E402  (beside this file)
import subscriptions  # noqa: E402  (beside this file)

NO_P2P = ("jeepney 0.8 has no peer-to-peer connection: jeepney.io.blocking.DBusConnection "
          "always says Hello to a bus when it opens, and there is no server side to accept one")
# Why `proxy/startup/<n>` (introspect, parse, build a proxy per object) cannot run here.
NO_INTROSPECTION_PARSER = (
    "jeepney 0.8 has no run-time introspection parser: Introspect (jeepney.wrappers.Introspectable) gives "
    "the XML as a string, and only jeepney/bindgen.py parses it (code_from_xml with its Interface and Method "
    "classes, child nodes ignored), to write the Python source of MessageGenerator classes into a file for "
    "the `python -m jeepney.bindgen` tool, so there is nothing to build a Proxy from at run time")
STARTUP = "proxy-startup"
DO_NOT_QUEUE = 4
PRIMARY_OWNER = 1


def _check_reply(reply, what):
    if reply.header.message_type == MessageType.error:
        name = reply.header.fields.get(HeaderFields.error_name)
        raise RuntimeError("%s: %s %s" % (what, name, reply.body))
    return reply.body


def _ping(emitter):
    return new_signal(emitter, canon.SIGNAL, "s", (canon.SIGNAL_TEXT,))


def _read_fd(msg):
    """ReadFd(h) -> t (ipc/fd_passing.rs): the whole file with pread from offset 0, then closed."""
    f = msg.header.fields
    if f.get(HeaderFields.member) != "ReadFd":
        return new_error(msg, service.UNKNOWN_METHOD, "s", ("no method %s.%s" % (canon.FD_INTERFACE,
                                                                                f.get(HeaderFields.member)),))
    if f.get(HeaderFields.signature, "") != "h":
        return new_error(msg, service.INVALID_ARGS, "s", ("ReadFd takes \"h\"",))
    with msg.body[0] as received:
        try:
            digest = canon.read_fd_digest(received.fileno())
        except OSError as e:  # over canon.FD_READ_LIMIT, or unreadable
            return new_error(msg, service.INVALID_ARGS, "s", (str(e),))
    return new_method_return(msg, "t", (digest,))


class Jeepney:
    # contract.py: the opt-in ops (canon.OPT_IN_FAMILIES) this adapter implements.
    IMPLEMENTS = ("in-flight", "idle-connections", "fd-passing", "property-get-all",
                  "get-managed-objects") + subscriptions.KINDS + apps.KINDS + storms.KINDS
    id = "jeepney-0.8"
    library = "jeepney"
    version = jeepney.__version__
    runtime = "blocking: jeepney.io.blocking on the calling thread"

    # --- codec -----------------------------------------------------------
    def unsupported_codec(self, kind, name):
        return None

    def marshal(self, body):
        kind, values = body
        if kind == "units":
            args = []
            for s, t, st, dict_, at, as_ in values:
                args += [s, t, st, dict_, at, as_]
        else:
            args = [[(k, ("s", v)) for k, v in values]]
        emitter = DBusAddress(canon.PATH, interface=canon.INTERFACE)
        msg = new_signal(emitter, canon.MEMBER, canon.signature(body), tuple(args))
        return msg.serialise(serial=canon.SERIAL)

    def canonical_bytes(self, body):
        # demarshal input: jeepney's own marshal output, which the runner
        # decodes with the reference decoder (`emit`) before the first round.
        return self.marshal(body)

    def demarshal(self, data, shape, d):
        body = Message.from_buffer(data).body
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
            for k, (sig, v) in entries.items():
                if sig != "s":
                    raise RuntimeError("a{sv} value of signature %r, not a string" % sig)
                d.str(k)
                d.str(v)
            d.len(len(entries))

    # --- IPC ---------------------------------------------------------------
    def unsupported_ipc(self, op, p2p):
        if op[0] == STARTUP:
            return NO_INTROSPECTION_PARSER
        return NO_P2P if p2p else None

    def _connect(self, t, enable_fds=False):
        # enable_fds: NEGOTIATE_UNIX_FD in the SASL exchange (the server's, and call/fd-passing's client).
        # What open_dbus_connection does (SASL, then Hello in DBusConnection), on the socket's
        # path rather than the address: jeepney decodes an address's %XX escapes byte by byte
        # as Latin-1 characters, so a non-ASCII letter in $TMPDIR named another path (issue 42, 3).
        return DBusConnection(prep_socket(t["socket"], enable_fds, timeout=1.0), enable_fds)

    def idle_connection(self, t):
        """open_dbus_connection (SASL, Hello); the returned function closes it."""
        return self._connect(t).close

    def serve(self, t, ready):
        conn = self._connect(t, enable_fds=True)
        name = t["service_name"]
        owned = _check_reply(conn.send_and_get_reply(message_bus.RequestName(name, DO_NOT_QUEUE)), "RequestName")
        if owned[0] != PRIMARY_OWNER:
            raise RuntimeError("could not own %s (RequestName answered %d)" % (name, owned[0]))
        ready()
        while True:
            msg = conn.receive()
            h = msg.header
            if h.message_type != MessageType.method_call:
                continue
            f = h.fields
            if f.get(HeaderFields.interface) == canon.FD_INTERFACE and not h.flags & MessageFlag.no_reply_expected:
                conn.send(_read_fd(msg))
                continue
            # jeepney has no object layer: property/get-all and get-managed-objects answered by hand too.
            call = (f.get(HeaderFields.path), f.get(HeaderFields.interface), f.get(HeaderFields.member),
                    f.get(HeaderFields.signature, ""), lambda: [a for a in msg.body if isinstance(a, str)])
            answer = service.props_route(*call) or service.route(*call)
            if h.flags & MessageFlag.no_reply_expected:
                continue
            if answer[0] == "bench":
                sig, body = service.bench_reply(answer[1], msg.body, name)
                reply = new_method_return(msg, sig or None, body)
            elif answer[0] == "items":
                reply = new_method_return(msg, "v", (service.items_value(),))
            elif answer[0] == "reply":
                reply = new_method_return(msg, answer[1] or None, answer[2])
            else:
                reply = new_error(msg, answer[1], "s", (answer[2],))
            conn.send(reply)

    def subscriber(self, t, extra_rules):
        conn = self._connect(t)
        _check_reply(conn.send_and_get_reply(message_bus.AddMatch(canon.ping_rule())), "AddMatch")
        for i in range(extra_rules):
            _check_reply(conn.send_and_get_reply(message_bus.AddMatch(canon.nonmatching_rule(i))), "AddMatch")
        rule = MatchRule(type="signal", interface=canon.BENCH_INTERFACE, member=canon.SIGNAL,
                         path=canon.OBJECT_PATH)
        queue = deque()
        conn.filter(rule, queue=queue)

        def receive():
            msg = conn.recv_until_filtered(queue)
            d = canon.Digest()
            d.str(msg.body[0])
            return d.finish()
        return receive

    def client(self, t, op):
        kind, arg = op
        empty = canon.Digest().finish()
        emitter = DBusAddress(canon.OBJECT_PATH, interface=canon.BENCH_INTERFACE)
        if kind == "connect-hello":
            def hello():
                self._connect(t).close()
                return empty
            return hello
        if kind == "connect-marshal-send":
            def marshal_send():
                conn = self._connect(t)
                body = canon.mixed()
                args = []
                for s, tt, st, dict_, at, as_ in body[1]:
                    args += [s, tt, st, dict_, at, as_]
                conn.send(new_signal(DBusAddress(canon.PATH, interface=canon.INTERFACE), canon.MEMBER,
                                     canon.signature(body), tuple(args)))
                conn.close()
                return empty
            return marshal_send
        if kind in subscriptions.KINDS:
            return subscriptions.client(lambda: self._connect(t), _check_reply, op)
        if kind in storms.KINDS:
            return storms.client(lambda: self._connect(t), _check_reply, op)
        if kind in apps.KINDS:
            return apps.client(lambda: self._connect(t), _check_reply, t, op)
        conn = self._connect(t)
        addr = DBusAddress(canon.OBJECT_PATH, bus_name=t["service_name"], interface=canon.BENCH_INTERFACE)
        if kind == "call":
            member = arg
            sig_in = next(i for _, m, i, _ in canon.METHODS if m == member)
            args = {"i": (canon.IN_INT,), "s": (canon.IN_STRING if member == "InString" else canon.OUT_STRING,),
                    "": ()}[sig_in]

            def call():
                body = _check_reply(conn.send_and_get_reply(
                    new_method_call(addr, member, sig_in or None, args)), member)
                d = canon.Digest()
                if member in ("OutInt", "InOutInt"):
                    d.i32(body[0])
                elif member in ("OutString", "InOutString"):
                    d.str(body[0])
                elif member == "ObjectRef":
                    d.str(body[0][0])
                    d.str(body[0][1])
                elif member == "RelationSet":
                    for name, path in body[0]:
                        d.str(name)
                        d.str(path)
                    d.len(len(body[0]))
                return d.finish()
            return call
        if kind == "in-flight":
            def in_flight():
                # Every call sent with a serial from the connection's own counter (what
                # send_and_get_reply does), then replies received and matched by reply serial.
                # Between two sends, what has already arrived is taken without waiting
                # (receive(timeout=0)): a bus that cannot write replies to a client that
                # does not read gives up on it (busd disconnects it after 100 ms).
                index_of = {}
                replies = [None] * arg
                left = [arg]

                def take(msg):
                    i = index_of.pop(msg.header.fields.get(HeaderFields.reply_serial), None)
                    if i is not None:  # else the bus's own signals (NameAcquired)
                        replies[i] = _check_reply(msg, "InOutInt")[0]
                        left[0] -= 1
                for i in range(arg):
                    serial = next(conn.outgoing_serial)
                    index_of[serial] = i
                    conn.send(new_method_call(addr, "InOutInt", "i", (i,)), serial=serial)
                    while True:
                        try:
                            take(conn.receive(timeout=0))
                        except TimeoutError:
                            break
                while left[0]:
                    take(conn.receive())
                d = canon.Digest()
                for r in replies:
                    d.i32(r)
                d.len(arg)
                return d.finish()
            return in_flight
        if kind == "fd-passing":
            fd_conn = self._connect(t, enable_fds=True)
            fd_addr = DBusAddress(canon.OBJECT_PATH, bus_name=t["service_name"], interface=canon.FD_INTERFACE)
            memfd = canon.payload_memfd(arg)

            def read_fd():
                # jeepney duplicates nothing: the fd number goes out with SCM_RIGHTS (the kernel copies it).
                return _check_reply(fd_conn.send_and_get_reply(
                    new_method_call(fd_addr, "ReadFd", "h", (memfd,))), "ReadFd")[0]
            return read_fd
        if kind == "property-get-all":
            # jeepney's Properties helper builds the GetAll call; the reply's a{sv} is a dict of (signature, value).
            props = Properties(DBusAddress(canon.props_path(arg), bus_name=t["service_name"],
                                           interface=canon.GET_ALL_INTERFACE))

            def get_all():
                body = _check_reply(conn.send_and_get_reply(props.get_all()), "GetAll")
                return canon.properties_digest(body[0].items())
            return get_all
        if kind == "get-managed-objects":
            # jeepney has no ObjectManager helper: a plain method call.
            manager = DBusAddress(canon.objects_path(arg), bus_name=t["service_name"],
                                  interface=canon.OBJECT_MANAGER_INTERFACE)

            def managed_objects():
                body = _check_reply(conn.send_and_get_reply(new_method_call(manager, "GetManagedObjects")),
                                    "GetManagedObjects")
                # Only the benchmark interface counts (a server may list the standard ones too).
                return canon.managed_objects_digest(
                    (path, interfaces[canon.ITEM_INTERFACE].items())
                    for path, interfaces in body[0].items() if canon.ITEM_INTERFACE in interfaces)
            return managed_objects
        if kind == "echo-bytes":
            payload = canon.echo_payload(arg)

            def echo():
                body = _check_reply(conn.send_and_get_reply(
                    new_method_call(addr, canon.ECHO_BYTES, "ay", (payload,))), canon.ECHO_BYTES)
                d = canon.Digest()
                d.bytes(body[0])
                return d.finish()
            return echo
        if kind in ("property-get", "property-get-x100"):
            reads = 100 if kind == "property-get-x100" else 1
            props = Properties(addr)

            def get():
                d = canon.Digest()
                for _ in range(reads):
                    sig, value = _check_reply(conn.send_and_get_reply(props.get(canon.PROPERTY)), "Get")[0]
                    if sig != "a(ss)":
                        raise RuntimeError("Items came as %r, not a(ss)" % sig)
                    canon.digest_items(d, value)
                return d.finish()
            return get
        if kind == "emit-receive":
            receiver = self.subscriber(t, 0)

            def emit_receive():
                conn.send(_ping(emitter))
                return receiver()
            return emit_receive
        if kind in ("fanout", "nonmatching-rules"):
            def emit():
                conn.send(_ping(emitter))
                return empty
            return emit
        raise RuntimeError("no client for %s" % kind)

    def cold_start(self, t):
        conn = self._connect(t)
        addr = DBusAddress(canon.OBJECT_PATH, bus_name=t["service_name"], interface=canon.BENCH_INTERFACE)
        sig, value = _check_reply(conn.send_and_get_reply(Properties(addr).get(canon.PROPERTY)), "Get")[0]
        conn.close()
        return [tuple(pair) for pair in value]


if __name__ == "__main__":
    contract.main(Jeepney())
