"""What every page's charts share: the layout width, the palette, the :class:`Figure` a
page embeds, and rows inlined in a Vega-Lite spec."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import altair as alt
import polars as pl

#: Width, in pixels, the charts are laid out to fill.
WIDTH: Final = 1080
#: Colour of the marks where nothing goes wrong.
QUIET: Final = "#e4ebf1"
#: Colour of the marks that contradict a law or claim.
ALARM: Final = "#d4380d"
#: Colour ramp of shares, from a share near 0 to a share of 1: even one cell in a
#: thousand shows clearly against QUIET.
SHARE: Final = ["#9ecae1", "#08306b"]
#: Charts with more marks than this are drawn on a canvas rather than as SVG elements.
CANVAS_MARKS: Final = 4000


@dataclass(frozen=True)
class Figure:
    """One chart of the report: its file name, its heading, its Vega-Lite spec, and facts
    about how it was drawn (which axes a mark aggregates, for the page's captions)."""

    name: str
    title: str
    spec: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def renderer(self) -> str:
        """How the page draws it: ``canvas`` past :data:`CANVAS_MARKS` marks, else ``svg``."""
        return "canvas" if self.meta.get("marks", 0) > CANVAS_MARKS else "svg"


def inline(frame: pl.DataFrame) -> alt.Data:
    """A chart's rows, inline in its spec as CSV (no key repeated per row), with the type of
    each numeric or boolean column declared so that Vega parses it back exactly."""
    parse = {c: "number" for c, t in frame.schema.items() if t.is_numeric()}
    parse |= {c: "boolean" for c, t in frame.schema.items() if t == pl.Boolean}
    csv = alt.DataFormat(type="csv", parse=parse)  # type: ignore[no-untyped-call]
    return alt.Data(values=frame.write_csv(), format=csv)  # type: ignore[no-untyped-call]
