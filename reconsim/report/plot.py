"""One cell's trace drawn as the report draws its timelines (``reconsim run --plot``)."""

from __future__ import annotations

import vl_convert

from reconsim.model.params import Cell, cell_text
from reconsim.model.trace import trace_cell
from reconsim.report.sections.timelines import heading, timeline_figure
from reconsim.web.bundle import vegalite_version
from reconsim.web.kit import chart, render_page


def plot_cell(cell: Cell, suffix: str, window: tuple[int, int] | None = None,
              title: str | None = None, command: str | None = None) -> bytes:
    """``cell``'s timeline as a file of type ``suffix``: ``.html`` (a self-contained page,
    which shows ``command``, default the cell's ``reconsim run`` flags), ``.svg``, or
    anything else for PNG; the seconds of ``window`` (first and last, default the whole
    run), titled ``title`` (default :func:`~reconsim.report.sections.timelines.heading`)."""
    frame = trace_cell(cell)
    fig = timeline_figure(frame, cell, "timeline", title or heading(cell), window)
    if suffix == ".html":
        return render_page("reconsim.report", "timeline.html",
                           cell=command or f"reconsim run {cell_text(cell)}",
                           charts=[chart(fig.name, "", fig.spec)]).encode()
    svg: str = vl_convert.vegalite_to_svg(fig.spec, vl_version=vegalite_version())
    return svg.encode() if suffix == ".svg" else bytes(vl_convert.svg_to_png(svg))
