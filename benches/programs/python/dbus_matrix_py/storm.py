"""`property/changed-storm/<n>` (harness/src/ipc/storm.rs, docs/scenarios.md
"PropertiesChanged storms") for the Python adapters: the object, the
property, the value of each update and the rule of a subscriber without a
property cache, from canon.json, and the one check of what the subscriber
saw (`storm_digest`), worded as the harness's (runner/tests/program_storm.rs
compares both on the same broken inputs). None of dbus-fast, dbus-python and
jeepney caches properties: the program keeps the value of each
PropertiesChanged itself, as an application of theirs must, so every
message received is one announced update."""

from . import canon

_ST = canon.CANON["storm"]
KIND = "property-storm"
PATH = _ST["path"]
INTERFACE = _ST["interface"]
PROPERTY = _ST["property"]
INITIAL_LEVEL = _ST["initial_level"]
CHANGED_RULE = _ST["changed_rule"]
SETTLE_S = _ST["settle_ms"] / 1000.0
PROPERTIES = canon.CANON["standard"]["properties"]
PROPERTIES_CHANGED = "PropertiesChanged"

NO_VALUE = -(2 ** 31)  # what rustbus's adapter records for a message without the value

_note = [None]


def level(i):
    """storm.rs `level`: the value the i-th update announces."""
    return i + 1


def last_level(n):
    """The value a subscriber must end with after a storm of n."""
    return level(max(n - 1, 0))


def _value(v):
    return "no value" if v is None else "%d" % v


def storm_digest(received, updates, last, holder, n):
    """storm.rs `storm_digest`: `received` PropertiesChanged messages of the
    storm's interface reached the subscriber, `updates` the values it was told
    of in order, `last` the value it holds (None: none). Every message once,
    in order, ending with the last value; else RuntimeError with the counts.
    Leaves the note of a verified storm for `take_note`."""
    top = last_level(n)
    lost = max(n - received, 0)
    extra = max(received - n, 0)
    in_order = all(a < b for a, b in zip(updates, updates[1:]))
    in_range = all(level(0) <= v <= top for v in updates)
    counts = "%d PropertiesChanged emitted: received %d, lost %d, extra %d; %s announced %d updates%s; holds %s" % (
        n, received, lost, extra, holder, len(updates),
        "" if in_order and in_range else " (out of order or unknown values)", _value(last))
    if lost or extra or not in_order or not in_range or last != top:
        raise RuntimeError("property storm: %s; it must receive all %d and end with the last value %d"
                           % (counts, n, top))
    coalesced = n - min(len(updates), n)
    _note[0] = "property storm verified: %s (the last value); %d updates coalesced%s" % (
        counts, coalesced,
        "" if coalesced == 0 else (" (never announced: merged into a newer value, or dropped inside the library "
                                   "after its connection received them)"))
    return expected_digest(n)


def expected_digest(n):
    """storm.rs `expected_digest`: the last value and n."""
    d = canon.Digest()
    d.i32(last_level(n))
    d.len(n)
    return d.finish()


def take_note():
    """The note of the last verified storm, taken once (timing adds it to the cell's notes)."""
    note, _note[0] = _note[0], None
    return note


class Seen:
    """What the subscriber's connection handed the program: each
    PropertiesChanged of the storm's interface counts once; the value of
    `Level` in it is an announced update (one without it announces
    NO_VALUE, which no update has: the check fails it as unknown)."""

    def __init__(self):
        self.received = 0
        self.updates = []

    def take(self, changed):
        """One message's changed properties as {name: int value}."""
        self.received += 1
        self.updates.append(changed.get(PROPERTY, NO_VALUE))

    def done(self, n):
        return bool(self.updates) and self.updates[-1] == last_level(n)

    def digest(self, holder, n):
        received, updates = self.received, self.updates
        self.received, self.updates = 0, []
        return storm_digest(received, updates, updates[-1] if updates else None, holder, n)
