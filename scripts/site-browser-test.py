#!/usr/bin/env python3
"""Drives the static site (`dbus-matrix site`) in headless Chromium from
file:// over the DevTools protocol (--remote-debugging-pipe: Python's
standard library only, no driver, no network) and checks:

- every page loads with no console error, exception or failed load;
- the compare view changes when other runs are picked, and its verdicts for
  that pair are those of `dbus-matrix compare OLD NEW --format json`;
- a chart's points (run, adapter, median) are those of the results files,
  one per ok cell, and the table beside it holds the same medians;
- at a phone's width the index does not scroll sideways (tables scroll in
  their own box).

With --screenshots DIR it writes index.png and scenario.png there (the
README's pictures: generated, never edited).

Usage: site-browser-test.py --site DIR --results DIR --runner BIN [--screenshots DIR]
Exit 0 when every check passes, 1 when one fails, 2 on bad usage.
"""

import argparse
import base64
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TIMEOUT_S = 60
CHART_PAGE = "s-marshal-mixed.html"
CHART_SCENARIO = "marshal/mixed"


class Browser:
    """Headless Chromium with its DevTools pipe on fds 3 (commands) and 4 (replies)."""

    def __init__(self, chromium, profile):
        cmd_r, self.cmd_w = os.pipe()
        self.res_r, res_w = os.pipe()

        def fds():
            # Out of the way first (a pipe may already be fd 3 or 4), then
            # onto 3 and 4 without close-on-exec.
            r, w = os.dup(cmd_r), os.dup(res_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--hide-scrollbars",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            preexec_fn=fds, close_fds=False, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HOME": str(profile)})
        os.close(cmd_r)
        os.close(res_w)
        self.next_id = 0
        self.inbox = queue.Queue()
        self.events = []
        threading.Thread(target=self._read, daemon=True).start()
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                self.call(f"{domain}.enable", session=True)
        except Exception:
            self.close()  # no browser left behind when it does not answer
            raise

    def _read(self):
        buf = b""
        while True:
            chunk = os.read(self.res_r, 1 << 16)
            if not chunk:
                self.inbox.put(None)
                return
            buf += chunk
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                self.inbox.put(json.loads(msg))

    def call(self, method, params=None, session=False):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            m = self.inbox.get(timeout=max(0.1, deadline - time.monotonic()))
            if m is None:
                raise RuntimeError("chromium closed its DevTools pipe")
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method):
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            m = self.inbox.get(timeout=max(0.1, deadline - time.monotonic()))
            if m is None:
                raise RuntimeError("chromium closed its DevTools pipe")
            if m.get("method") == method:
                return m
            self.events.append(m)

    def load(self, url):
        self.events = []
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_event("Page.loadEventFired")

    def js(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression[:80]}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def errors(self):
        """Console errors, uncaught exceptions and failed loads since the last load."""
        self.js("0")  # flush the events of the page's own scripts
        found = []
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Runtime.exceptionThrown":
                found.append(f"exception: {p['exceptionDetails'].get('exception', {}).get('description') or p['exceptionDetails']['text']}")
            elif e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                found.append(f"console.{p['type']}: {[a.get('value') for a in p.get('args', [])]}")
            elif e.get("method") == "Log.entryAdded" and p["entry"]["level"] == "error":
                found.append(f"log: {p['entry']['text']} {p['entry'].get('url', '')}")
        return found

    def screenshot(self, path, width, height):
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=True)
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        Path(path).write_bytes(base64.b64decode(data))

    def close(self):
        try:
            if self.proc.poll() is None:
                self.call("Browser.close")
        except Exception:  # noqa: BLE001 - it may be gone already
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.proc.pid, 9)  # helpers that outlived the browser (our own session)
        except ProcessLookupError:
            pass
        self.proc.wait()


class Checks:
    def __init__(self):
        self.failed = []

    def check(self, ok, what):
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            self.failed.append(what)


def compare_verdicts(runner, results, old, new):
    out = subprocess.run([runner, "compare", str(results / old), str(results / new), "--format", "json"],
                         capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise RuntimeError(f"compare {old} {new} exited {out.returncode}: {out.stderr}")
    return sorted((c["adapter"], c["scenario"], c.get("bus") or "", c["verdict"]) for c in json.loads(out.stdout)["cells"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", required=True, type=Path)
    ap.add_argument("--results", required=True, type=Path, help="the directory the site was built from")
    ap.add_argument("--runner", required=True, help="the dbus-matrix binary (for compare)")
    ap.add_argument("--screenshots", type=Path)
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    a = ap.parse_args()
    if not (a.site / "index.html").is_file():
        print(f"{a.site}/index.html is missing: build the site first", file=sys.stderr)
        return 2
    if not shutil.which(a.chromium):
        print("chromium is not on PATH (scripts/install-deps-debian.sh all)", file=sys.stderr)
        return 2
    site = a.site.resolve()
    url = lambda page: (site / page).as_uri()  # noqa: E731
    c = Checks()
    with tempfile.TemporaryDirectory(prefix="dbus-matrix-site-test-") as profile:
        b = Browser(a.chromium, profile)
        try:
            pages = sorted(p.name for p in site.glob("*.html"))
            c.check(len(pages) > 3, f"{len(pages)} pages")
            dirty = []
            for p in pages:
                b.load(url(p))
                errs = b.errors()
                if errs:
                    dirty.append(f"{p}: {errs}")
            c.check(not dirty, "every page loads from file:// with no console error" + "".join("\n  " + d for d in dirty))

            # The compare view.
            b.load(url("compare.html"))
            first = b.js("[document.body.dataset.pair, document.getElementById('cmp-summary').textContent]")
            runs = b.js("D.runs")
            c.check(first[0] == f"{len(runs) - 2}-{len(runs) - 1}", f"compare opens on the two newest runs ({first[0]})")
            b.js("document.getElementById('hide-unchanged').checked = false;"
                 "document.getElementById('old').value = '0';"
                 "document.getElementById('old').dispatchEvent(new Event('change'))")
            second = b.js("[document.body.dataset.pair, document.getElementById('cmp-summary').textContent]")
            c.check(second[0] == f"0-{len(runs) - 1}" and second[1] != first[1],
                    f"picking another old run changes the view ({first[1]!r} -> {second[1]!r})")
            shown = b.js("Array.from(document.querySelectorAll('#cmp-body tr')).map(function (r) {"
                         " var k = D.keys[+r.dataset.key]; return [k[0], k[1], k[2], r.lastChild.textContent]; })")
            label = lambda i: re.search(r"\(([^()]*)\)$", runs[i]).group(1)  # noqa: E731
            want = compare_verdicts(a.runner, a.results, label(0), label(len(runs) - 1))
            c.check(sorted(map(tuple, shown)) == want,
                    f"the page's verdicts for #1 -> #{len(runs)} are compare's ({len(shown)} rows, {len(want)} cells)")
            c.check(b.errors() == [], "no console error while picking runs")

            # A chart against the results files.
            b.load(url(CHART_PAGE))
            points = b.js("Array.from(document.querySelector('section svg.chart').querySelectorAll('circle.pt'))"
                          ".map(function (p) { return [p.parentNode.dataset.adapter, +p.dataset.run, p.dataset.ns]; })")
            files = b.js("(function () { var m = {}; document.querySelectorAll('section table.over-runs thead th[title]')"
                         ".forEach(function (th) { m[th.querySelector('a').getAttribute('href')] = th.title; }); return m; })()")
            cells = b.js("Array.from(document.querySelectorAll('section table.over-runs td[data-ns]'))"
                         ".map(function (td) { return [td.parentNode.dataset.lib, +td.dataset.run, td.dataset.ns]; })")
            expected = []
            for page, name in files.items():
                run = int(re.match(r"run-(\d+)\.html", page).group(1)) - 1
                data = json.loads((a.results / name).read_text())
                for cell in data["cells"]:
                    wall = (cell.get("measurement") or {}).get("wall")
                    if cell["scenario"] == CHART_SCENARIO and not cell.get("bus") and cell.get("status") == "ok" and wall:
                        expected.append((cell["adapter"], run, wall["median_ns"]["point"]))
            got = sorted((ad, run, float(ns)) for ad, run, ns in points)
            c.check(len(got) > 0 and got == sorted(expected),
                    f"{CHART_PAGE}: the chart's {len(got)} points are the results files' {len(expected)} ok cells")
            c.check(sorted((ad, run, float(ns)) for ad, run, ns in cells) == got,
                    "the table beside the chart holds the same medians")

            # A phone's width.
            b.call("Emulation.setDeviceMetricsOverride",
                   {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}, session=True)
            b.load(url("index.html"))
            wide = b.js("document.documentElement.scrollWidth")
            c.check(wide <= 392, f"index.html at 390 px wide does not scroll sideways (content {wide} px)")

            if a.screenshots:
                a.screenshots.mkdir(parents=True, exist_ok=True)
                b.load(url("index.html"))
                b.screenshot(a.screenshots / "site-index.png", 1280, 900)
                b.load(url("s-call-echo-bytes-1024.html"))
                b.screenshot(a.screenshots / "site-scenario.png", 1280, 900)
                print(f"screenshots in {a.screenshots}")
        finally:
            b.close()
    if c.failed:
        print(f"{len(c.failed)} check(s) failed", file=sys.stderr)
        return 1
    print("site browser test: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
