"""The HTML page of a sweep comparison: its tables and, per changed metric, the delta over
G x U per panel — self-contained, like the report."""

from __future__ import annotations

from typing import Any

import altair as alt
import polars as pl

from reconsim.compare.cells import (
    MetricDiff,
    SweepComparison,
    axes_text,
    largest_columns,
    pairing_text,
    where_text,
)
from reconsim.web.charts import inline
from reconsim.web.kit import chart, render_page


def delta_chart(m: MetricDiff, panels: tuple[str, ...], grouped: bool = False) -> dict[str, Any]:
    """A G x U heatmap of the delta B - A of one metric, one panel per value of the panel
    axes; each square shows the delta of largest magnitude among its cells."""
    assert m.heatmap is not None
    frame = m.heatmap.with_columns(
        extreme=pl.when(pl.col("delta_max").abs() >= pl.col("delta_min").abs())
        .then(pl.col("delta_max")).otherwise(pl.col("delta_min")).cast(pl.Float64),
        **{p: pl.col(p).cast(pl.String).fill_null("null") for p in panels},
    )
    bound = max(float(frame.select(pl.col("extreme").abs().max()).item() or 0), 1e-9)
    encodings: dict[str, Any] = {
        "color": alt.when("isValid(datum.extreme)").then(alt.Color(
            "extreme:Q", title="B - A", scale=alt.Scale(scheme="redblue", reverse=True,
                                                        domain=[-bound, bound])))
        .otherwise(alt.value("#e4ebf1")),
        "tooltip": [*(alt.Tooltip(f"{k}:N") for k in ("G", "U", *panels) if k in frame.columns),
                    alt.Tooltip("cells:Q", title="cells"),
                    alt.Tooltip("changed:Q", title="changed"),
                    alt.Tooltip("delta_min:Q", title="smallest B - A"),
                    alt.Tooltip("delta_max:Q", title="largest B - A")],
    }
    if "G" in frame.columns:
        encodings["x"] = alt.X("G:O", title="G (s)")
    if "U" in frame.columns:
        encodings["y"] = alt.Y("U:O", title="U (s)", sort="descending")
    drawn: Any = alt.Chart(inline(frame)).mark_rect().encode(**encodings).properties(
        width=alt.Step(16), height=alt.Step(12))
    if panels:
        drawn = drawn.facet(**{"row" if i else "column": alt.Facet(
            f"{p}:N", title=p, header=alt.Header(labelAngle=0, labelAlign="left"))
            for i, p in enumerate(panels)})
    titled = drawn.properties(title=alt.TitleParams(
        f"{m.metric}: B - A over G x U", anchor="start",
        subtitle=[("Each square: the matched pairs at that G and U (over every other "
                   "pairing axis); colour: the change of the median of largest magnitude, "
                   "grey where one side is null.") if grouped else
                  ("Each square: the matched cells at that G and U (over every other "
                   "parameter); colour: the change of largest magnitude, grey where one "
                   "side is null.")]))
    spec: dict[str, Any] = titled.to_dict()
    return spec


def render_html(c: SweepComparison) -> str:
    """The comparison as one self-contained page."""
    charts = {m.metric: chart(f"delta-{m.metric}", f"{m.metric}: B - A over G x U",
                              delta_chart(m, c.panels, c.grouped))
              for m in c.metrics if m.changed and m.heatmap is not None}
    where = {m.metric: where_text(m.where, limit=60) for m in c.metrics if m.changed}
    return render_page("reconsim.compare", "compare.html",
                       c=c, chart_of=charts, where=where, shown=c.shown,
                       unit="pair" if c.grouped else "cell", pairing=pairing_text(c),
                       axes=axes_text(c), figures=largest_columns(c.grouped),
                       delta="B - A (median)" if c.grouped else "B - A")
