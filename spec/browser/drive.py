#!/usr/bin/env python3
"""Drives headless Chromium over the DevTools protocol on a pipe (no
network, no third-party module): reads a JSON list of steps on stdin,
prints a JSON list of results on stdout.

Steps:
  {"op": "open", "url": "file:///..."}   -> {"ms": load time}
  {"op": "eval", "expr": "js"}           -> {"value": ...}
  {"op": "click", "expr": "js giving an element"}
                                         -> {"ms": time to the click's end,
                                             "x": .., "y": ..}
  {"op": "prompt", "text": "answer"}     the next window.prompt gets text
  {"op": "screenshot", "path": "x.png"}  -> {}
Usage: drive.py [--chromium PATH] < steps.json
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, exe):
        self.profile = tempfile.mkdtemp(prefix="luaperf-chromium.")
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def fds():
            # the DevTools pipe: the browser reads fd 3 and writes fd 4
            # (through high numbers: a pipe may already sit on 3 or 4)
            a = os.dup(to_child_r)
            b = os.dup(from_child_w)
            a2 = os.dup2(a, 100)
            b2 = os.dup2(b, 101)
            os.dup2(a2, 3)
            os.dup2(b2, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                "--disable-extensions", "--user-data-dir=" + self.profile,
                "--remote-debugging-pipe", "--window-size=1280,900", "about:blank"]
        self.proc = subprocess.Popen(args, preexec_fn=fds, close_fds=False,
                                     stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=(open(os.environ["DRIVE_LOG"], "ab") if os.environ.get("DRIVE_LOG") else subprocess.DEVNULL))
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None
        self.prompt_text = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read_msg(self, deadline):
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.from_child, 1 << 16)
            if not chunk:
                raise EOFError("chromium closed the pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def handle_event(self, msg):
        if msg.get("method") == "Page.javascriptDialogOpening":
            text = self.prompt_text if self.prompt_text is not None else ""
            self.prompt_text = None
            self.send("Page.handleJavaScriptDialog", {"accept": True, "promptText": text})
        self.events.append(msg)

    def call(self, method, params=None, session=True, timeout=30):
        mid = self.send(method, params, session)
        deadline = time.time() + timeout
        while True:
            msg = self.read_msg(deadline)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            if "method" in msg:
                self.handle_event(msg)

    def wait_event(self, name, timeout=30):
        deadline = time.time() + timeout
        for i, ev in enumerate(self.events):
            if ev.get("method") == name:
                del self.events[i]
                return ev
        while True:
            msg = self.read_msg(deadline)
            if msg.get("method") == name:
                return msg
            if "method" in msg:
                self.handle_event(msg)

    def attach(self):
        t = self.call("Target.createTarget", {"url": "about:blank"}, session=False)
        a = self.call("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True},
                      session=False)
        self.session = a["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")

    def evaluate(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("js: %s" % json.dumps(r["exceptionDetails"])[:500])
        return r.get("result", {}).get("value")

    def close(self):
        try:
            self.call("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def run(steps, exe):
    b = Browser(exe)
    out = []
    try:
        b.attach()
        for st in steps:
            op = st["op"]
            if op == "open":
                t0 = time.time()
                b.events = []
                b.call("Page.navigate", {"url": st["url"]})
                b.wait_event("Page.loadEventFired")
                out.append({"ms": (time.time() - t0) * 1000})
            elif op == "eval":
                out.append({"value": b.evaluate(st["expr"])})
            elif op == "prompt":
                b.prompt_text = st["text"]
                out.append({})
            elif op == "click":
                # scrolled into view first: a tall graph runs past the window
                rect = b.evaluate("(function(){var e=(%s); if(!e) return null;"
                                  "e.scrollIntoView({block:'center', inline:'center'});"
                                  "var r=e.getBoundingClientRect();"
                                  "return [r.left+r.width/2, r.top+r.height/2];})()" % st["expr"])
                if rect is None:
                    raise RuntimeError("click: no element for " + st["expr"])
                x, y = rect
                t0 = time.time()
                for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
                    b.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y,
                                                        "button": "left", "clickCount": 1})
                # a round trip through the page: the click's handlers have run
                b.evaluate("1")
                out.append({"ms": (time.time() - t0) * 1000, "x": x, "y": y})
            elif op == "screenshot":
                shot = b.call("Page.captureScreenshot", {"format": "png"})
                with open(st["path"], "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
                out.append({})
            else:
                raise ValueError("unknown step " + op)
    finally:
        b.close()
    return out


def main():
    exe = "/usr/bin/chromium"
    if len(sys.argv) > 2 and sys.argv[1] == "--chromium":
        exe = sys.argv[2]
    steps = json.load(sys.stdin)
    try:
        print(json.dumps({"ok": True, "results": run(steps, exe)}))
    except Exception as e:  # reported to the spec as data, not a traceback
        print(json.dumps({"ok": False, "error": "%s: %s" % (type(e).__name__, e)}))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
