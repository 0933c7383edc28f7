"""Verifying a cell's operation before timing it, and timing it into raw
samples (docs/results-schema.md, "Raw samples"): the runner computes every
figure from these, by the same method as for criterion's samples."""

import math
import time

from . import canon, storm

ALLOC_UNAVAILABLE = (
    "CPython: no counting allocator (the harness's is Rust's global allocator; "
    "tracemalloc sees Python objects only and slows every allocation)"
)


class Prepared:
    def __init__(self, op, throughput_bytes, first_ns, notes, release=None, flood=False):
        self.op = op
        self.throughput_bytes = throughput_bytes
        self.first_ns = first_ns
        self.notes = notes
        # Lets go of what the operation holds (connect/idle-connections), so a
        # `repeat` window starts with nothing held (cli/prepare.rs `release`).
        self.release = release
        # A flood into a connection of this process (storm.rs `is_flood`): measure notes its peak memory.
        self.flood = flood


def idle_holder(lib, transport, n):
    """cli/idle.rs `holder`: the operation (close the previous batch, open n
    with the adapter's `idle_connection`, digest their count) and what lets go
    of the batch it holds. `idle_connection` returns the function that closes it."""
    held = []

    def let_go():
        while held:
            held.pop()()

    def hold():
        let_go()
        for _ in range(n):
            held.append(lib.idle_connection(transport))
        d = canon.Digest()
        d.len(len(held))
        return d.finish()
    return hold, let_go


def _wait_ack(fd):
    import os
    if os.read(fd, 1) != b"!":
        raise RuntimeError("the ack FIFO closed: a subscriber process died")


def prepare(lib, kind, transport, ack_fifo):
    """The verified operation of a cell (cli/prepare.rs): nothing is timed
    unless its first result is the canonical one."""
    what = kind[0]
    if what == "marshal":
        body = canon.PAYLOADS[kind[1]]()
        start = time.perf_counter_ns()
        wire = lib.marshal(body)
        first = time.perf_counter_ns() - start
        # The runner decodes `emit` output with the reference decoder before
        # the first round (runner/src/run/cell.rs): the bytes are checked there.
        return Prepared(lambda: lib.marshal(body), len(wire), first, [])
    if what == "demarshal":
        body = canon.PAYLOADS[kind[1]]()
        shape = body[0]
        data = lib.canonical_bytes(body)
        want = canon.body_digest(body)
        d = canon.Digest()
        start = time.perf_counter_ns()
        lib.demarshal(data, shape, d)
        first = time.perf_counter_ns() - start
        if d.finish() != want:
            raise RuntimeError("verification failed: digest %016x, expected %016x" % (d.finish(), want))

        def op():
            lib.demarshal(data, shape, canon.Digest())
        return Prepared(op, len(data), first, [])
    op = kind[1]
    if op[0] == "property-cold-start":
        raise RuntimeError("property/cold-start is timed by the runner (whole processes)")
    if transport is None:
        raise RuntimeError("IPC scenarios need a transport")
    release = None
    if op[0] == "idle-connections":
        client, release = idle_holder(lib, transport, op[1])
    else:
        client = lib.client(transport, op)
    expected = canon.expected_digest(op, transport["service_name"])
    ack = None
    if canon.subscribers_of(op) is not None:
        if ack_fifo is None:
            raise RuntimeError("signal fan-out needs --ack-fifo")
        import os
        ack = os.open(ack_fifo, os.O_RDONLY)
    start = time.perf_counter_ns()
    got = client()
    if got != expected:
        raise RuntimeError("verification failed: received digest %016x, expected %016x" % (got, expected))
    if ack is not None:
        _wait_ack(ack)
    first = time.perf_counter_ns() - start
    throughput = op[1] if op[0] == "echo-bytes" else 0
    # What the verified operation saw, beside the timing (a storm's counts), as the harness's notes.
    notes = [n for n in [storm.take_note()] if n is not None]
    if ack is None:
        return Prepared(client, throughput, first, notes, release, flood=op[0] in FLOODS)

    def acknowledged():
        client()
        _wait_ack(ack)
    return Prepared(acknowledged, throughput, first, [])


# storm.rs `is_flood`: the ops whose subscriber is a connection of the client process.
FLOODS = ("burst", storm.KIND)


def peak_memory_note():
    """storm.rs `peak_memory_note`: this process's VmHWM, read at the end of bench."""
    try:
        with open("/proc/self/status") as f:
            kib = next((line.split(":", 1)[1].strip() for line in f if line.startswith("VmHWM:")), None)
    except OSError:
        return None
    if kib is None:
        return None
    return "the subscriber's process (client) peak resident memory (VmHWM) over bench: %s" % kib


def _time(op, iterations):
    start = time.perf_counter_ns()
    for _ in range(iterations):
        op()
    return time.perf_counter_ns() - start


def measure(p, a):
    """Raw samples as criterion would take them (timing.rs `measure`): a cut
    when one operation is over the budget; single operations when one is over
    the measurement time; else the direct timer, or criterion's plan (warm-up
    doubling the iterations, then linear sampling d, 2d, ..., n*d)."""
    notes = list(p.notes)
    measurement_ns = a.measurement * 1e9
    cut = None
    if a.budget is not None and p.first_ns > a.budget * 1e9:
        cut = ("the verified operation took %.2f s, over the profile's cell budget of %s s: timed once"
               % (p.first_ns / 1e9, a.budget))
        samples = [(1, p.first_ns)]
    else:
        first = _time(p.op, 1)
        if first > measurement_ns:
            samples, spent = [], 0
            while len(samples) < 2 or spent < measurement_ns:
                took = _time(p.op, 1)
                samples.append((1, took))
                spent += took
            notes.append("slow operation (%.2f s): timed as %d single operations" % (first / 1e9, len(samples)))
        elif a.timer == "direct":
            per_sample = measurement_ns / a.sample_size
            iterations = int(min(max(per_sample / max(first, 1), 1), 1e6))
            samples = [(iterations, _time(p.op, iterations)) for _ in range(a.sample_size)]
        else:
            n = max(a.sample_size, 10)  # criterion's minimum, as the Rust adapters use it
            iters, spent, warm = 1, 0, 0
            while spent < a.warm_up * 1e9:
                spent += _time(p.op, iters)
                warm += iters
                iters *= 2
            per_op = spent / max(warm, 1)
            d = max(1, math.ceil(measurement_ns / max(per_op, 1) / (n * (n + 1) / 2)))
            samples = [(i * d, _time(p.op, i * d)) for i in range(1, n + 1)]
    if p.flood:
        note = peak_memory_note()
        if note is not None:
            notes.append(note)
    return {
        "raw_samples": [{"iterations": i, "elapsed_ns": float(t)} for i, t in samples],
        "throughput_bytes": p.throughput_bytes,
        "verification_notes": notes,
        "alloc_unavailable": ALLOC_UNAVAILABLE,
        "cut": cut,
    }
