"""Headless Chromium, driven over the DevTools protocol on a pipe: load a
replay page from disk, wait until it has drawn, take a screenshot and collect
what the page wrote to its console.

Uses Debian's ``chromium`` (``CHROMIUM`` overrides the binary) with a fresh
profile, software WebGL (SwiftShader) and no network services, so it runs as
root in CI and on machines without a GPU.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from eels_gz.errors import EelsError

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-quic", "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--no-default-browser-check", "--remote-debugging-pipe")


class BrowserError(EelsError):
    """Chromium is missing, failed to start, or the page did not become ready."""


def chromium_path() -> str | None:
    """The Chromium binary: ``$CHROMIUM``, else ``chromium`` or ``chromium-browser`` on PATH."""
    env = os.environ.get("CHROMIUM")
    if env:
        return env if Path(env).is_file() else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class PageResult:
    png: bytes
    console: list[dict] = field(default_factory=list)  # {"level", "text"} of every console message and exception
    state: dict = field(default_factory=dict)  # window.__replay when the screenshot was taken

    @property
    def errors(self) -> list[str]:
        return [m["text"] for m in self.console if m["level"] in ("error", "exception")]


class _Pipe:
    def __init__(self, binary: str, width: int, height: int):
        self.profile = tempfile.mkdtemp(prefix="eels_gz_chromium_")
        to_browser_r, self._w = os.pipe()
        self._r, from_browser_w = os.pipe()
        # the DevTools pipe is fd 3 (commands in) and fd 4 (replies out) in the child
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            pass_fds=(3, 4), preexec_fn=lambda: (os.dup2(to_browser_r, 3), os.dup2(from_browser_w, 4)))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30.0):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline, method)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise BrowserError(f"Chromium: {method} failed: {reply['error'].get('message')}")
                return reply.get("result", {})
            self.events.append(reply)

    def _read(self, deadline: float, what: str) -> dict:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                err = self.proc.stderr.read1(4000).decode(errors="replace") if self.proc.poll() is not None else ""
                raise BrowserError(f"Chromium did not answer {what}" + (f": {err.strip()}" if err else " in time"))
            ready, _, _ = select.select([self._r], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    continue
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(line)

    def close(self) -> None:
        try:
            os.write(self._w, json.dumps({"id": self._id + 1, "method": "Browser.close"}).encode() + b"\0")
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        for fd in (self._w, self._r):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.proc.stderr:
            self.proc.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def _console(events: list[dict]) -> list[dict]:
    out = []
    for e in events:
        method, p = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            out.append({"level": "error" if p.get("type") in ("error", "assert") else p.get("type", "log"),
                        "text": text})
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append({"level": "exception",
                        "text": d.get("exception", {}).get("description") or d.get("text", "exception")})
        elif method == "Log.entryAdded":
            entry = p.get("entry", {})
            out.append({"level": entry.get("level", "info"), "text": entry.get("text", "")})
    return out


def screenshot(html_file: str | Path, fragment: str = "", width: int = 960, height: int = 600,
               timeout: float = 60.0, settle_frames: int = 3) -> PageResult:
    """Open ``html_file#fragment`` in headless Chromium, wait for ``window.__replay.ready`` and a few more
    frames, and return the PNG screenshot, the console messages and the page's replay state."""
    binary = chromium_path()
    if binary is None:
        raise BrowserError("Chromium is not installed (Debian: apt-get install chromium; or set CHROMIUM)")
    url = Path(html_file).resolve().as_uri() + (f"#{fragment}" if fragment else "")
    pipe = _Pipe(binary, width, height)
    try:
        targets = pipe.send("Target.getTargets")["targetInfos"]
        page = next((t for t in targets if t["type"] == "page"), None)
        target = page["targetId"] if page else pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            pipe.send(f"{domain}.enable", session=session)
        pipe.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session)
        pipe.send("Page.navigate", {"url": url}, session)
        deadline = time.monotonic() + timeout
        state: dict = {}
        frames = None
        while time.monotonic() < deadline:
            value = pipe.send("Runtime.evaluate", {"expression": "JSON.stringify(window.__replay || null)",
                                                   "returnByValue": True}, session).get("result", {}).get("value")
            state = json.loads(value) if value else {}
            if state and state.get("ready"):
                frames = state.get("renders", 0) if frames is None else frames
                if state.get("renders", 0) >= frames + settle_frames:
                    break
            time.sleep(0.1)
        else:
            raise BrowserError(f"{html_file}: the page did not draw within {timeout:.0f} s "
                               f"(console: {_console(pipe.events)[-5:]})")
        png = base64.b64decode(pipe.send("Page.captureScreenshot", {"format": "png"}, session)["data"])
        return PageResult(png, _console(pipe.events), state)
    finally:
        pipe.close()
