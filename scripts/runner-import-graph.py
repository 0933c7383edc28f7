#!/usr/bin/env python3
"""The runner's import graph: which module of benches/runner/src uses which
(`use` trees and `crate::`/`super::`/`self::` paths), and every circle
between the modules of one folder (at the top: between rooms).

    python3 scripts/runner-import-graph.py [SRC] [--rooms] [--tests]

--rooms prints each room's arrows; --tests also reads the `#[cfg(test)]`
modules. Exits 1 when there is a circle. A reading aid, not a parser:
it reads text, so a path spelled in a string or a macro may count.
"""
import os, re, sys
from collections import defaultdict

args = [a for a in sys.argv[1:] if not a.startswith("--")]
root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benches", "runner", "src")
tests = "--tests" in sys.argv

def modpath(rel):
    parts = rel[:-3].split("/")
    if parts[-1] in ("mod", "main"):
        parts = parts[:-1]
    return tuple(parts)

files = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith(".rs"):
            rel = os.path.relpath(os.path.join(d, f), root)
            files[modpath(rel)] = open(os.path.join(d, f)).read()
mods = set(files)

def split(src):
    src = re.sub(r"//[^\n]*", "", src)
    m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod \w+\s*\{", src)
    if m:
        return src[: m.start()], (src[m.start():] if tests else "")
    return src, ""

def expand(tree):
    # tree: text of a use tree like a::{b, c::{d, self}}; returns list of paths (tuples)
    tree = tree.strip()
    out = []
    depth = 0
    # split top-level by commas handled by caller
    m = re.match(r"^([\w:]*?)(::)?\{(.*)\}$", tree, re.S)
    if m and tree.endswith("}"):
        prefix = [p for p in m.group(1).split("::") if p]
        inner = m.group(3)
        items, cur, depth = [], "", 0
        for ch in inner:
            if ch == "{": depth += 1
            if ch == "}": depth -= 1
            if ch == "," and depth == 0:
                items.append(cur); cur = ""
            else:
                cur += ch
        items.append(cur)
        for it in items:
            if it.strip():
                for p in expand(it):
                    out.append(tuple(prefix) + p)
        return out
    tree = re.sub(r"\s+as\s+\w+$", "", tree)
    return [tuple(p for p in tree.split("::") if p)]

def resolve(cur, path):
    # cur: module tuple; path: tuple of segments; returns absolute tuple or None
    p = list(path)
    if not p: return None
    if p[0] == "crate":
        base = []; p = p[1:]
    elif p[0] in ("super", "self"):
        base = list(cur)
        while p and p[0] in ("super", "self"):
            if p[0] == "super": base = base[:-1]
            p = p[1:]
    else:
        return None
    full = base + [x for x in p if x != "self"]
    # longest prefix that is a module
    for n in range(len(full), -1, -1):
        if tuple(full[:n]) in mods:
            return tuple(full[:n])
    return None

edges = defaultdict(set)
def scan(m, s, cur):
    for u in re.finditer(r"\buse\s+([^;]+);", s):
        for p in expand(u.group(1)):
            t = resolve(cur, p)
            if t is not None and t != m:
                edges[m].add(t)
    s2 = re.sub(r"\buse\s+[^;]+;", "", s)
    for u in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", s2):
        t = resolve(cur, tuple(u.group(1).split("::")))
        if t is not None and t != m:
            edges[m].add(t)

for m, src in files.items():
    prod, test = split(src)
    scan(m, prod, m)
    scan(m, test, m + ("tests",))

def sccs(nodes, es):
    idx, low, st, on, res, c = {}, {}, [], set(), [], [0]
    def sc(v):
        idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
        for w in es.get(v, ()):
            if w not in idx: sc(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop(); on.discard(w); comp.append(w)
                if w == v: break
            res.append(comp)
    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in idx: sc(v)
    return [c for c in res if len(c) > 1]

name = lambda t: "::".join(t) or "crate"
# sibling circles: for each parent P, collapse descendants to the child of P
parents = {m[:-1] for m in mods if m} | {()}
print("files:", len(files), " edges:", sum(len(v) for v in edges.values()))
rooms = sorted({m[0] for m in mods if m})
print("rooms (top level):", len(rooms), " ".join(rooms))
total = 0
for P in sorted(parents):
    k = len(P)
    kids = {m[: k + 1] for m in mods if len(m) > k and m[:k] == P}
    es = defaultdict(set)
    for a, bs in edges.items():
        for b in bs:
            if len(a) > k and len(b) > k and a[:k] == P and b[:k] == P and a[: k + 1] != b[: k + 1]:
                es[a[: k + 1]].add(b[: k + 1])
    for comp in sccs(sorted(kids), es):
        total += 1
        print(f"CIRCLE under {name(P)}: " + " <-> ".join(sorted(c[-1] for c in comp)))
print("circles between siblings:", total)
if "--rooms" in sys.argv:
    es = defaultdict(set)
    for a, bs in edges.items():
        for b in bs:
            if a and b and a[0] != b[0]:
                es[a[0]].add(b[0])
    for r in rooms:
        print(f"  {r} -> {' '.join(sorted(es.get(r, ())))}")

sys.exit(1 if total else 0)
