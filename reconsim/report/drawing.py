"""The report's charts drawn: each Vega-Lite spec as SVG (vl-convert), that SVG as PNG, in
the report's own process once its queries are done (no spec is held while they run).

Drawing in a second process beside the queries was measured and dropped. vl-convert holds
the GIL while it draws, so only a process could overlap it with the queries; on two cores
that saved 0.55 s of 11 s at 10^7 cells (5 %) and 0.65 s at 10^6, and under load nothing
measurable (18.4 against 18.5 s, median of three alternating runs at 1.1·10^6 cells). The
standard library's way to run it, a spawned ``ProcessPoolExecutor``, re-imports the
caller's ``__main__``, so a user's script without an ``if __name__ == "__main__"`` guard
would fail; the alternative, a child process speaking a pipe protocol of our own, was 150
lines to keep for that 5 %.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import vl_convert

from reconsim.report.charts import Figure

#: A chart, drawn: its figure, its SVG and its PNG.
Drawn = tuple[Figure, str, bytes]
#: Charts to draw, made when called (a section's ``charts`` with its summary).
Charts = Callable[[], Sequence[Figure]]


class DrawingError(RuntimeError):
    """A chart vl-convert could not draw, named."""


def draw(spec: dict[str, object], version: str | None) -> tuple[str, bytes]:
    """One chart's SVG and PNG (the PNG rasterised from that SVG: one Vega run)."""
    svg: str = vl_convert.vegalite_to_svg(spec, vl_version=version)
    return svg, vl_convert.svg_to_png(svg)


def draw_all(charts: Sequence[Charts], version: str | None) -> list[Drawn]:
    """Every chart ``charts`` make, made and drawn in order; a chart that cannot be drawn is
    a :class:`DrawingError` naming it."""
    out: list[Drawn] = []
    for make in charts:
        for fig in make():
            try:
                out.append((fig, *draw(fig.spec, version)))
            except ValueError as exc:  # vl-convert's refusal of a spec
                raise DrawingError(f"chart {fig.name!r}: {exc}") from None
    return out
