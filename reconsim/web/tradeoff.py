"""Quality against cost as a chart: each variant a point of a quality figure against a cost
figure, one panel a pair, the variants on the frontier (no other beats them) in red. The
figures and the frontier are the caller's (the model defines them, the report's controller
section and ``reconsim bench-compare`` pass them in): the page kit only draws.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import altair as alt
import polars as pl

from reconsim.web.charts import inline


class Point(Protocol):
    """A variant as the chart draws it: its name, its figures by name, whether it is on the
    frontier and which variants beat it."""

    @property
    def name(self) -> str: ...
    @property
    def figures(self) -> Mapping[str, float | None]: ...
    @property
    def beaten_by(self) -> tuple[str, ...]: ...
    @property
    def on_frontier(self) -> bool: ...


class Labelled(Protocol):
    """A figure as the chart names it: its words."""

    @property
    def label(self) -> str: ...


def tradeoff_chart(tradeoffs: Sequence[Point], quality: Mapping[str, Labelled],
                   cost: Mapping[str, Labelled]) -> dict[str, Any]:
    """Each variant as a point of quality against cost, a panel per pair of ``quality`` and
    ``cost`` figures (each by name, in order: the first quality figure against the first
    cost figure, …); frontier variants stand out. A pair some variant lacks is left out."""
    frame = pl.DataFrame([{"variant": t.name, **t.figures, "frontier": t.on_frontier,
                           "beaten_by": ", ".join(t.beaten_by) or "none"} for t in tradeoffs])
    panels = []
    for good, paid in zip(quality, cost, strict=True):
        if frame[good].null_count() or frame[paid].null_count():
            continue
        top = int(frame.select(pl.col(good).max()).item() or 0)
        ticks = [0] + [10**k for k in range(1, max(2, len(str(max(top, 1))) + 1))]
        base = alt.Chart(inline(frame)).encode(
            x=alt.X(f"{paid}:Q", title=f"{cost[paid].label} (cost)", scale=alt.Scale(zero=False)),
            # symlog: the variants without duplicates sit at 0, the ledger's near a million
            y=alt.Y(f"{good}:Q", title=f"{quality[good].label} (quality)",
                    axis=alt.Axis(values=ticks),
                    scale=alt.Scale(type="symlog", domain=[0, ticks[-1]])),
            tooltip=["variant:N", f"{good}:Q", f"{paid}:Q", "frontier:N",
                     alt.Tooltip("beaten_by:N", title="beaten by")],
        )
        points = base.mark_point(filled=True, size=90).encode(
            color=alt.Color("frontier:N", title="on the frontier",
                            scale=alt.Scale(domain=[True, False],
                                            range=["#d4380d", "#8a96a8"])))
        labels = base.mark_text(align="left", dx=7, fontSize=11).encode(text="variant:N")
        panels.append((points + labels).properties(width=420, height=320))
    chart = alt.hconcat(*panels).properties(title=alt.TitleParams(
        "Quality against cost, per controller variant (lower is better on both axes)",
        subtitle=["Red: on the frontier, no other variant is as good on every figure and "
                  "better on one."], anchor="start"))
    spec: dict[str, Any] = chart.to_dict()
    return spec
