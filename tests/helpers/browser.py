"""Headless Chromium, driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: NUL-terminated JSON on file descriptors 3 and 4), standard
library only; and the one rule for a missing Chromium (:func:`require_chromium`): skip
locally with the install hint, fail where ``CI`` is set, for every browser test."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = next((p for name in ("chromium", "chromium-browser", "google-chrome", "chrome")
                 if (p := shutil.which(name))), None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe"]
TIMEOUT = 60.0


class DevTools:
    """A minimal DevTools-protocol client over Chromium's debugging pipe."""

    def __init__(self, pid: int, to_browser: int, from_browser: int) -> None:
        self.pid, self.out, self.inp = pid, to_browser, from_browser
        self.next_id = 0
        self.buffer = b""
        self.events: list[dict[str, Any]] = []

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self.inp, 1 << 16)
            if not chunk:
                raise RuntimeError(f"Chromium (pid {self.pid}) closed the pipe")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)  # type: ignore[no-any-return]

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command and return its result, keeping the events that arrive meanwhile."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]  # type: ignore[no-any-return]
            self.events.append(reply)


@contextmanager
def chromium() -> Iterator[DevTools]:
    """Start headless Chromium with a fresh profile, talking DevTools over a pipe."""
    binary = require_chromium()
    profile = tempfile.mkdtemp(prefix="reconsim-chromium-")
    to_r, to_w = os.pipe()      # we write commands, Chromium reads them on fd 3
    from_r, from_w = os.pipe()  # Chromium writes on fd 4, we read
    # Copies above fd 9, so that moving them onto fds 3 and 4 in the child cannot clobber
    # one with the other; dup2 also clears close-on-exec on the targets.
    child_in = fcntl.fcntl(to_r, fcntl.F_DUPFD_CLOEXEC, 10)
    child_out = fcntl.fcntl(from_w, fcntl.F_DUPFD_CLOEXEC, 10)
    for fd in (to_r, from_w):
        os.close(fd)
    pid = os.posix_spawn(binary, [binary, *FLAGS, f"--user-data-dir={profile}",
                                    "about:blank"], os.environ, file_actions=[
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_DUP2, child_in, 3),
        (os.POSIX_SPAWN_DUP2, child_out, 4),
    ])
    os.close(child_in)
    os.close(child_out)
    try:
        yield DevTools(pid, to_w, from_r)
    finally:
        os.close(to_w)
        os.close(from_r)
        _reap(pid)
        shutil.rmtree(profile, ignore_errors=True)


def _reap(pid: int) -> None:
    """Wait up to 10 s for Chromium to exit after Browser.close, then kill it."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def load_page(url: str) -> dict[str, Any]:
    """Open ``url``, wait until its charts settle; return their state, console errors,
    exceptions and every request that was not for a local file."""
    with chromium() as dt:
        target = dt.call("Target.createTarget", url="about:blank")["targetId"]
        session = dt.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            dt.call(f"{domain}.enable", session)
        dt.call("Page.navigate", session, url=url)
        deadline = time.monotonic() + TIMEOUT
        state = None
        while time.monotonic() < deadline:
            state = dt.call("Runtime.evaluate", session, returnByValue=True,
                            expression="document.body ? document.body.dataset.charts : null"
                            )["result"].get("value")
            if state:
                break
            time.sleep(0.2)
        # data-marks: the data marks in the chart's Vega scenegraph (the page counts them
        # once drawn, SVG or canvas alike); svg_marks: drawn SVG elements, for SVG charts.
        charts = dt.call("Runtime.evaluate", session, returnByValue=True, expression="""
            Array.from(document.querySelectorAll("div.chart")).map(el => ({
              figure: el.dataset.figure, rendered: el.dataset.rendered || null,
              renderer: el.dataset.renderer,
              views: el.querySelectorAll("svg.marks, canvas.marks").length,
              marks: Number(el.dataset.marks || 0),
              svg_marks: el.querySelectorAll("svg.marks path, svg.marks text").length}))
        """)["result"]["value"]
        dt.call("Browser.close")
    events = dt.events
    errors = [e["params"] for e in events
              if e.get("method") == "Runtime.consoleAPICalled"
              and e["params"]["type"] in ("error", "assert", "warning")]
    errors += [e["params"]["entry"] for e in events
               if e.get("method") == "Log.entryAdded"
               and e["params"]["entry"]["level"] in ("error", "warning")]
    exceptions = [e["params"] for e in events if e.get("method") == "Runtime.exceptionThrown"]
    requests = [e["params"]["request"]["url"] for e in events
                if e.get("method") == "Network.requestWillBeSent"]
    remote = [u for u in requests if not u.startswith(("file:", "data:", "blob:", "about:"))]
    return {"state": state, "charts": charts, "errors": errors, "exceptions": exceptions,
            "remote_requests": remote}


def require_chromium() -> str:
    """The Chromium binary; without one, skip locally and fail where ``CI`` is set. Every
    test marked ``browser`` calls it first (``tests/conftest.py``), and so does
    :func:`chromium`."""
    if CHROMIUM is None:
        why = "no chromium binary on PATH (apt-get install -y chromium)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and {why}", pytrace=False)
        pytest.skip(why)
    return CHROMIUM
