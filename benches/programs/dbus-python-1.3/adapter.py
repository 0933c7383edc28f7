#!/usr/bin/env python3
"""dbus-matrix adapter for dbus-python (libdbus bindings), its idiomatic
API: proxies from get_object (which introspect on their first call),
dbus.Interface, dbus.service.Object on the GLib main loop; Debian's
python3-dbus on Debian's interpreter.

A program, not a Cargo package (matrix.toml `program`): it speaks the
adapter contract through benches/programs/python/dbus_matrix_py."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "python"))

import dbus  # noqa: E402
import dbus.connection  # noqa: E402
import dbus.lowlevel  # noqa: E402
import dbus.mainloop.glib  # noqa: E402
import dbus.server  # noqa: E402
import dbus.service  # noqa: E402
from gi.repository import GLib  # noqa: E402

from dbus_matrix_py import canon, contract, service  # noqa: E402

import apps  # noqa: E402  (beside this file)
import storms  # noqa: E402  (beside this file)
import subscriptions  # noqa: E402  (beside this file)

# The line, not the machine's patch version: reasons end up in the committed coverage table.
NO_CODEC = ("dbus-python 1.3 exposes no wire bytes: dbus.lowlevel.Message has no marshal or "
            "demarshal (libdbus's dbus_message_marshal/demarshal are not bound)")
PROPS = "org.freedesktop.DBus.Properties"

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)


def _iterate_until(done):
    ctx = GLib.MainContext.default()
    while not done():
        ctx.iteration(True)


def _check_signature(msg, expected):
    """dbus-python calls a method with whatever arguments came: the
    signature check a D-Bus server owes its callers is ours."""
    got = msg.get_signature() or ""
    if got != expected:
        raise dbus.exceptions.DBusException(
            '%s takes arguments of signature "%s", not "%s"' % (msg.get_member(), expected, got),
            name=service.INVALID_ARGS)



def _p2p_address(socket):
    """`unix:path=SOCKET`, escaped as the D-Bus specification says (libdbus
    refuses a space): every byte outside [-0-9A-Za-z_/.\\*] as %XX."""
    safe = b"-_/.\\*"
    return "unix:path=" + "".join(
        chr(b) if (chr(b).isascii() and chr(b).isalnum()) or b in safe else "%%%02X" % b
        for b in os.fsencode(socket)
    )

class Bench(dbus.service.Object):
    """The benchmark service on one connection (dbus-python's object server)."""

    def __init__(self, conn, name):
        super().__init__(conn, canon.OBJECT_PATH)
        self.name = name

    @dbus.service.method(canon.BENCH_INTERFACE, in_signature="", out_signature="")
    def Void(self):
        pass

    @dbus.service.method(canon.BENCH_INTERFACE, in_signature="i", out_signature="", message_keyword="msg")
    def InInt(self, v, msg):
        _check_signature(msg, "i")
        pass

    @dbus.service.method(canon.BENCH_INTERFACE, in_signature="", out_signature="i")
    def OutInt(self):
        return canon.OUT_INT

    @dbus.service.method(canon.BENCH_INTERFACE, in_signature="i", out_signature="i", message_keyword="msg")
    def InOutInt(self, v, msg):
        _check_signature(msg, "i")
        return v + 1

    @dbus.service.method(canon.BENCH_INTERFACE, in_signature="s", out_signature="", message_keyword="msg")
    def InString(self, v, msg):
        _check_signature(msg, "s")
        pass

    @dbus.service.method(canon.BENCH_INTERFACE, in_signature="", out_signature="s")
    def OutString(self):
        return canon.OUT_STRING

    @dbus.service.method(canon.BENCH_INTERFACE, in_signature="s", out_signature="s", message_keyword="msg")
    def InOutString(self, v, msg):
        _check_signature(msg, "s")
        return v

    @dbus.service.method(canon.BENCH_INTERFACE, in_signature="", out_signature="(so)")
    def ObjectRef(self):
        return (self.name, dbus.ObjectPath(canon.object_path(0)))

    @dbus.service.method(canon.BENCH_INTERFACE, in_signature="", out_signature="a(so)")
    def RelationSet(self):
        return [(self.name, dbus.ObjectPath(p)) for p in canon.object_paths()]

    @dbus.service.method(canon.BENCH_INTERFACE, in_signature="ay", out_signature="ay", byte_arrays=True, message_keyword="msg")
    def EchoBytes(self, v, msg):
        _check_signature(msg, "ay")
        return dbus.ByteArray(v)

    # call/fd-passing (ipc/fd_passing.rs): libdbus negotiates fd passing; the UnixFd's
    # take() hands over its own duplicate, closed after the read.
    @dbus.service.method(canon.FD_INTERFACE, in_signature="h", out_signature="t", message_keyword="msg")
    def ReadFd(self, fd, msg):
        _check_signature(msg, "h")
        raw = fd.take()
        try:
            return dbus.UInt64(canon.read_fd_digest(raw))
        finally:
            os.close(raw)

    def _property(self, member, signature, args):
        answer = service.route(canon.OBJECT_PATH, PROPS, member, signature, lambda: [str(a) for a in args])
        if answer[0] == "error":
            raise dbus.exceptions.DBusException(answer[2], name=answer[1])
        return answer

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        self._property("Get", "ss", [interface, name])
        return dbus.Array([dbus.Struct(p, signature="ss") for p in canon.items()], signature="(ss)")

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        self._property("GetAll", "s", [interface])
        items = dbus.Array([dbus.Struct(p, signature="ss") for p in canon.items()], signature="(ss)")
        return dbus.Dictionary({canon.PROPERTY: items}, signature="sv")

    @dbus.service.method(PROPS, in_signature="ssv", out_signature="")
    def Set(self, interface, name, value):
        self._property("Set", "ssv", [interface, name])

    # The harness's XML (with the property and the signal, which
    # dbus-python's own introspection leaves out).
    @dbus.service.method(service.INTROSPECTABLE, in_signature="", out_signature="s",
                         path_keyword="object_path")
    def Introspect(self, object_path):
        return service.introspection_xml_of(object_path)


_TYPES = {"s": dbus.String, "u": dbus.UInt32, "b": dbus.Boolean}


def _props_dict(props):
    return dbus.Dictionary({name: _TYPES[sig](v) for name, (sig, v) in props}, signature="sv")


class PropsObjects(dbus.service.FallbackObject):
    """property/get-all/<n> and objects/get-managed-objects/<n> (ipc/props.rs): one
    dbus-python fallback object under /org/dbusmatrix (one registration, whatever
    the number of objects), its methods told the path (path_keyword); what each
    path holds comes from service.props_route."""

    def __init__(self, conn):
        super().__init__(conn, "/org/dbusmatrix")

    @staticmethod
    def _answer(path, interface, member, signature, args):
        answer = service.props_route(path, interface, member, signature, lambda: args)
        if answer is None:
            raise dbus.exceptions.DBusException("no object at %s" % path, name=service.UNKNOWN_OBJECT)
        if answer[0] == "error":
            raise dbus.exceptions.DBusException(answer[2], name=answer[1])
        return answer[2][0]

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}", path_keyword="path",
                         message_keyword="msg")
    def GetAll(self, interface, path, msg):
        _check_signature(msg, "s")
        return _props_dict(self._answer(path, PROPS, "GetAll", "s", [str(interface)]))

    @dbus.service.method(canon.OBJECT_MANAGER_INTERFACE, in_signature="", out_signature="a{oa{sa{sv}}}",
                         path_keyword="path", message_keyword="msg")
    def GetManagedObjects(self, path, msg):
        _check_signature(msg, "")
        objects = self._answer(path, canon.OBJECT_MANAGER_INTERFACE, "GetManagedObjects", "", [])
        return dbus.Dictionary(
            {dbus.ObjectPath(p): dbus.Dictionary({i: _props_dict(props) for i, props in interfaces},
                                                 signature="sa{sv}")
             for p, interfaces in objects}, signature="oa{sa{sv}}")


def _value(v):
    """A received variant's value as (signature, value); dbus.Boolean is an int, so it comes first."""
    if isinstance(v, dbus.Boolean):
        return ("b", bool(v))
    if isinstance(v, dbus.UInt32):
        return ("u", int(v))
    if isinstance(v, dbus.String):
        return ("s", str(v))
    raise RuntimeError("a property of type %s, not s, u or b" % type(v).__name__)


def _props_of(d):
    return [(str(k), _value(v)) for k, v in d.items()]


class PeerServer(dbus.server.Server):
    """Peer to peer: one benchmark object and one props fallback object per accepted connection."""

    def connection_added(self, conn):
        self.objects = getattr(self, "objects", []) + [Bench(conn, ""), PropsObjects(conn)]


def _digest_reply(member, value):
    d = canon.Digest()
    if member in ("OutInt", "InOutInt"):
        d.i32(int(value))
    elif member in ("OutString", "InOutString"):
        d.str(str(value))
    elif member == "ObjectRef":
        d.str(str(value[0]))
        d.str(str(value[1]))
    elif member == "RelationSet":
        for name, path in value:
            d.str(str(name))
            d.str(str(path))
        d.len(len(value))
    return d.finish()


def _in_flight(method, n):
    """call/in-flight/<n>: each call made with reply_handler/error_handler is
    sent at once (libdbus's send_with_reply) and returns; the GLib main loop,
    iterated until every call is answered, runs the handlers."""
    def in_flight():
        replies, errors, left = [None] * n, [], [n]

        def on_reply(i):
            def store(value):
                replies[i] = int(value)
                left[0] -= 1
            return store

        def on_error(e):
            errors.append(e)
            left[0] -= 1
        for i in range(n):
            method(dbus.Int32(i), reply_handler=on_reply(i), error_handler=on_error)
        _iterate_until(lambda: left[0] == 0)
        if errors:
            raise RuntimeError("%d in-flight calls failed, the first: %s" % (len(errors), errors[0]))
        d = canon.Digest()
        for r in replies:
            d.i32(r)
        d.len(n)
        return d.finish()
    return in_flight


def _mixed_signal():
    body = canon.mixed()
    msg = dbus.lowlevel.SignalMessage(canon.PATH, canon.INTERFACE, canon.MEMBER)
    args = []
    for s, t, st, dict_, at, as_ in body[1]:
        args += [s, t, st, dbus.Dictionary(dict(dict_), signature="si"), at, as_]
    msg.append(*args, signature=canon.signature(body))
    return msg


def _ping():
    msg = dbus.lowlevel.SignalMessage(canon.OBJECT_PATH, canon.BENCH_INTERFACE, canon.SIGNAL)
    msg.append(canon.SIGNAL_TEXT, signature="s")
    return msg


class DbusPython:
    # contract.py: the opt-in ops (canon.OPT_IN_FAMILIES) this adapter implements.
    IMPLEMENTS = ("in-flight", "idle-connections", "fd-passing", "property-get-all",
                  "get-managed-objects") + subscriptions.KINDS + apps.KINDS + storms.KINDS
    id = "dbus-python-1.3"
    library = "dbus-python"
    version = dbus.__version__
    runtime = ("blocking: proxy calls block the calling thread; signals and the server on the GLib "
               "main loop (dbus.mainloop.glib) iterated on the calling thread")

    def unsupported_codec(self, kind, name):
        return NO_CODEC

    def unsupported_ipc(self, op, p2p):
        return None

    def _connect(self, t):
        if t["kind"] == "p2p":
            return dbus.connection.Connection(_p2p_address(t["socket"]))
        return dbus.bus.BusConnection(t["address"])

    def idle_connection(self, t):
        """A private BusConnection (SASL, Hello); the returned function closes it."""
        return self._connect(t).close

    def serve(self, t, ready):
        if t["kind"] == "p2p":
            server = PeerServer(_p2p_address(t["socket"]))  # noqa: F841 (kept alive by the loop)
        else:
            conn = self._connect(t)
            owned = conn.request_name(t["service_name"], dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
            if owned != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
                raise RuntimeError("could not own %s (RequestName answered %d)" % (t["service_name"], owned))
            objs = [Bench(conn, t["service_name"]), PropsObjects(conn)]  # noqa: F841
        ready()
        GLib.MainLoop().run()

    def subscriber(self, t, extra_rules):
        conn = self._connect(t)
        for i in range(extra_rules):
            conn.add_match_string(canon.nonmatching_rule(i))
        got = []
        conn.add_signal_receiver(lambda text: got.append(str(text)), signal_name=canon.SIGNAL,
                                 dbus_interface=canon.BENCH_INTERFACE, path=canon.OBJECT_PATH)

        def receive():
            _iterate_until(lambda: got)
            d = canon.Digest()
            d.str(got.pop(0))
            return d.finish()
        receive.conn = conn
        return receive

    def _proxy(self, conn, t):
        name = t["service_name"] or None
        return conn.get_object(name, canon.OBJECT_PATH)

    def client(self, t, op):
        kind, arg = op
        empty = canon.Digest().finish()
        if kind == "connect-hello":
            def hello():
                self._connect(t).close()
                return empty
            return hello
        if kind == "connect-marshal-send":
            def marshal_send():
                conn = self._connect(t)
                conn.send_message(_mixed_signal())
                conn.flush()
                conn.close()
                return empty
            return marshal_send
        if kind in subscriptions.KINDS:
            return subscriptions.client(lambda: self._connect(t), op)
        if kind in storms.KINDS:
            return storms.client(lambda: self._connect(t), op)
        if kind in apps.KINDS:
            return apps.client(lambda: self._connect(t), t, op)
        conn = self._connect(t)
        if kind == "call":
            iface = dbus.Interface(self._proxy(conn, t), canon.BENCH_INTERFACE)
            method = getattr(iface, arg)
            sig_in = next(i for _, m, i, _ in canon.METHODS if m == arg)
            args = {"i": (dbus.Int32(canon.IN_INT),),
                    "s": (canon.IN_STRING if arg == "InString" else canon.OUT_STRING,), "": ()}[sig_in]
            return lambda: _digest_reply(arg, method(*args))
        if kind == "fd-passing":
            read_fd = dbus.Interface(self._proxy(conn, t), canon.FD_INTERFACE).ReadFd
            # UnixFd holds a duplicate of the memfd; libdbus duplicates it again into each call.
            raw = canon.payload_memfd(arg)
            memfd = dbus.types.UnixFd(raw)
            os.close(raw)
            return lambda: int(read_fd(memfd))
        if kind == "property-get-all":
            # introspect=False: the call's types are known (s in, a{sv} out).
            obj = conn.get_object(t["service_name"] or None, canon.props_path(arg), introspect=False)
            get_all = dbus.Interface(obj, PROPS).GetAll
            return lambda: canon.properties_digest(_props_of(get_all(canon.GET_ALL_INTERFACE)))
        if kind == "get-managed-objects":
            obj = conn.get_object(t["service_name"] or None, canon.objects_path(arg), introspect=False)
            get_managed_objects = dbus.Interface(obj, canon.OBJECT_MANAGER_INTERFACE).GetManagedObjects

            def managed_objects():
                # Only the benchmark interface counts (a server may list the standard ones too).
                return canon.managed_objects_digest(
                    (str(path), _props_of(interfaces[canon.ITEM_INTERFACE]))
                    for path, interfaces in get_managed_objects().items() if canon.ITEM_INTERFACE in interfaces)
            return managed_objects
        if kind == "in-flight":
            return _in_flight(dbus.Interface(self._proxy(conn, t), canon.BENCH_INTERFACE).InOutInt, arg)
        if kind == "echo-bytes":
            iface = dbus.Interface(self._proxy(conn, t), canon.BENCH_INTERFACE)
            payload = dbus.ByteArray(canon.echo_payload(arg))

            def echo():
                d = canon.Digest()
                d.bytes(bytes(iface.EchoBytes(payload, byte_arrays=True)))
                return d.finish()
            return echo
        if kind in ("property-get", "property-get-x100"):
            reads = 100 if kind == "property-get-x100" else 1
            props = dbus.Interface(self._proxy(conn, t), PROPS)

            def get():
                d = canon.Digest()
                for _ in range(reads):
                    canon.digest_items(d, [(str(a), str(b)) for a, b in props.Get(canon.BENCH_INTERFACE,
                                                                                  canon.PROPERTY)])
                return d.finish()
            return get
        if kind == "emit-receive":
            receiver = self.subscriber(t, 0)

            def emit_receive():
                conn.send_message(_ping())
                return receiver()
            return emit_receive
        if kind in ("fanout", "nonmatching-rules"):
            def emit():
                conn.send_message(_ping())
                conn.flush()
                return empty
            return emit
        raise RuntimeError("no client for %s" % kind)

    def cold_start(self, t):
        conn = self._connect(t)
        props = dbus.Interface(self._proxy(conn, t), PROPS)
        items = [(str(a), str(b)) for a, b in props.Get(canon.BENCH_INTERFACE, canon.PROPERTY)]
        conn.close()
        return items


if __name__ == "__main__":
    contract.main(DbusPython())
