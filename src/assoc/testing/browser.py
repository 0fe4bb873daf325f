"""A headless Chromium driven over the DevTools protocol, to test HTML pages (the study report) in a real browser.

``with HeadlessChromium() as browser: page = browser.open(path)`` loads a file and records what a
reader's browser does with it: every console message (``page.console``: level and text), every
uncaught exception (``page.exceptions``), every request the page makes (``page.requests``: URLs, the
document's own included) and every log entry of the browser (``page.log``); ``page.evaluate(js)``
returns the value of a JavaScript expression (a DOM query, a click). Chromium runs with a throw-away
profile and the flags that keep it from reaching the network on its own (``CHROMIUM_FLAGS``).

The browser is Debian's ``chromium`` (``apt-get install chromium``; ``make setup`` installs it where
apt is usable) or the executable named by ``$ASSOC_CHROMIUM``; the protocol goes over a WebSocket
(the ``websockets`` package, in the ``test`` extra). Nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Flags of every run: headless, no sandbox (containers run as root), and nothing that calls home.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--metrics-recording-only",
    "--mute-audio",
)
EXECUTABLES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserError(RuntimeError):
    """The browser could not be started or did not answer."""


def find_chromium() -> str | None:
    """The Chromium executable: ``$ASSOC_CHROMIUM``, else the first of ``EXECUTABLES`` on ``PATH``."""
    chosen = os.environ.get("ASSOC_CHROMIUM")
    if chosen:
        return chosen if Path(chosen).exists() or shutil.which(chosen) else None
    for name in EXECUTABLES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Page:
    """A loaded page: what it logged, threw and requested, and a way to ask it questions."""

    url: str
    console: list[tuple[str, str]] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    log: list[tuple[str, str]] = field(default_factory=list)
    _browser: HeadlessChromium | None = None
    _session: str = ""

    @property
    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log entries of level error, one text each."""
        return (
            [text for level, text in self.console if level in ("error", "assert")]
            + list(self.exceptions)
            + [text for level, text in self.log if level == "error"]
        )

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable values; promises awaited)."""
        assert self._browser is not None
        reply = self._browser.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=self._session,
        )
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"the page threw: {text}")
        return reply.get("result", {}).get("value")

    def screenshot(self, path: str | Path, *, width: int = 1280) -> Path:
        """Save a PNG of the whole page (for looking at a report while working on it)."""
        import base64

        assert self._browser is not None
        height = int(self.evaluate("document.documentElement.scrollHeight") or 800)
        self._browser.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": min(height, 16000), "deviceScaleFactor": 1, "mobile": False},
            session=self._session,
        )
        shot = self._browser.call("Page.captureScreenshot", {"format": "png"}, session=self._session)
        Path(path).write_bytes(base64.b64decode(shot["data"]))
        return Path(path)


class HeadlessChromium:
    """A headless Chromium process and its DevTools connection (a context manager).

    Parameters
    ----------
    executable:
        The browser (default: [`find_chromium`][assoc.testing.browser.find_chromium]).
    timeout:
        Seconds to wait for the browser to start and for a page to load.
    """

    def __init__(self, executable: str | None = None, *, timeout: float = 60.0) -> None:
        found = executable or find_chromium()
        if found is None:
            raise BrowserError(
                "no Chromium found: apt-get install chromium (or set ASSOC_CHROMIUM to a Chromium or Chrome executable)"
            )
        self.executable = found
        self.timeout = timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._profile: str | None = None
        self._socket: Any = None
        self._connection: contextlib.ExitStack | None = None
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> HeadlessChromium:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the browser with a throw-away profile and connect to it."""
        from websockets.sync.client import connect

        self._profile = tempfile.mkdtemp(prefix="assoc-chromium-")
        command = [
            self.executable,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={self._profile}",
            "--remote-debugging-port=0",  # the browser picks a free port and writes it to DevToolsActivePort
            "about:blank",
        ]
        self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if self._process.poll() is not None:
                raise BrowserError(f"{self.executable} exited with status {self._process.returncode} at start")
            if time.monotonic() > deadline:
                self.close()
                raise BrowserError(f"{self.executable} did not open its DevTools port in {self.timeout:.0f} s")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        # entered as a context manager (websockets 17 warns otherwise), left in close()
        self._connection = contextlib.ExitStack()
        self._socket = self._connection.enter_context(
            connect(f"ws://127.0.0.1:{port}{path}", max_size=None, open_timeout=self.timeout)
        )

    def close(self) -> None:
        """Close the connection, end the browser, remove its profile."""
        if self._connection is not None:
            try:
                self._connection.close()
            except Exception:  # the browser may be gone already
                pass
            self._connection = None
            self._socket = None
        if self._process is not None:
            if self._process.poll() is None:
                self._process.terminate()
                try:
                    self._process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._process.kill()
                    self._process.wait(timeout=10)
            self._process = None
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None

    def call(self, method: str, params: dict[str, Any] | None = None, *, session: str = "") -> dict[str, Any]:
        """Send one DevTools command and return its result; events that arrive meanwhile are kept."""
        if self._socket is None:
            raise BrowserError("the browser is not running")
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._socket.send(json.dumps(message))
        for reply in self._messages(self.timeout):
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self._events.append(reply)
        raise BrowserError(f"{method}: no answer in {self.timeout:.0f} s")

    def _messages(self, timeout: float) -> Iterator[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                raw = self._socket.recv(timeout=max(deadline - time.monotonic(), 0.01))
            except TimeoutError:
                return
            yield json.loads(raw)

    def open(self, target: str | Path, *, settle: float = 0.5) -> Page:
        """Load a file (or URL) in a new tab and record what happens until it has loaded and ``settle`` s passed."""
        url = Path(target).resolve().as_uri() if not str(target).startswith(("file:", "http:", "https:")) else target
        url = str(url)
        created = self.call("Target.createTarget", {"url": "about:blank"})
        session = self.call("Target.attachToTarget", {"targetId": created["targetId"], "flatten": True})["sessionId"]
        page = Page(url, _browser=self, _session=session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=session)
        self._events.clear()
        self.call("Page.navigate", {"url": url}, session=session)
        loaded = False
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            events = self._events
            self._events = []
            for event in events:
                loaded |= self._record(page, session, event)
            if loaded:
                break
            for event in self._messages(0.2):
                loaded |= self._record(page, session, event)
                if loaded:
                    break
        if not loaded:
            raise BrowserError(f"{url} did not finish loading in {self.timeout:.0f} s")
        for event in self._messages(settle):  # late messages: timers, errors after the load event
            self._record(page, session, event)
        return page

    @staticmethod
    def _record(page: Page, session: str, event: dict[str, Any]) -> bool:
        """Keep what an event says about ``page``; whether it is the page's load event."""
        if event.get("sessionId") != session:
            return False
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            page.console.append((params.get("type", ""), text))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            page.exceptions.append(details.get("exception", {}).get("description") or details.get("text", ""))
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            page.log.append((entry.get("level", ""), f"{entry.get('text', '')} {entry.get('url', '')}".strip()))
        elif method == "Network.requestWillBeSent":
            page.requests.append(params.get("request", {}).get("url", ""))
        elif method == "Page.loadEventFired":
            return True
        return False
