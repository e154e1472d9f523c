#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The web console in a real browser: headless Chromium driven over the
DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages ending
in NUL, on the browser's fds 3 and 4), Python's standard library only.

  console_check.py URL TOKEN PNG -- HOST-STREAM-COMMAND...

Checks what an operator sees (test_console.sh starts the daemons):
  - every drive, storage slot and mail slot with the barcode /api/elements has;
  - while the host command (iscsi_hosts ... stream) writes: a drive's bytes
    written and its MB/s on the page change between two reads;
  - a migration queued from the page's form runs and its row shows progress
    between 0 and 100 %, then done at 100 %; a screenshot of that page is a
    PNG of the viewport's size (written to PNG);
  - the form with a wrong token is refused (403, the refusal text shown,
    nothing moved); with the token, a move, and the page then shows the
    cartridge in its new slot.
Prints "-- step" lines; exits 1 with "FAIL: ..." on the first failure.
"""
import base64
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

CHROMIUM = "/usr/bin/chromium"
WIDTH, HEIGHT = 1280, 1000
PNG_MIN = 20 << 10  # a drawn library, not a blank page


def fail(msg):
    print("FAIL: console_check: " + msg, file=sys.stderr)
    sys.exit(1)


def step(msg):
    print("-- " + msg, flush=True)


class Browser:
    """One headless Chromium, one page, spoken to over the DevTools pipe."""

    def __init__(self, profile):
        to_r, to_w = os.pipe()      # we write commands, the browser reads them on fd 3
        from_r, from_w = os.pipe()  # the browser writes answers on fd 4
        # Above 4 first, so that placing them on 3 and 4 in the child cannot clobber one another.
        hi = [os.dup2(fd, 100 + i) for i, fd in enumerate((to_r, from_w))]

        def place():
            os.dup2(100, 3)
            os.dup2(101, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--disable-dev-shm-usage", "--remote-debugging-pipe", "--user-data-dir=" + profile,
             "--window-size=%d,%d" % (WIDTH, HEIGHT), "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(os.path.join(profile, "log"), "w"),
            preexec_fn=place, close_fds=False)
        for fd in [to_r, from_w] + hi:
            os.close(fd)
        self.w, self.r = to_w, from_r
        self.buf = b""
        self.next_id = 0
        self.session = None

    def send(self, method, params=None, session=True, timeout=20):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" not in self.buf:
                if time.monotonic() > deadline:
                    fail("%s: no answer from chromium within %d s" % (method, timeout))
                chunk = os.read(self.r, 1 << 20)
                if not chunk:
                    fail("%s: chromium closed its pipe" % method)
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            m = json.loads(raw)
            if m.get("id") == self.next_id:
                if "error" in m:
                    fail("%s: %s" % (method, m["error"]))
                return m.get("result", {})

    def open(self, url):
        t = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        a = self.send("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True}, session=False)
        self.session = a["sessionId"]
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
        self.send("Page.enable")
        self.send("Page.navigate", {"url": url})

    def eval(self, js):
        r = self.send("Runtime.evaluate", {"expression": js, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            fail("the page's script failed: %s" % r["exceptionDetails"].get("text"))
        return r["result"].get("value")

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=5)
        except SystemExit:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# What the page shows, read from its DOM: the same attributes and texts an operator reads.
READ = """(() => { try { return JSON.stringify({
  drives: [...document.querySelectorAll('.drive')].map(d => ({address: +d.dataset.address,
    barcode: d.dataset.barcode, state: d.dataset.state, written: +d.dataset.written,
    shown: d.querySelector('.bc').textContent, rate: d.querySelector('.rate').textContent})),
  elements: [...document.querySelectorAll('.el')].map(e => ({address: +e.dataset.address, type: e.dataset.type,
    barcode: e.dataset.barcode, shown: e.querySelector('.bc').textContent})),
  jobs: [...document.querySelectorAll('#jobs tbody tr')].map(t => ({id: +t.dataset.id, state: t.dataset.state,
    progress: +t.dataset.progress})),
  result: document.getElementById('action-result').textContent,
  status: document.getElementById('action-result').dataset.status || '',
  conn: document.getElementById('conn').textContent}); } catch (e) { return null; } })()"""


def read(b):
    """What the page shows now; {} while it is not loaded yet."""
    raw = b.eval(READ)
    return json.loads(raw) if raw else {"drives": [], "elements": [], "jobs": [], "result": "", "status": "", "conn": ""}


def until(what, seconds, probe):
    """probe() until it returns something true, within seconds; fails saying what did not happen."""
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.2)
    fail("%s within %d s" % (what, seconds))


def api(base, path, token):
    req = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def form(b, verb, fields):
    """Fills the page's action form and submits it, as an operator would."""
    js = "(() => { const v = document.getElementById('action-verb'); v.value = %s;" \
         " v.dispatchEvent(new Event('change'));" \
         " document.getElementById('action-result').textContent = '';" \
         " document.getElementById('action-result').dataset.status = '';" \
         " for (const [k, x] of Object.entries(%s))" \
         "   document.querySelector('#action-fields input[name=\"' + k + '\"]').value = x;" \
         " document.getElementById('action-form').requestSubmit(); return true; })()" % (
             json.dumps(verb), json.dumps(fields))
    b.eval(js)
    return until("the page shows the answer to %s" % verb, 15,
                 lambda: (lambda d: d if d["status"] else None)(read(b)))


def set_token(b, token):
    b.eval("(() => { document.getElementById('token').value = %s;"
           " document.getElementById('token-form').requestSubmit(); return true; })()" % json.dumps(token))


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        fail("%s is not a PNG" % path)
    return struct.unpack(">II", head[16:24])


def main():
    if len(sys.argv) < 6 or sys.argv[4] != "--":
        print("usage: console_check.py URL TOKEN PNG -- HOST-STREAM-COMMAND...", file=sys.stderr)
        sys.exit(2)
    base, token, png, host = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[5:]
    profile = tempfile.mkdtemp(prefix="vtl-chromium-")
    b = Browser(profile)
    stream = None
    try:
        step("headless chromium (pid %d) loads the console with the token in the address's fragment" % b.proc.pid)
        b.open(base + "/#token=" + token)
        lib = api(base, "/api/elements", token)["elements"]
        want = {e["address"]: (e["type"], e["barcode"] or "") for e in lib}

        def drawn():
            d = read(b)
            got = {e["address"]: (e["type"], e["barcode"]) for e in d["elements"]}
            got.update({x["address"]: ("drive", x["barcode"]) for x in d["drives"]})
            return d if got == {a: w for a, w in want.items() if w[0] != "transport"} else None
        d = until("the page shows every drive, slot and mail slot with /api/elements's barcodes", 20, drawn)
        for e in d["elements"]:
            if e["shown"] != (e["barcode"] or "empty"):
                fail("element %d shows '%s', not its barcode '%s'" % (e["address"], e["shown"], e["barcode"]))
        for x in d["drives"]:
            if x["shown"] != (x["barcode"] or "—"):
                fail("drive %d shows '%s', not '%s'" % (x["address"], x["shown"], x["barcode"]))
        print("   %d drives, %d slots and mail slots, barcodes as /api/elements has them"
              % (len(d["drives"]), len(d["elements"])))
        if token in b.eval("location.href"):
            fail("the token stayed in the page's address")

        step("a host writes: the page's bytes written and MB/s of its drive change")
        hostlog = os.path.join(profile, "host")
        with open(hostlog, "w") as out:
            stream = subprocess.Popen(host, stdout=out, stderr=subprocess.STDOUT)
        until("the host starts writing", 30, lambda: "-- writing" in open(hostlog).read())

        def busy_drive():
            for x in read(b)["drives"]:
                if x["state"] == "loaded" and not x["rate"].startswith("write 0.0 "):
                    return x
            return None
        first = until("a drive shows a write rate above 0 MB/s", 15, busy_drive)
        second = until("drive %d's bytes written grow on the page" % first["address"], 10,
                       lambda: (lambda x: x if x and x["written"] > first["written"] else None)(
                           next((y for y in read(b)["drives"] if y["address"] == first["address"]), None)))
        print("   drive %d: %s, written %d -> %d bytes" % (first["address"], second["rate"], first["written"],
                                                          second["written"]))

        step("a migration queued from the page runs: its row shows progress, then done at 100 %")
        bc = next(e["barcode"] for e in lib if e["type"] == "slot" and e["barcode"])
        r = form(b, "migrate", {"barcode": bc, "rate": "8", "library": "simlib"})
        if r["status"] != "200":
            fail("migrate %s from the page: %s %s" % (bc, r["status"], r["result"]))
        print("   the page says: " + r["result"])

        def running():
            j = [j for j in read(b)["jobs"] if j["state"] == "running"]
            return j[0] if j and 0 < j[0]["progress"] < 100 else None
        j = until("a running job with progress between 0 and 100 %", 30, running)
        print("   job %d running, %.1f %%" % (j["id"], j["progress"]))
        shot = b.send("Page.captureScreenshot", {"format": "png"})
        with open(png, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        size = os.path.getsize(png)
        dims = png_size(png)
        if dims != (WIDTH, HEIGHT) or size < PNG_MIN:
            fail("the screenshot is %dx%d, %d bytes: want %dx%d and at least %d" % (dims + (size, WIDTH, HEIGHT, PNG_MIN)))
        print("   screenshot %s: %dx%d, %d bytes" % (png, dims[0], dims[1], size))
        until("job %d shows done at 100 %%" % j["id"], 60,
              lambda: [x for x in read(b)["jobs"] if x["id"] == j["id"] and x["state"] == "done"
                       and x["progress"] == 100])

        step("with a wrong token the page's move is refused (403, its text shown) and nothing moves")
        src = next(e for e in lib if e["type"] == "slot" and e["barcode"] and e["barcode"] != bc)
        dst = [e for e in lib if e["type"] == "slot" and not e["barcode"]][-1]
        set_token(b, "not-the-token-at-all")
        r = form(b, "move", {"from": src["barcode"], "to": str(dst["address"])})
        if r["status"] != "403" or "give the token" not in r["result"]:
            fail("a move with a wrong token: %s '%s', want 403 and the refusal" % (r["status"], r["result"]))
        now = {e["address"]: e["barcode"] for e in api(base, "/api/elements", token)["elements"]}
        if now[src["address"]] != src["barcode"] or now[dst["address"]]:
            fail("the refused move moved something")
        print("   the page says: " + r["result"])

        step("with the token, the move is made and the page shows %s in slot %d" % (src["barcode"], dst["address"]))
        set_token(b, token)
        r = form(b, "move", {"from": src["barcode"], "to": str(dst["address"])})
        if r["status"] != "200":
            fail("the move with the token: %s %s" % (r["status"], r["result"]))
        print("   the page says: " + r["result"])
        until("the page shows %s in slot %d and slot %d empty" % (src["barcode"], dst["address"], src["address"]), 10,
              lambda: (lambda els: els.get(dst["address"]) == src["barcode"] and els.get(src["address"]) == "")(
                  {e["address"]: e["barcode"] for e in read(b)["elements"]}))
        step("a move the library refuses shows vtld's own words")
        r = form(b, "move", {"from": src["barcode"], "to": "9"})
        if r["status"] != "409" or not r["result"]:
            fail("a move to element 9: %s '%s', want 409 and vtld's reason" % (r["status"], r["result"]))
        print("   the page says: " + r["result"])
        step("the host's stream ends well")
        if stream.wait(timeout=60) != 0:
            fail("the host's stream failed (exit %d): %s" % (stream.returncode, open(hostlog).read()[-2000:]))
    finally:
        if stream and stream.poll() is None:
            stream.kill()
            stream.wait()
        b.close()
        shutil.rmtree(profile, ignore_errors=True)
    print("console_check: all steps passed")


if __name__ == "__main__":
    main()
