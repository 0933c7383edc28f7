"""The application families of issue 31 (harness/src/ipc/application.rs,
docs/scenarios.md "What applications do") for the Python adapters: the
sink of `call/in-only-bytes/<n>` (its path, interface, method and the
well-known name its connection owns, from canon.json) and the tally its
handler keeps, taken by the client after each reply as the harness's
`SinkTally`: the digest of every array received since the last take, then
their number. A call lost, sent twice, shortened or not awaited changes it.
`call/connections-in-process/<k>`'s check, `connections_digest`, is the
harness's `in_flight_digest` of the k replies."""

import threading

from . import canon

_S = canon.CANON["service"]
IN_ONLY_BYTES = "in-only-bytes"
CONNECTIONS = "connections-in-process"
SINK_PATH = _S["sink_path"]
SINK_INTERFACE = _S["sink_interface"]
SINK_BYTES = _S["sink_bytes"]
# The sink's interface for libraries that build a proxy from introspection data.
SINK_XML = ('<node><interface name="%s"><method name="%s"><arg type="ay" direction="in"/></method>'
            '</interface></node>' % (SINK_INTERFACE, SINK_BYTES))


def sink_name(service_name):
    """The name the serving connection owns and the caller addresses (the bus
    policy lets method calls through to listed names only)."""
    return service_name + _S["sink_name_suffix"]


class SinkTally:
    """What SinkBytes received since the client last took it (the handler may
    run on another thread than the client: jeepney, libdbus)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._digest = canon.Digest()
        self._calls = 0

    def receive(self, data):
        with self._lock:
            self._digest.bytes(bytes(data))
            self._calls += 1

    def take(self):
        with self._lock:
            d, calls = self._digest, self._calls
            self._digest, self._calls = canon.Digest(), 0
        d.len(calls)
        return d.finish()


def connections_digest(replies):
    """`call/connections-in-process/<k>` checked as a `call/in-flight/<k>`
    batch (ipc.rs `in_flight_digest`): the k replies in the order the calls
    were made, connection i sending i, so a connection skipped or a reply
    taken from the wrong call changes it."""
    d = canon.Digest()
    n = 0
    for r in replies:
        d.i32(int(r))
        n += 1
    d.len(n)
    return d.finish()
