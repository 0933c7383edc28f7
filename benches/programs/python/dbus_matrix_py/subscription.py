"""The subscription families of issue 31 (harness/src/ipc/subscription.rs,
docs/scenarios.md "Subscriptions under load") for the Python adapters: the
texts, rules and names from canon.json, and the one check of what a
subscriber was handed, shared by every arm. A check that fails raises with
the counts, worded as the harness's (runner/tests/program_subscriptions.rs
compares both on the same broken inputs), so a library that drops,
duplicates or over-delivers fails its cell instead of passing."""

import os

from . import canon

_S = canon.CANON["service"]
CHURN_RULE = _S["churn_rule"]
BURST_END = _S["burst_end"]
DELIVERED_NOISE = _S["delivered_noise"]
NAME_CHURNS = _S["name_churns"]
NAME_OWNER_RULE = _S["name_owner_rule"]
MATCH_RULE_NOT_FOUND = canon.CANON["standard"]["errors"]["match_rule_not_found"]
_BURST_PREFIX = _S["burst_text"].split("%d")[0]


def scope_of(kind):
    """"broad" or "arg0", the scope of an op kind ("delivered-arg0", "name-owner-churn-broad")."""
    return kind.rsplit("-", 1)[1]


def burst_text(i):
    return _S["burst_text"] % i


def burst_texts(n):
    """The n texts of a burst, in order (the end marker is sent after them)."""
    return [burst_text(i) for i in range(n)]


def delivered_texts():
    """`signal/delivered`'s texts in the order sent: the noise, then the matching one (the end)."""
    return [_S["delivered_noise_text"] % i for i in range(DELIVERED_NOISE)] + [canon.SIGNAL_TEXT]


def delivered_rule(scope):
    """The subscriber's rule: every Ping (broad), or only arg0 = SIGNAL_TEXT (the bus filters)."""
    return canon.ping_rule() if scope == "broad" else _S["delivered_arg0_rule"]


def churn_names(pid=None):
    """(churned name, sentinel name) of this process (or of `pid`)."""
    pid = os.getpid() if pid is None else pid
    return (_S["churn_name"] % pid, _S["churn_end_name"] % pid)


def name_owner_rule(scope, pid=None):
    """The NameOwnerChanged rule: every change (broad), or only the sentinel's (arg0)."""
    if scope == "broad":
        return NAME_OWNER_RULE
    return _S["name_owner_arg0_rule"] % (os.getpid() if pid is None else pid)


def rule_fields(rule):
    """A match rule's text as {key: value} (type, sender, interface, member,
    path, argN), for a library's own rule object built from the canon's text.
    The canon's rules quote every value and hold no comma in one."""
    fields = {}
    for part in rule.split(","):
        key, _, value = part.partition("=")
        if not (len(value) >= 2 and value[0] == value[-1] == "'"):
            raise RuntimeError("match rule %r: %r is not key='value'" % (rule, part))
        fields[key] = value[1:-1]
    return fields


def _some(v):
    return "None" if v is None else "Some(%d)" % v


def burst_digest(received, n):
    """The texts a burst's consumer received before the end marker, checked
    against the n sent: their digest, or RuntimeError with the counts."""
    seen = [0] * n
    foreign = 0
    in_order = True
    last = None
    for text in received:
        i = None
        if text.startswith(_BURST_PREFIX):
            digits = text[len(_BURST_PREFIX):]
            digits = digits[1:] if digits.startswith("+") else digits  # as Rust's usize::from_str
            if digits.isascii() and digits.isdigit():
                i = int(digits)
        if i is not None and i < n:
            seen[i] += 1
            in_order = in_order and (last is None or last < i)
            last = i
        else:
            foreign += 1
    lost = sum(1 for c in seen if c == 0)
    duplicated = sum(c - 1 for c in seen if c > 1)
    if lost or duplicated or foreign or not in_order:
        first_lost = next((i for i, c in enumerate(seen) if c == 0), None)
        raise RuntimeError(
            "burst of %d Pings into a consumer that did not read: received %d, lost %d, duplicated %d, "
            "foreign %d, %s (the first lost: %s)"
            % (n, len(received), lost, duplicated, foreign, "in order" if in_order else "out of order",
               _some(first_lost)))
    d = canon.Digest()
    for t in received:
        d.str(t)
    d.len(len(received))
    return d.finish()


def delivered_digest(received, scope):
    """The Pings a `signal/delivered/<scope>` subscriber was handed up to and
    including SIGNAL_TEXT: the broad rule must deliver all, arg0 the last."""
    texts = delivered_texts()
    want = len(texts) if scope == "broad" else 1
    expected = texts[len(texts) - want:]
    if list(received) != expected:
        raise RuntimeError(
            "%s rule: the subscription delivered %d Pings (%d non-matching) of the %d emitted; it must deliver %d"
            % (scope, len(received), sum(1 for t in received if t != canon.SIGNAL_TEXT), len(texts), want))
    d = canon.Digest()
    for t in received:
        d.str(t)
    d.len(len(received))
    return d.finish()


def name_churn_digest(received, scope, names):
    """The (name, new owner) of each NameOwnerChanged a subscriber was handed
    up to the sentinel's release: the broad rule must deliver the churned
    name's 2 x NAME_CHURNS and the sentinel's 2 (other names allowed), arg0
    only the sentinel's 2."""
    churned, sentinel = names
    c = sum(1 for name, _ in received if name == churned)
    s = sum(1 for name, _ in received if name == sentinel)
    other = len(received) - c - s
    want = 2 * NAME_CHURNS if scope == "broad" else 0
    if c != want or s != 2 or (scope != "broad" and other != 0):
        raise RuntimeError(
            "%s rule: NameOwnerChanged delivered for the churned name %d (must be %d), for the sentinel %d "
            "(must be 2), for other names %d" % (scope, c, want, s, other))
    d = canon.Digest()
    d.len(c)
    d.len(s)
    return d.finish()


def is_sentinel_release(name, new_owner, names):
    """The last change a name-owner-churn subscriber waits for."""
    return name == names[1] and new_owner == ""
