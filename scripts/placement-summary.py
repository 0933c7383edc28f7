#!/usr/bin/env python3
"""The tables of docs/placement.md from the six runs in docs/results/placement/.

Usage: python3 scripts/placement-summary.py [DIR]   (default docs/results/placement)
"""
import json
import statistics as st
import sys
from pathlib import Path

PLACEMENTS = {"none": "unpinned", "one-cpu": "one CPU", "split": "split"}


def cells(path):
    out = {}
    for c in json.loads(path.read_text())["cells"]:
        if c["status"] != "ok":
            continue
        w = c["measurement"]["wall"]["median_ns"]
        key = (c["scenario"], c.get("bus", "-"), c["adapter"], c.get("role", "same"))
        out[key] = (w["point"], (w["upper"] - w["lower"]) / 2 / w["point"])
    return out


def main(d):
    run1 = {p: cells(d / f"run1-{p}.json") for p in PLACEMENTS}
    run2 = {p: cells(d / f"run2-{p}.json") for p in PLACEMENTS}
    print("| placement | timed cells | median ± | cells within ±5% | median change, run 1 → run 2 | raw-socket floor (64 B) |")
    print("|---|---:|---:|---:|---:|---:|")
    for p, name in PLACEMENTS.items():
        widths = [v[1] for v in run2[p].values()]
        moved = [abs(run1[p][k][0] - v[0]) / v[0] for k, v in run2[p].items() if k in run1[p]]
        floor = run2[p][("baseline/raw-socket/64", "-", "raw", "same")][0] / 1e3
        print(f"| {name} | {len(widths)} | ±{st.median(widths) * 100:.1f}% | {sum(w <= 0.05 for w in widths)} "
              f"| {st.median(moved) * 100:.1f}% | {floor:.1f} µs |")
    print()
    print("| scenario @bus | " + " | ".join(PLACEMENTS.values()) + " |")
    print("|---|" + "---|" * len(PLACEMENTS))
    for scenario in ["call/void", "call/relation-set", "call/echo-bytes/4096", "property/get"]:
        for bus in ["dbus-daemon", "dbus-broker", "p2p"]:
            row = []
            for p in PLACEMENTS:
                same = sorted(((k[2], v) for k, v in run2[p].items()
                               if k[0] == scenario and k[1] == bus and k[3] == "same"), key=lambda kv: kv[1][0])
                row.append(", ".join(f"{a} {v[0] / 1e3:.1f}±{v[1] * 100:.0f}%" for a, v in same) or "-")
            print(f"| {scenario} @{bus} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/results/placement"))
