"""The report's charts drawn: each Vega-Lite spec as SVG (vl-convert), that SVG as PNG.

vl-convert holds the GIL while it draws: a thread drawing beside the queries stalls them
at every step (measured: a Python thread spinning beside ``vegalite_to_svg`` ran at 0.7 %
of its rate). So a report of up to :data:`BESIDE_MAX_CELLS` cells draws in a second
process (:class:`Beside`), each section's charts as soon as its summary is ready, while
this process runs the next sections' queries: on two cores, 4.7 → 4.05 s at 10^6 cells
and 11.05 → 10.5 s at 10^7 (three alternating runs each), the same bytes drawn. The
process holds about 240 MiB once it has drawn; past :data:`BESIDE_MAX_CELLS` the report
draws in its own process after the queries (:class:`Inline`), where drawing is a few per
cent of the time and that memory would come on top of the report's peak.

Both give, in the order submitted, each chart with its SVG and PNG (:data:`Drawn`).
"""

from __future__ import annotations

import contextlib
import json
import queue
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Final, Protocol

import vl_convert

from reconsim.report.charts import Figure

#: A chart, drawn: its figure, its SVG and its PNG.
Drawn = tuple[Figure, str, bytes]

#: Largest table (cells) whose charts are drawn in a second process beside the queries.
#: At 10^7 cells the report peaks at about 0.6 GB, 0.85 GB with the drawing process; at
#: 10^8 at 1.77 GB, where the process would take it past 2 GB.
BESIDE_MAX_CELLS: Final = 20_000_000


def draw(spec: dict[str, object], version: str | None) -> tuple[str, bytes]:
    """One chart's SVG and PNG (the PNG rasterised from that SVG: one Vega run)."""
    svg: str = vl_convert.vegalite_to_svg(spec, vl_version=version)
    return svg, vl_convert.svg_to_png(svg)


#: Charts to draw, made when called (a section's ``charts`` with its summary).
Charts = Callable[[], Sequence[Figure]]


class Drawing(Protocol):
    """Charts submitted as they are ready; :meth:`drawn` returns them all, drawn, in order."""

    def submit(self, charts: Charts) -> None:
        """Queue the charts ``charts`` makes for drawing."""

    def drawn(self) -> list[Drawn]:
        """Every chart submitted, drawn, in the order submitted."""


class Inline:
    """Makes and draws the charts in this process, when asked for the result (after the
    queries: their specs are not held while the queries run)."""

    def __init__(self, version: str | None) -> None:
        self._version = version
        self._charts: list[Charts] = []

    def submit(self, charts: Charts) -> None:
        self._charts.append(charts)

    def drawn(self) -> list[Drawn]:
        return [(fig, *draw(fig.spec, self._version)) for charts in self._charts
                for fig in charts()]


#: The drawing process (its argument: the Vega-Lite version, or "" for vl-convert's
#: default): reads a spec frame (8-byte little-endian length, then JSON) at a time from
#: stdin and answers each on stdout with a status byte (0: drawn, 1: failed), two lengths
#: and the SVG and PNG (or the error's text). Only vl-convert is imported. The first draw
#: starts vl-convert's JavaScript engine (0.3 s): done at once, while the report runs its
#: first queries.
_CHILD: Final = r"""
import json, struct, sys
import vl_convert
inp, out = sys.stdin.buffer, sys.stdout.buffer
vl_convert.vegalite_to_svg({"mark": "point", "data": {"values": []}},
                           vl_version=sys.argv[1] or None)
while head := inp.read(8):
    request = json.loads(inp.read(struct.unpack("<Q", head)[0]))
    try:
        svg = vl_convert.vegalite_to_svg(request["spec"], vl_version=request["version"])
        png = vl_convert.svg_to_png(svg)
        status, svg = 0, svg.encode()
    except Exception as exc:
        status, svg, png = 1, f"{type(exc).__name__}: {exc}".encode(), b""
    out.write(struct.pack("<BQQ", status, len(svg), len(png)) + svg + png)
    out.flush()
"""


class DrawingError(RuntimeError):
    """A chart the drawing process could not draw, or the process ended early."""


class Beside:
    """Draws in a second Python process (only vl-convert imported there) while this one
    goes on: a thread writes the specs to it, another reads the drawings back, so neither
    side waits on a full pipe. :meth:`close` ends the process; :func:`drawing` calls it
    however the report ends (an error in a query, Ctrl-C)."""

    def __init__(self, version: str | None) -> None:
        self._version = version
        # Its stderr, read only to say why it ended (closed in close()).
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            # -P: the working directory is not put on the path (only vl-convert is imported).
            self._process = subprocess.Popen([sys.executable, "-P", "-c", _CHILD,
                                              version or ""],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=self._stderr)
        except OSError:
            self._stderr.close()
            raise
        self._outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._expected: queue.SimpleQueue[Figure | None] = queue.SimpleQueue()
        self._results: list[Drawn] = []
        self._failure: str | None = None
        self._writer = threading.Thread(target=self._write, name="reconsim-draw-writer",
                                        daemon=True)
        self._reader = threading.Thread(target=self._read, name="reconsim-draw-reader",
                                        daemon=True)
        self._writer.start()
        self._reader.start()

    def submit(self, charts: Charts) -> None:
        for fig in charts():
            request = json.dumps({"spec": fig.spec, "version": self._version}).encode()
            self._expected.put(fig)
            self._outgoing.put(struct.pack("<Q", len(request)) + request)

    def drawn(self) -> list[Drawn]:
        self._end_threads()
        self._process.wait()
        if self._failure is not None:
            raise DrawingError(self._failure)
        return self._results

    def _end_threads(self) -> None:
        """Tell the writer and the reader there is nothing more, and wait for them."""
        self._outgoing.put(None)
        self._expected.put(None)
        self._writer.join()
        self._reader.join()

    def _write(self) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        with contextlib.suppress(OSError):  # the process ended: the reader says why
            while (frame := self._outgoing.get()) is not None:
                stdin.write(frame)
                stdin.flush()
        with contextlib.suppress(OSError):
            stdin.close()

    def _read(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        while (fig := self._expected.get()) is not None:
            answer = _answer(stdout)
            if answer is None:
                self._failure = f"chart {fig.name!r}: the drawing process ended ({self._why()})"
                return
            status, svg, png = answer
            if status:
                self._failure = f"chart {fig.name!r}: {svg.decode(errors='replace')}"
                # Nobody reads its next answers: end it, so that no write waits on a pipe.
                self._process.kill()
                return
            self._results.append((fig, svg.decode(), png))

    def _why(self) -> str:
        code = self._process.wait()
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return f"exit status {code}" + (f": {lines[-1]}" if lines else "")

    def close(self) -> None:
        """End the process (at once if it is still drawing) and release its pipes."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        self._end_threads()
        for pipe in (self._process.stdin, self._process.stdout, self._stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def _answer(stdout: IO[bytes]) -> tuple[int, bytes, bytes] | None:
    """The drawing process's next answer (status, SVG or error text, PNG); None where it
    is cut short (the process ended)."""
    head = stdout.read(17)
    if len(head) < 17:
        return None
    status, n_svg, n_png = struct.unpack("<BQQ", head)
    svg, png = stdout.read(n_svg), stdout.read(n_png)
    return (status, svg, png) if (len(svg), len(png)) == (n_svg, n_png) else None


@contextlib.contextmanager
def drawing(cells: int, version: str | None) -> Iterator[Drawing]:
    """:class:`Beside` for a table of up to :data:`BESIDE_MAX_CELLS` cells (or
    :class:`Inline` where no second process can start), :class:`Inline` past it."""
    if cells > BESIDE_MAX_CELLS:
        yield Inline(version)
        return
    try:
        beside = Beside(version)
    except OSError:
        yield Inline(version)
        return
    try:
        yield beside
    finally:
        beside.close()
