"""The HTML page of a benchmark comparison: the tables of ``reconsim bench-compare`` and the
quality-against-cost chart, self-contained."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import polars as pl

from reconsim.benchcmp import COST_FIGURES, QUALITY_FIGURES, Comparison, Tradeoff
from reconsim.pages import chart, render_page
from reconsim.report.charts import inline

#: Figure -> axis title.
TITLES = {"excess_copy_seconds": "excess copy-seconds (quality)",
          "wasted_delete_commands": "wasted delete commands (quality)",
          "missing_copy_seconds": "missing copy-seconds (cost)",
          "reads": "ledger reads (cost)"}


def tradeoff_chart(tradeoffs: Sequence[Tradeoff]) -> dict[str, Any]:
    """Each variant as a point of quality against cost: excess copy-seconds against missing
    copy-seconds, wasted delete commands against reads; frontier variants stand out."""
    frame = pl.DataFrame([{"variant": t.name, **t.figures, "frontier": t.on_frontier,
                           "beaten_by": ", ".join(t.beaten_by) or "none"} for t in tradeoffs])
    panels = []
    for quality, cost in zip(QUALITY_FIGURES, COST_FIGURES, strict=True):
        if frame[quality].null_count() or frame[cost].null_count():
            continue
        top = int(frame.select(pl.col(quality).max()).item() or 0)
        ticks = [0] + [10**k for k in range(1, max(2, len(str(max(top, 1))) + 1))]
        base = alt.Chart(inline(frame)).encode(
            x=alt.X(f"{cost}:Q", title=TITLES[cost], scale=alt.Scale(zero=False)),
            # symlog: the variants without duplicates sit at 0, the ledger's near a million
            y=alt.Y(f"{quality}:Q", title=TITLES[quality], axis=alt.Axis(values=ticks),
                    scale=alt.Scale(type="symlog", domain=[0, ticks[-1]])),
            tooltip=["variant:N", f"{quality}:Q", f"{cost}:Q", "frontier:N",
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
        subtitle=["Red: on the frontier, no other variant is as good on all four figures "
                  "and better on one."], anchor="start"))
    spec: dict[str, Any] = chart.to_dict()
    return spec


def render_html(c: Comparison) -> str:
    """The comparison as one self-contained page."""
    charts = [chart("tradeoff", "Quality against cost (head run)",
                    tradeoff_chart(c.tradeoffs))] if c.tradeoffs else []
    return render_page("benchcmp.html", charts=charts, c=c,
                       quality=QUALITY_FIGURES, cost=COST_FIGURES)
