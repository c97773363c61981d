"""The HTML page of a sweep comparison: its tables and, per changed metric, the delta over
G x U per panel — self-contained, like the report. The page records which two sweeps it
compares (:func:`compared`), so that ``reconsim compare`` never overwrites another
comparison's page unasked."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final

import altair as alt
import polars as pl
from markupsafe import Markup

from reconsim.compare.cells import (
    MetricDiff,
    SweepComparison,
    axes_text,
    largest_columns,
    pairing_text,
    where_text,
)
from reconsim.web.charts import inline
from reconsim.web.html import script_json
from reconsim.web.kit import chart, render_page
from reconsim.words import plural

#: The id of the page's element that names the two sweeps it compares.
SWEEPS_ID: Final = "reconsim-compared"
_SWEEPS = re.compile(rf'<script type="application/json" id="{SWEEPS_ID}">(.*?)</script>',
                     re.S)


def sweeps(a: str | Path, b: str | Path) -> tuple[str, str]:
    """The two sweeps a comparison reads, as its page records them: each directory's
    resolved path (a URL as given), so that the same sweeps named otherwise are the same
    comparison."""
    def where(d: str | Path) -> str:
        return str(d) if "://" in str(d) else str(Path(d).resolve())

    return where(a), where(b)


def compared(path: Path) -> tuple[str, str] | None:
    """The two sweeps the page at ``path`` compares (:func:`sweeps`), or None when the
    file records none (not a comparison's page); an unreadable file records none."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None
    found = _SWEEPS.search(text)
    if found is None:
        return None
    try:
        recorded = json.loads(found.group(1))
    except ValueError:
        return None
    if (isinstance(recorded, list) and len(recorded) == 2
            and all(isinstance(d, str) for d in recorded)):
        return recorded[0], recorded[1]
    return None


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
    """The comparison as one self-contained page, recording the two sweeps it compares."""
    charts = {m.metric: chart(f"delta-{m.metric}", f"{m.metric}: B - A over G x U",
                              delta_chart(m, c.panels, c.grouped))
              for m in c.metrics if m.changed and m.heatmap is not None}
    where = {m.metric: where_text(m.where, limit=60) for m in c.metrics if m.changed}
    return render_page("reconsim.compare", "compare.html",
                       sweeps=Markup(script_json(list(sweeps(c.a, c.b)))), sweeps_id=SWEEPS_ID,
                       plural=plural,
                       c=c, chart_of=charts, where=where, shown=c.shown,
                       unit="pair" if c.grouped else "cell", pairing=pairing_text(c),
                       axes=axes_text(c), figures=largest_columns(c.grouped),
                       delta="B - A (median)" if c.grouped else "B - A")
