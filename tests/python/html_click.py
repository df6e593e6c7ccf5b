#!/usr/bin/python3
"""The interactive HTML page in a real browser: headless Chromium driven over its DevTools
protocol (python3-websocket). Opens `step --format html` (file://, a temporary folder), clicks a
cell of `scores`, of `scaled_scores`, of `weights` (a kept and a masked one) and of `output`, and
checks that each explanation's numbers equal `step --format json`'s (same flags) at the page's
precision; checks that the arrow keys and the buttons change the visible step; on
`mistake no-scale` checks that the switch hides and shows the buggy panels; on `flash` clicks a
cell of the full and of the tiled output (the followed row: its tiles' m, α, ℓ and acc) and on
`kv-cache` a cell of a decode step's output (the weighted sum of the cached V), each against its
own `--format json`; at 390 px checks that nothing but the scrollable matrices is wider than the
window. Screenshots at 1280 and 390 px go into OUT_DIR for review.

Usage: html_click.py ATTN_EXPLAIN_BINARY OUT_DIR. Exit 77 (skipped) when Chromium or
python3-websocket is missing (.ci/run installs both). Every wait polls a condition with a
generous deadline (a busy machine is slow, never wrong); Chromium is always killed.
"""
import base64
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

try:
    import websocket  # python3-websocket
except ImportError:
    print("python3-websocket not installed: skipped")
    sys.exit(77)

DEADLINE = 120.0  # seconds for any one condition
FLAGS = ["--mask", "causal", "--tokens", "the cat sat", "--seed", "7", "--d-k", "4"]
PRECISION = 4
NUMBER = r"-?\d+\.\d+"


def fail(msg):
    raise AssertionError(msg)


def shown(x):
    """A number as the page prints it (format_number: no "-0.0000")."""
    s = f"{x:.{PRECISION}f}"
    return s[1:] if s.startswith("-") and set(s[1:]) <= set("0.") else s


def poll(what, fn, deadline=DEADLINE):
    end = time.monotonic() + deadline
    last = None
    while time.monotonic() < end:
        last = fn()
        if last:
            return last
        time.sleep(0.1)
    fail(f"timed out waiting for {what} (last: {last!r})")


def die_with_parent():
    """In Chromium's process, before exec: killed when this script dies, even by SIGKILL."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class Browser:
    def __init__(self, work):
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if not exe:
            print("chromium not installed: skipped")
            sys.exit(77)
        self.profile = os.path.join(work, "profile")
        # --no-sandbox: CI runs as root; port 0: Chromium picks one and writes it to the profile.
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--remote-debugging-port=0", "--remote-allow-origins=*", "--no-first-run",
             "--user-data-dir=" + self.profile, "--window-size=1280,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "chromium.log"), "w"),
            preexec_fn=die_with_parent)
        self.ws = None
        self.next_id = 0

    def connect(self):
        port_file = os.path.join(self.profile, "DevToolsActivePort")

        def port():
            if self.proc.poll() is not None:
                fail("chromium exited early")
            try:
                with open(port_file) as f:
                    return f.readline().strip()
            except OSError:
                return None
        p = poll("DevToolsActivePort", port)

        def page_target():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{p}/json/list", timeout=10) as r:
                    targets = json.load(r)
            except OSError:
                return None
            pages = [t for t in targets if t.get("type") == "page"]
            return pages[0]["webSocketDebuggerUrl"] if pages else None
        url = poll("a page target", page_target)
        self.ws = websocket.create_connection(url, timeout=DEADLINE, suppress_origin=True)

    def call(self, method, **params):
        self.next_id += 1
        mine = self.next_id
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
        while True:  # events arrive in between: skip them
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mine:
                if "error" in msg:
                    fail(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            fail(f"script error in {expr!r}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def open(self, path):
        self.call("Page.navigate", url="file://" + path)
        poll(f"{path} to load and its script to run",
             lambda: self.js("document.readyState === 'complete' && "
                             "document.body.classList.contains('ax-js') && "
                             "document.querySelector('nav.ax-nav').hidden === false"))

    def click_at(self, expr):
        """A real mouse click at the centre of the element `expr` (scrolled into view)."""
        rect = self.js(f"(function(){{var e = {expr}; e.scrollIntoView({{block:'center'}});"
                       "var r = e.getBoundingClientRect();"
                       "return [r.left + r.width / 2, r.top + r.height / 2];})()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=rect[0], y=rect[1], button="left",
                      clickCount=1)

    def key(self, name, code):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=name, code=name,
                      windowsVirtualKeyCode=code)

    def screenshot(self, width, path, mobile=False):
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=900 if not mobile else 844,
                  deviceScaleFactor=1, mobile=mobile)
        poll(f"the layout at {width} px", lambda: self.js("window.innerWidth") == width)
        # the clicked cell (if any) back in view above the note's panel after the reflow
        self.js("(function(){var c = document.querySelector('td.ax-on');"
                "if (c) window.scrollBy(0, c.getBoundingClientRect().top - window.innerHeight / 4);})()")
        shot = self.call("Page.captureScreenshot", format="png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))

    def close(self):
        try:
            if self.ws:
                self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def visible_step(b):
    return b.js("(function(){var s = document.querySelectorAll('main > section'), v = [];"
                "for (var k = 0; k !== s.length; k++) if (!s[k].hidden) v.push(s[k].id);"
                "return v.join(' ');})()")


def go_to(b, section):
    b.js(f"location.hash = '#{section}'")
    poll(f"section {section}", lambda: visible_step(b) == section)


def matrix_cell(section, i, j):
    """JS for cell (i, j) of the step's own matrix in `section` (the first with notes: an extra such
    as Kᵀ may come before it)."""
    return (f"document.querySelector('#{section} table.matrix td[data-n]').closest('table')"
            f".tBodies[0].rows[{i}].cells[{j + 1}]")


def explanation_of(b, section, i, j, cell=None, want=None):
    """Clicks cell (i, j) of the first matrix of `section` (or the cell `cell`, JS); returns (title,
    terms, results) once the note whose title holds `want` (default "[i, j]") shows."""
    go_to(b, section)
    cell = cell or matrix_cell(section, i, j)
    if not b.js(f"{cell}.hasAttribute('data-n')"):
        fail(f"{section}[{i}, {j}] has no note")
    b.click_at(cell)
    want = want or f"[{i}, {j}]"
    note = poll(f"the note of {section}{want}", lambda: b.js(
        "(function(){var a = document.querySelector('aside.ax-note');"
        "if (a.hidden) return null; var t = a.querySelector('.ax-title').textContent;"
        f"if (t.indexOf('{want}') === -1) return null;"
        "return [t, Array.prototype.map.call(a.querySelectorAll('li'), function(x){return x.textContent;}),"
        "Array.prototype.map.call(a.querySelectorAll('.ax-result'), function(x){return x.textContent;})];})()"))
    return note


def check_dot(b, data, section, i, j):
    title, terms, results = explanation_of(b, section, i, j)
    Q, K = data["Q"], data["K"]
    if len(terms) != len(Q[i]):
        fail(f"{section}[{i}, {j}]: {len(terms)} terms for d_k = {len(Q[i])}: {terms}")
    for c, line in enumerate(terms):
        nums = re.findall(NUMBER, line.split(":", 1)[1])
        if nums[:2] != [shown(Q[i][c]), shown(K[j][c])]:
            fail(f"{section}[{i}, {j}] term {c}: {line!r}, JSON q = {Q[i][c]}, k = {K[j][c]}")
        if abs(float(nums[2]) - Q[i][c] * K[j][c]) > 2e-4:
            fail(f"{section}[{i}, {j}] term {c}: product {nums[2]} != {Q[i][c] * K[j][c]}")
    if re.findall(NUMBER, results[0]) != [shown(data["scores"][i][j])]:
        fail(f"{section}[{i}, {j}]: sum {results[0]!r}, JSON scores = {data['scores'][i][j]}")
    if section == "p-scaled_scores":
        want = [shown(data["scores"][i][j]), shown(math.sqrt(len(Q[i]))), shown(data["scaled_scores"][i][j])]
        if re.findall(NUMBER, results[1]) != want:
            fail(f"{section}[{i}, {j}]: {results[1]!r}, want {want}")
    print(f"ok   {section}[{i}, {j}]: {title} ... {' '.join(results)}")


def check_weight(b, data, i, j):
    title, terms, results = explanation_of(b, "p-weights", i, j)
    row = data["masked_scores"][i]
    finite = [x for x in row if x is not None and not (isinstance(x, str)) and math.isfinite(x)]
    top = max(finite)
    if re.findall(NUMBER, terms[0]) != [shown(top)]:
        fail(f"weights[{i}, {j}]: max {terms[0]!r}, JSON row {row}")
    total = 0.0
    for k, line in enumerate(terms[1:]):
        x = row[k]
        if not isinstance(x, (int, float)) or not math.isfinite(x):
            if "−∞" not in line:
                fail(f"weights[{i}, {j}]: masked key {k} reads {line!r}")
            continue
        e = math.exp(x - top)
        total += e
        nums = re.findall(NUMBER, line.split(":", 1)[1])
        if nums[:2] != [shown(x), shown(top)] or abs(float(nums[2]) - e) > 2e-4:
            fail(f"weights[{i}, {j}] exp {k}: {line!r}, JSON score {x}, exp {e}")
    if abs(float(re.findall(NUMBER, results[0])[0]) - total) > 2e-4 * max(1, total):
        fail(f"weights[{i}, {j}]: {results[0]!r}, sum of exps {total}")
    if re.findall(NUMBER, results[1])[-1] != shown(data["weights"][i][j]):
        fail(f"weights[{i}, {j}]: {results[1]!r}, JSON weight {data['weights'][i][j]}")
    print(f"ok   weights[{i}, {j}]: {title} ... {' '.join(results)}")


def check_output(b, data, i, c):
    title, terms, results = explanation_of(b, "p-output", i, c)
    W, V = data["weights"], data["V"]
    for j, line in enumerate(terms):
        nums = re.findall(NUMBER, line.split(":", 1)[1])
        if nums[:2] != [shown(W[i][j]), shown(V[j][c])]:
            fail(f"output[{i}, {c}] term {j}: {line!r}, JSON w = {W[i][j]}, v = {V[j][c]}")
    if re.findall(NUMBER, results[0]) != [shown(data["output"][i][c])]:
        fail(f"output[{i}, {c}]: {results[0]!r}, JSON output = {data['output'][i][c]}")
    print(f"ok   output[{i}, {c}]: {title} ... {' '.join(results)}")


FLASH_FLAGS = ["--mask", "causal", "--seq-len", "7", "--block-q", "3", "--block-k", "2", "--row", "5",
               "--seed", "7"]
KV_FLAGS = ["--seed", "7", "--heads", "4", "--kv-heads", "2"]


def nth_matrix(section, k, i, j):
    """JS for cell (i, j) of the k-th matrix of `section`."""
    return f"document.querySelectorAll('#{section} table.matrix')[{k}].tBodies[0].rows[{i}].cells[{j + 1}]"


def check_flash(b, data, i, c):
    """flash's result page: full[i, c] is its weighted sum of V; output[i, c] the same sum and, on the
    followed row, its tiles (m, α, ℓ, acc as the JSON's "tiles") and acc ÷ ℓ."""
    for k, key in ((0, "full"), (1, "output")):
        title, terms, results = explanation_of(b, "p-result", i, c, nth_matrix("p-result", k, i, c),
                                               f"{key}[{i}, {c}]")
        if re.findall(NUMBER, results[0]) != [shown(data[key][i][c])]:
            fail(f"flash {key}[{i}, {c}]: {results[0]!r}, JSON {data[key][i][c]}")
        products = [t for t in terms if t.startswith("j = ")]
        if len(products) != len(data["full"]):
            fail(f"flash {key}[{i}, {c}]: {len(products)} products for n = {len(data['full'])}")
        total = sum(float(re.findall(NUMBER, t.split(":", 1)[1])[2]) for t in products)
        if abs(total - data[key][i][c]) > 1e-3 * len(products):
            fail(f"flash {key}[{i}, {c}]: the products add to {total}, JSON {data[key][i][c]}")
        if key == "output" and i == data["row"]:
            tiles = [t for t in terms if "acc[" in t]
            if len(tiles) != len(data["tiles"]):
                fail(f"flash output[{i}, {c}]: {len(tiles)} tile lines, JSON {len(data['tiles'])}")
            for line, t in zip(tiles, data["tiles"]):
                if f"acc[{c}] = {shown(t['acc'][c])}" not in line:
                    fail(f"flash tile {t['tile']}: {line!r}, JSON acc {t['acc'][c]}")
                if not t["skipped"] and f"α = {shown(t['alpha'])}" not in line:
                    fail(f"flash tile {t['tile']}: {line!r}, JSON alpha {t['alpha']}")
            last = data["tiles"][-1]
            want = [shown(last["acc"][c]), shown(last["l_new"]), shown(data["output"][i][c])]
            if re.findall(NUMBER, results[-1])[-3:] != want:
                fail(f"flash output[{i}, {c}]: {results[-1]!r}, want {want}")
        print(f"ok   flash {key}[{i}, {c}]: {title} ... {' '.join(results)}")


def check_kvcache(b, data, k, c):
    """kv-cache's decode step k: out[c] is the weighted sum of the cached V with the JSON's weights."""
    step = data["steps"][k]
    section = f"p-step-{k}"
    cell = (f"Array.prototype.filter.call(document.querySelectorAll('#{section} table.matrix'),"
            "function(t){return t.tBodies[0].rows[0].cells[0].textContent.indexOf('out_') === 0;})[0]"
            f".tBodies[0].rows[0].cells[{c + 1}]")
    pos = step["positions"][1]
    title, terms, results = explanation_of(b, section, 0, c, cell, f"out_{pos}[{c}]")
    head = c // data["config"]["d_head"]
    weights = step["weights"][head][-1]
    if len(terms) != len(weights):
        fail(f"kv-cache out_{pos}[{c}]: {len(terms)} terms for {len(weights)} cache entries")
    for j, (line, w) in enumerate(zip(terms, weights)):
        nums = re.findall(NUMBER, line.split(":", 1)[1])
        if nums[0] != shown(w):
            fail(f"kv-cache out_{pos}[{c}] entry {j}: {line!r}, JSON weight {w}")
    if re.findall(NUMBER, results[0]) != [shown(step["output"][-1][c])]:
        fail(f"kv-cache out_{pos}[{c}]: {results[0]!r}, JSON output {step['output'][-1][c]}")
    print(f"ok   kv-cache out_{pos}[{c}]: {title} ... {' '.join(results)}")


def check_navigation(b):
    go_to(b, "p-X")
    order = b.js("Array.prototype.map.call(document.querySelectorAll('main > section'),"
                 "function(s){return s.id;})")
    b.key("ArrowRight", 39)
    poll("ArrowRight to show the second step", lambda: visible_step(b) == order[1])
    b.key("ArrowRight", 39)
    poll("ArrowRight to show the third step", lambda: visible_step(b) == order[2])
    b.key("ArrowLeft", 37)
    poll("ArrowLeft to go back", lambda: visible_step(b) == order[1])
    b.click_at("document.querySelector('nav.ax-nav .ax-next')")
    poll("the next button", lambda: visible_step(b) == order[2])
    b.click_at("document.querySelector('nav.ax-nav .ax-all')")
    poll("the show-all button", lambda: visible_step(b) == " ".join(order))
    b.click_at("document.querySelector('nav.ax-nav .ax-all')")
    poll("one at a time again", lambda: visible_step(b) == order[2])
    print(f"ok   navigation: arrow keys and buttons over {len(order)} steps")


def check_mistake_switch(b, path):
    b.open(path)
    b.click_at("document.querySelector('nav.ax-nav .ax-all')")
    visible_bugs = ("Array.prototype.filter.call(document.querySelectorAll('.ax-bug'),"
                    "function(e){return e.offsetParent !== null;}).length")
    poll("the buggy panels", lambda: b.js(visible_bugs) > 0)
    box = "document.querySelector('nav.ax-nav .ax-bugswitch input')"
    b.click_at(box)
    poll("the switch to hide the buggy panels", lambda: b.js(visible_bugs) == 0 and not b.js(f"{box}.checked"))
    if b.js("document.querySelectorAll('table.matrix').length") == 0:
        fail("the correct run went with the mistake")
    b.click_at(box)
    poll("the switch to show them again", lambda: b.js(visible_bugs) > 0)
    print("ok   mistake switch: off hides the buggy panels, on shows them beside the correct run")


def check_no_overflow(b, page):
    """At the current width, nothing is wider than the window but the scrollable figures."""
    wide = b.js("(function(){var w = document.documentElement.clientWidth, out = [];"
                "document.querySelectorAll('main *').forEach(function(e){"
                "if (e.closest('.scroll')) return; var r = e.getBoundingClientRect();"
                "if (r.width !== 0 && r.right > w + 1) out.push(e.tagName + '.' + e.className);});"
                "return [document.documentElement.scrollWidth > w, out.slice(0, 5)];})()")
    if wide[0] or wide[1]:
        fail(f"{page}: overflows at {b.js('window.innerWidth')} px: {wide}")


def run(binary, out_dir, work):
    def make(args, name):
        path = os.path.join(work, name)
        with open(path, "w") as f:
            subprocess.run([binary] + args, stdout=f, check=True, timeout=DEADLINE)
        return path
    step_html = make(["step"] + FLAGS + ["--format", "html"], "step.html")
    step_json = make(["step"] + FLAGS + ["--format", "json"], "step.json")
    mistake_html = make(["mistake", "no-scale", "--format", "html"], "mistake.html")
    zh_html = make(["step"] + FLAGS + ["--format", "html", "--lang", "zh"], "step-zh.html")
    with open(step_json) as f:
        data = {s["id"]: s.get("data") for s in json.load(f)["steps"]}
    flash_html = make(["flash"] + FLASH_FLAGS + ["--format", "html"], "flash.html")
    with open(make(["flash"] + FLASH_FLAGS + ["--format", "json"], "flash.json")) as f:
        flash_data = json.load(f)
    kv_html = make(["kv-cache"] + KV_FLAGS + ["--format", "html"], "kv.html")
    with open(make(["kv-cache"] + KV_FLAGS + ["--format", "json"], "kv.json")) as f:
        kv_data = json.load(f)

    b = Browser(work)
    try:
        b.connect()
        b.call("Page.enable")
        b.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        b.open(step_html)
        check_navigation(b)
        check_dot(b, data, "p-scores", 1, 2)
        check_dot(b, data, "p-scaled_scores", 2, 0)
        check_weight(b, data, 2, 1)
        check_weight(b, data, 0, 0)
        if not b.js("document.querySelectorAll('#p-weights td.masked').length === 3"):
            fail("the 3 masked weights of a causal n = 3 are not marked masked")
        check_output(b, data, 1, 0)
        check_dot(b, data, "p-scores", 1, 2)  # pinned: the shots show a note
        b.screenshot(1280, os.path.join(out_dir, "step-scores-1280.png"))
        b.screenshot(390, os.path.join(out_dir, "step-scores-390.png"), mobile=True)
        for section in ("p-X", "p-weights", "p-output", "p-summary"):
            go_to(b, section)
            check_no_overflow(b, "step " + section)
        b.screenshot(390, os.path.join(out_dir, "step-summary-390.png"), mobile=True)
        b.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        check_mistake_switch(b, mistake_html)
        b.screenshot(1280, os.path.join(out_dir, "mistake-all-1280.png"))
        b.screenshot(390, os.path.join(out_dir, "mistake-all-390.png"), mobile=True)
        check_no_overflow(b, "mistake no-scale")
        b.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        b.open(zh_html)
        if b.js("document.documentElement.lang") != "zh":
            fail("the --lang zh page's lang is not zh")
        go_to(b, "p-weights")
        b.click_at(matrix_cell("p-weights", 1, 0))
        poll("a Chinese note", lambda: "softmax" in (b.js("document.querySelector('aside.ax-note').textContent") or ""))
        b.screenshot(390, os.path.join(out_dir, "step-zh-weights-390.png"), mobile=True)
        check_no_overflow(b, "step --lang zh p-weights")
        for page, check, shots in ((flash_html, lambda: check_flash(b, flash_data, 5, 1), "flash-output"),
                                   (kv_html, lambda: check_kvcache(b, kv_data, 2, 5), "kvcache-output")):
            b.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1,
                   mobile=False)
            b.open(page)
            check()
            b.screenshot(1280, os.path.join(out_dir, f"{shots}-1280.png"))
            b.screenshot(390, os.path.join(out_dir, f"{shots}-390.png"), mobile=True)
            check_no_overflow(b, shots)
    finally:
        b.close()
    print(f"screenshots in {out_dir}")


def main():
    binary, out_dir = sys.argv[1], sys.argv[2]
    # ctest's timeout sends SIGTERM: leave through the finally blocks, which kill Chromium.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="attn-click-")
    try:
        run(binary, out_dir, work)
    except (AssertionError, subprocess.CalledProcessError, websocket.WebSocketException) as e:
        print(f"FAIL {e}")
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
