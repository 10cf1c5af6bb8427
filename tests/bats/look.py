#!/usr/bin/env python3
"""A person's look at pages, through headless Chromium's DevTools protocol.

look.py [--shots DIR] [--timeout S] [--artifacts ROOT] PAGE...

Each PAGE (an .html or .svg file, or a Buildkite annotation's .md, shown
as Buildkite would: markdown to HTML, artifact://PATH as ROOT/PATH) is
loaded in one Chromium (--remote-debugging-pipe: JSON messages ending in a
NUL byte, fd 3 to Chromium, fd 4 from it), then:

- its console errors, uncaught exceptions and failed loads (an image that
  is not there) are problems;
- a PNG of the whole page goes to DIR/<page's name>.png;
- every chart (each top-level <svg>, inline or the file of an <img> or
  <object>; class="spark" marks sparklines, which are glyphs, not charts)
  must have labelled x and y axes (text.tick-x, text.tick-y), a label
  carrying its values' unit (.unit, not empty and not a bare "value"),
  and, when it draws more than one series (distinct data-series values),
  a legend naming each (.legend[data-series=...]).

One line per problem ("PAGE: CHART: what is missing"), exit 1 when there
is any; otherwise one summary line per page. Exit 2 on a usage error, 3 if
Chromium fails or runs out of time. Standard library only (markdown, from
python3-markdown, only for .md pages)."""
import argparse
import base64
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

CHECK_JS = r"""
(() => {
  const problems = [], charts = [];
  const seen = new Set();
  function name(svg, where) {
    const t = svg.querySelector('title');
    const n = svg.getAttribute('aria-label') || (t && t.textContent) || '';
    return where + (n ? ' "' + n.trim().slice(0, 70) + '"' : '');
  }
  function text(e) { return (e.textContent || '').trim(); }
  function check(svg, where) {
    const what = name(svg, where);
    charts.push(what);
    const miss = [];
    const tx = [...svg.querySelectorAll('text.tick-x')].filter(e => text(e));
    const ty = [...svg.querySelectorAll('text.tick-y')].filter(e => text(e));
    if (!tx.length) miss.push('no x axis (no text.tick-x)');
    if (!ty.length) miss.push('no y axis (no text.tick-y)');
    const units = [...svg.querySelectorAll('.unit')];
    if (!units.length) miss.push('no axis label with a unit (.unit)');
    for (const u of units)
      if (!text(u) || /^value\b/.test(text(u)))
        miss.push('an axis label without a unit: "' + text(u) + '"');
    const series = new Set(), named = new Set();
    for (const e of svg.querySelectorAll('[data-series]'))
      (e.classList.contains('legend') ? named : series).add(e.getAttribute('data-series'));
    if (series.size > 1)
      for (const s of series)
        if (!named.has(s))
          miss.push('series "' + s + '" of ' + series.size + ' has no legend entry (.legend)');
    for (const m of miss) problems.push(what + ': ' + m);
  }
  function top(doc, where) {
    for (const svg of doc.querySelectorAll('svg')) {
      if (svg.parentElement && svg.parentElement.closest('svg')) continue;
      if (svg.classList.contains('spark')) continue;
      check(svg, where);
    }
  }
  function load(url) {
    const x = new XMLHttpRequest();
    x.open('GET', url, false);
    try { x.send(); } catch (e) { return null; }
    if (x.status !== 0 && x.status !== 200) return null;
    const d = new DOMParser().parseFromString(x.responseText, 'image/svg+xml');
    return d.querySelector('parsererror') ? null : d;
  }
  let k = 0;
  top(document, 'inline svg');
  for (const e of document.querySelectorAll('img[src], object[data]')) {
    const url = e.src || e.data;
    if (!/\.svg([?#].*)?$/i.test(url) || seen.has(url)) continue;
    seen.add(url);
    k++;
    const where = url.replace(/^.*\//, '');
    if (e.tagName === 'IMG' && !(e.complete && e.naturalWidth > 0)) {
      problems.push(where + ': the image did not load');
      continue;
    }
    const d = load(url);
    if (!d) { problems.push(where + ': cannot read the chart'); continue; }
    top(d, where);
  }
  return JSON.stringify({problems, charts: charts.length, images: k,
                         height: Math.ceil(document.documentElement.scrollHeight)});
})()
"""


class Chrome:
    """Chromium over --remote-debugging-pipe."""

    def __init__(self, binary, profile, deadline):
        self.deadline = deadline
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def fds():
            # fd 3 and 4 in the child, whatever they were here (copied
            # first: either may be 3 or 4 already)
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--remote-debugging-pipe", "--user-data-dir=" + profile,
             "--allow-file-access-from-files", "--no-first-run",
             "--disable-background-networking", "--disable-extensions", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=fds, pass_fds=(3, 4), start_new_session=True)
        os.close(to_r)
        os.close(from_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def close(self):
        for fd in (self.to_w, self.from_r):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def left(self):
        return self.deadline - time.monotonic()

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read(self):
        """The next message, or None when time is up."""
        while b"\0" not in self.buf:
            left = self.left()
            if left <= 0:
                return None
            r, _, _ = select.select([self.from_r], [], [], left)
            if not r:
                return None
            chunk = os.read(self.from_r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe (exit %s)" % self.proc.poll())
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None):
        want = self.send(method, params, session)
        while True:
            m = self.read()
            if m is None:
                raise TimeoutError("no answer to " + method)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"].get("message")))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, session, until):
        """Events until `method` arrives (True) or `until` passes (False)."""
        while True:
            for i, m in enumerate(self.events):
                if m.get("method") == method and m.get("sessionId") == session:
                    del self.events[i]
                    return True
            if time.monotonic() >= until:
                return False
            saved = self.deadline
            self.deadline = min(self.deadline, until)
            m = self.read()
            self.deadline = saved
            if m is not None:
                self.events.append(m)


def console_problems(events, session):
    out = []
    for m in events:
        if m.get("sessionId") != session:
            continue
        p = m.get("params", {})
        if m.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            out.append("console error: " + args)
        elif m.get("method") == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            desc = d.get("exception", {}).get("description") or d.get("text", "")
            out.append("uncaught exception: " + desc.splitlines()[0] if desc else "uncaught exception")
        elif m.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            out.append("%s error: %s%s" % (e.get("source", "log"), e.get("text", ""),
                                          " (" + e["url"] + ")" if e.get("url") else ""))
    return out


def annotation_html(md_path, artifacts, out_dir):
    """The annotation as Buildkite shows it: markdown (tables, HTML blocks
    with markdown inside), artifact://PATH as the local file ROOT/PATH."""
    import markdown  # python3-markdown

    text = open(md_path, encoding="utf-8").read()
    root = os.path.abspath(artifacts)
    text = re.sub(r'artifact://([^"\s)]+)',
                  lambda m: "file://" + os.path.join(root, m.group(1)), text)
    # Buildkite renders markdown inside <details> (CommonMark HTML blocks
    # with blank lines); python-markdown does with markdown="1"
    text = re.sub(r"<details>", '<details open markdown="1">', text)
    body = markdown.markdown(text, extensions=["tables", "fenced_code", "md_in_html"])
    # relative links (outside Buildkite) are relative to the annotation
    base = "file://" + os.path.dirname(os.path.abspath(md_path)) + "/"
    page = ("<!doctype html>\n<html><head><meta charset=\"utf-8\"><base href=\"%s\">"
            "<title>%s</title><style>body{font-family:sans-serif;max-width:1100px;"
            "margin:16px}img{max-width:100%%}table{border-collapse:collapse}"
            "td,th{border:1px solid #ddd;padding:2px 6px}.red{color:#b91c1c}"
            ".green{color:#15803d}</style></head><body>\n%s\n</body></html>\n"
            % (base, os.path.basename(md_path), body))
    out = os.path.join(out_dir, os.path.splitext(os.path.basename(md_path))[0] + ".html")
    with open(out, "w", encoding="utf-8") as f:
        f.write(page)
    return out


def look(chrome, path, shots, width, settle):
    """Problems with one page, and its summary."""
    url = "file://" + os.path.abspath(path)
    target = chrome.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = chrome.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    problems = []
    try:
        for domain in ("Runtime", "Log", "Page"):
            chrome.call(domain + ".enable", {}, session)
        chrome.call("Emulation.setDeviceMetricsOverride",
                    {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session)
        nav = chrome.call("Page.navigate", {"url": url}, session)
        if nav.get("errorText"):
            return ["cannot open: " + nav["errorText"]], ""
        if not chrome.wait_event("Page.loadEventFired", session, chrome.deadline):
            raise TimeoutError("the page did not load")
        # late errors (a script run after load) have a moment to arrive
        chrome.wait_event("-none-", session, min(chrome.deadline, time.monotonic() + settle))
        r = chrome.call("Runtime.evaluate", {"expression": CHECK_JS, "returnByValue": True}, session)
        if "exceptionDetails" in r:
            raise RuntimeError("the check failed: %s" % r["exceptionDetails"].get("text"))
        res = json.loads(r["result"]["value"])
        # sorted: a failed load and a script's errors arrive in either order
        problems += sorted(console_problems(chrome.events, session))
        problems += res["problems"]
        if shots:
            height = max(200, min(int(res["height"]), 12000))
            chrome.call("Emulation.setDeviceMetricsOverride",
                        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                        session)
            shot = chrome.call("Page.captureScreenshot", {"format": "png"}, session)
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.splitext(os.path.basename(path))[0])
            with open(os.path.join(shots, name + ".png"), "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        summary = "%d chart%s, %d image%s" % (res["charts"], "" if res["charts"] == 1 else "s",
                                            res["images"], "" if res["images"] == 1 else "s")
        return problems, summary
    finally:
        chrome.events = [m for m in chrome.events if m.get("sessionId") != session]
        try:
            chrome.call("Target.closeTarget", {"targetId": target})
        except (RuntimeError, TimeoutError):
            pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="+")
    ap.add_argument("--shots", help="directory for the screenshots")
    ap.add_argument("--artifacts", default=".", help="where artifact:// paths are (.md pages)")
    ap.add_argument("--timeout", type=float, default=60, help="seconds for everything (60)")
    ap.add_argument("--settle", type=float, default=0.3, help="seconds to wait after load (0.3)")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    a = ap.parse_args()
    for p in a.pages:
        if not os.path.isfile(p):
            print("look.py: %s: no such file" % p, file=sys.stderr)
            return 2
    if a.shots:
        os.makedirs(a.shots, exist_ok=True)
    deadline = time.monotonic() + a.timeout
    tmp = tempfile.mkdtemp(prefix="look.")
    chrome = None
    bad = 0
    try:
        chrome = Chrome(a.chromium, os.path.join(tmp, "profile"), deadline)
        for p in a.pages:
            page = annotation_html(p, a.artifacts, tmp) if p.endswith(".md") else p
            problems, summary = look(chrome, page, a.shots, a.width, a.settle)
            for pr in problems:
                print("%s: %s" % (p, pr))
            if problems:
                bad += 1
            else:
                print("%s: ok: %s, no console errors" % (p, summary))
    except (TimeoutError, RuntimeError, OSError, ImportError) as e:
        print("look.py: %s" % e, file=sys.stderr)
        return 3
    finally:
        if chrome:
            chrome.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
