"""The report's charts: small aggregates of the sweep's table, drawn as Vega-Lite specs.

No chart embeds the table itself. The heatmaps draw one mark per cell where the mark
budget allows it; past it, neighbouring values share a bin, or a panel covers every
value of an axis, and the tooltips say how many cells a mark stands for. Every cell
counts in some mark: nothing is left out to fit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import altair as alt
import polars as pl

from reconsim.report.data import bin_columns, describe, tally, variant_label, variant_params

#: Most marks the law's heatmap draws; past that, desired, schedule and other axes share
#: panels instead of each value getting its own.
MAX_LAW_MARKS: Final = 30_000
#: Most rows (G) and columns (U) a heatmap draws; past that, neighbouring values share a bin.
MAX_G_BINS: Final = 60
MAX_U_BINS: Final = 120
#: Most B values the heatmap gives their own panels; past that, B is binned.
MAX_B_PANELS: Final = 12
#: Most U and G + B bins of the boundary chart.
MAX_BOUNDARY_BINS: Final = 60
#: Most heatmap marks that also get their number written on them.
MAX_LABELLED: Final = 1500
#: Most variants the controllers chart draws as lines; past that, a heatmap.
MAX_LINES: Final = 8
#: Width, in pixels, the charts are laid out to fill.
WIDTH: Final = 1080
#: Colour of the marks where nothing goes wrong.
QUIET: Final = "#e4ebf1"
#: Colour of the marks that contradict a law or claim.
ALARM: Final = "#d4380d"
#: Colour ramp of shares, from a share near 0 to a share of 1: even one cell in a
#: thousand shows clearly against QUIET.
SHARE: Final = ["#9ecae1", "#08306b"]


@dataclass(frozen=True)
class Figure:
    """One chart of the report: its file name, its heading, its Vega-Lite spec, and facts
    about how it was drawn (which axes a mark aggregates, for the page's captions)."""

    name: str
    title: str
    spec: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)


def inline(frame: pl.DataFrame) -> alt.Data:
    """A chart's rows, inline in its spec as CSV (no key repeated per row), with the type of
    each numeric or boolean column declared so that Vega parses it back exactly."""
    parse = {c: "number" for c, t in frame.schema.items() if t.is_numeric()}
    parse |= {c: "boolean" for c, t in frame.schema.items() if t == pl.Boolean}
    csv = alt.DataFormat(type="csv", parse=parse)  # type: ignore[no-untyped-call]
    return alt.Data(values=frame.write_csv(), format=csv)  # type: ignore[no-untyped-call]


def _spread(lo: str, hi: str) -> pl.Expr:
    """Tooltip text of a range: ``lo`` when both ends are equal, else ``lo to hi`` (a dash
    would read as a minus beside negative values); an em dash when both are null."""
    a, b = pl.col(lo).cast(pl.String), pl.col(hi).cast(pl.String)
    return (pl.when(pl.col(lo).is_null()).then(pl.lit("\u2014"))
            .when(pl.col(lo) == pl.col(hi)).then(a)
            .otherwise(pl.concat_str(a, pl.lit(" to "), b)))


def _binned(table: pl.DataFrame, limits: Mapping[str, int]) -> tuple[pl.DataFrame, list[str]]:
    """Add ``{axis}_lo/_hi/_label`` bin columns; return the frame and the axes really binned."""
    exprs: list[pl.Expr] = []
    binned = []
    for axis, limit in limits.items():
        cols, coarse = bin_columns(table, axis, limit)
        exprs += cols
        if coarse:
            binned.append(axis)
    return table.with_columns(exprs), binned


def _order(frame: pl.DataFrame, axis: str) -> list[str]:
    """The bin labels of one axis in ascending order of their lowest value."""
    return frame.select(f"{axis}_lo", f"{axis}_label").unique().sort(f"{axis}_lo")[
        f"{axis}_label"].to_list()


def _binning_note(binned: Sequence[str]) -> str:
    """A subtitle's sentence naming the binned axes, if any."""
    return (f" {', '.join(binned)} binned: each mark stands for a range of values."
            if binned else "")


def _clamp(value: int, lo: int, hi: int) -> int:
    """``value`` kept within ``lo`` .. ``hi``."""
    return max(lo, min(hi, value))


def _label_expr(labels: Sequence[str]) -> str:
    """A Vega expression mapping a panel's index to its label."""
    return f"{json.dumps(list(labels), ensure_ascii=False)}[datum.value]"


# -- section a: the law's heatmap -----------------------------------------------------------


def law_facets(t: pl.DataFrame, axes: Sequence[str], per_panel: int,
               budget: int = MAX_LAW_MARKS) -> tuple[list[str], list[str]]:
    """Which of ``axes`` get a panel per value (besides B's), and which share panels.

    Candidates, in order: observe, desired, schedule, then the other axes (G, U, B and
    controller aside) that vary among the rows. Each gets its own panels if the marks,
    ``per_panel`` each, stay within ``budget``.
    """
    first = [a for a in ("observe", "desired", "schedule") if a in axes]
    rest = [a for a in axes if a not in (*first, "controller", "G", "U", "B")]
    candidates = [a for a in (*first, *rest) if t[a].n_unique() > 1]
    facets: list[str] = []
    for axis in candidates:
        panels = t.select("B_label", *facets, axis).unique().height
        if panels * per_panel <= budget:
            facets.append(axis)
    return facets, [a for a in candidates if a not in facets]


def law_figure(table: pl.DataFrame, axes: Sequence[str]) -> Figure:
    """G x U heatmaps of the ledger cells the law covers: colour the measured overshoot,
    a red outline where the law fails on any cell of the mark; one panel per B and, where
    the mark budget allows, per desired, schedule and other varying axes."""
    rows = table.filter(pl.col("controller") == "ledger", pl.col("law_holds").is_not_null())
    t, binned = _binned(rows, {"G": MAX_G_BINS, "U": MAX_U_BINS, "B": MAX_B_PANELS})
    n_g, n_u = t["G_label"].n_unique(), t["U_label"].n_unique()
    facets, shared = law_facets(t, axes, max(1, n_g * n_u))
    panel_keys = ["B_lo", "B_label", *facets]
    panels = t.select(panel_keys).unique().sort(panel_keys, nulls_last=False)
    labels = [" \u00b7 ".join([f"B = {r['B_label']}",
                               *(f"{a} = {'null' if r[a] is None else r[a]}" for a in facets)])
              for r in panels.iter_rows(named=True)]
    t = t.join(panels.with_row_index("panel"), on=panel_keys, how="left", nulls_equal=True)
    keys = ["panel", "G_lo", "G_label", "U_lo", "U_label"]
    mism = ~pl.col("law_holds")
    grid = t.group_by(keys).agg(
        pl.len().alias("cells"),
        mism.sum().alias("mismatching"),
        pl.col("overshoot").max().alias("overshoot_max"),
        *(pl.col(c).min().alias(f"{c}__lo") for c in ("overshoot", "law_overshoot", "unneeded",
                                                       "stable_at")),
        *(pl.col(c).max().alias(f"{c}__hi") for c in ("overshoot", "law_overshoot", "unneeded",
                                                       "stable_at")),
        pl.col("stable_at").null_count().alias("unsettled"),
    )
    for axis in shared:
        counts = (t.filter(mism).group_by([*keys, axis]).agg(pl.len().alias("n"))
                  .sort(["n", axis], descending=[True, False], nulls_last=True)
                  .group_by(keys, maintain_order=True).agg(tally(axis).alias(f"by_{axis}")))
        grid = grid.join(counts, on=keys, how="left")
    grid = grid.sort(keys).select(
        "panel", "G_label", "U_label", "cells", "mismatching", "overshoot_max",
        _spread("overshoot__lo", "overshoot__hi").alias("overshoot"),
        _spread("law_overshoot__lo", "law_overshoot__hi").alias("law"),
        _spread("unneeded__lo", "unneeded__hi").alias("unneeded"),
        _spread("stable_at__lo", "stable_at__hi").alias("stable_at"),
        "unsettled",
        *(pl.col(f"by_{a}").fill_null("\u2014") for a in shared),
    )
    # One panel fills the width; several share it, two or more to a row.
    columns = 1 if len(labels) == 1 else max(2, min(len(labels), WIDTH // (n_u * 16 + 60)))
    step_u = _clamp((WIDTH // columns - 60) // n_u, 4, 24)
    labelled = grid.height <= MAX_LABELLED and step_u >= 14
    step_g = step_u if labelled else _clamp(120 // n_g, 6, 16)
    tooltip = [
        alt.Tooltip("G_label:N", title="G"), alt.Tooltip("U_label:N", title="U"),
        alt.Tooltip("panel_label:N", title="panel"),
        alt.Tooltip("cells:Q", title="cells"),
        alt.Tooltip("mismatching:Q", title="law fails on"),
        alt.Tooltip("overshoot:N", title="measured overshoot"),
        alt.Tooltip("law:N", title="law's overshoot"),
        alt.Tooltip("unneeded:N", title="unneeded copies"),
        alt.Tooltip("stable_at:N", title="stable_at (settled cells)"),
        alt.Tooltip("unsettled:Q", title="cells never settled"),
        *(alt.Tooltip(f"by_{a}:N", title=f"law fails, by {a}") for a in shared),
    ]
    base = alt.Chart().transform_calculate(
        panel_label=_label_expr(labels).replace("datum.value", "datum.panel"),
    ).encode(
        x=alt.X("U_label:O", sort=_order(t, "U"), title="U: loop period (s)",
                axis=alt.Axis(labelOverlap="greedy")),
        y=alt.Y("G_label:O", sort=_order(t, "G"), title="G: ledger delay (s)"),
        tooltip=tooltip,
    )
    top = max(1, int(grid["overshoot_max"].max() or 0))  # type: ignore[arg-type]
    # Overshoot spans three orders of magnitude (6 copies to a thousand): a log scale, with
    # zero, the most common value, in its own quiet colour.
    rect = base.mark_rect().encode(
        color=alt.when(alt.datum.overshoot_max == 0).then(alt.value(QUIET)).otherwise(
            alt.Color("overshoot_max:Q", title="measured overshoot (> 0)",
                      scale=alt.Scale(scheme="blues", type="log", domain=[1, top]),
                      legend=alt.Legend(orient="top", direction="horizontal",
                                        gradientLength=240))),
    )
    marked = base.transform_filter(alt.datum.mismatching > 0).mark_rect(
        filled=False, stroke=ALARM, strokeWidth=1.5 if step_u >= 8 else 1)
    layers = [rect, marked]
    if labelled:
        layers.append(base.mark_text(fontSize=7).encode(
            text=alt.Text("overshoot_max:Q"),
            color=alt.when(alt.datum.overshoot_max > top ** 0.6).then(alt.value("white"))
            .otherwise(alt.value("#111"))))
    chart = alt.layer(*layers, data=inline(grid)).properties(
        width=alt.Step(step_u), height=alt.Step(step_g),
    ).facet(
        facet=alt.Facet("panel:O", title=None,
                        header=alt.Header(labelExpr=_label_expr(labels), labelFontSize=11,
                                          labelAnchor="start")),
        columns=columns,
    ).resolve_scale(x="shared", y="shared")
    title = "The overshoot law, ledger controller: measured overshoot, and where the law fails"
    one = "Each square: one cell" if not shared and not binned else "Each square: the cells"
    sub = (f"{one} at that G and U in its panel{_shared_note(shared)}; colour: measured "
           "overshoot (the largest, where a square holds several cells; pale grey: 0)"
           + (", number: the same" if labelled else "")
           + f". Red outline: the law fails on a cell of that square.{_binning_note(binned)}")
    return Figure("law", title, _finish(chart, title, sub),
                  {"facets": ["B", *facets], "shared": shared, "binned": binned,
                   "marks": grid.height, "cells": t.height})


def _shared_note(shared: Sequence[str]) -> str:
    """A subtitle's words for the axes whose values share the heatmap's panels, if any."""
    if not shared:
        return ""
    return (" (every value of " + ", ".join(shared)
            + " shares the panel; the tooltip counts failures by value)")


# -- section b: the boundary ------------------------------------------------------------------


def boundary_figure(table: pl.DataFrame) -> Figure:
    """Ledger cells per (U, G + B): the share that overshoots, the line U = G + B, and a red
    outline where a cell contradicts the boundary (overshoot above it, none below it with
    desired > 0); one panel per ledger variant."""
    ledger = table.filter(pl.col("controller") == "ledger")
    params = variant_params(ledger)
    t = ledger.with_columns((pl.col("G") + pl.col("B")).alias("GB"), variant_label(params))
    t, binned = _binned(t, {"U": MAX_BOUNDARY_BINS, "GB": MAX_BOUNDARY_BINS})
    above, positive = pl.col("above_boundary"), pl.col("overshoot") > 0
    grid = t.group_by("variant", "U_lo", "U_hi", "U_label", "GB_lo", "GB_hi", "GB_label").agg(
        pl.len().alias("cells"),
        positive.sum().alias("overshooting"),
        pl.col("overshoot").max().alias("max_overshoot"),
        (above & ~positive).sum().alias("above_zero"),
        (above & positive).sum().alias("above_positive"),
        (~above & ~positive).sum().alias("below_zero"),
        (~above & positive).sum().alias("below_positive"),
        (~above & ~positive & (pl.col("desired") > 0)).sum().alias("below_zero_desired"),
    ).with_columns(
        (pl.col("overshooting") / pl.col("cells")).round(4).alias("share"),
        ((pl.col("U_lo") + pl.col("U_hi")) / 2).alias("U"),
        ((pl.col("GB_lo") + pl.col("GB_hi")) / 2).alias("GB"),
        (pl.col("above_positive") + pl.col("below_zero_desired")).alias("exceptions"),
    ).drop("U_lo", "U_hi", "GB_lo", "GB_hi").sort("variant", "U", "GB")
    top = max(1.0, float(grid["GB"].max() or 0), float(grid["U"].max() or 0))  # type: ignore[arg-type]
    panel = 480 if grid["variant"].n_unique() <= 1 else 320
    # A square about as wide as columns and rows of marks are apart (the median gap).
    gap = min(_gap(grid["U"]), _gap(grid["GB"]))
    side = _clamp(int(0.8 * gap * panel / top), 3, 24)
    # Half a square's room around the marks, so that none is cut at the edge.
    pad = side / panel * top
    scale = alt.Scale(domain=[-pad, top + pad], nice=False)
    points = alt.Chart().mark_square(size=side * side, opacity=1).encode(
        x=alt.X("U:Q", title="U: loop period (s)", scale=scale),
        y=alt.Y("GB:Q", title="G + B: delay before a copy is listed (s)", scale=scale),
        color=alt.when(alt.datum.overshooting == 0).then(alt.value(QUIET))
        .otherwise(alt.Color("share:Q", scale=alt.Scale(range=SHARE, domain=[0, 1]),
                             title="share overshooting")),
        stroke=alt.when(alt.datum.exceptions > 0).then(alt.value(ALARM))
        .otherwise(alt.value(None)),
        tooltip=[alt.Tooltip("variant:N"), alt.Tooltip("U_label:N", title="U"),
                 alt.Tooltip("GB_label:N", title="G + B"), alt.Tooltip("cells:Q"),
                 alt.Tooltip("above_zero:Q", title="U ≥ G + B, overshoot 0"),
                 alt.Tooltip("above_positive:Q", title="U ≥ G + B, overshoot > 0"),
                 alt.Tooltip("below_zero:Q", title="U < G + B, overshoot 0"),
                 alt.Tooltip("below_positive:Q", title="U < G + B, overshoot > 0"),
                 alt.Tooltip("max_overshoot:Q", title="largest overshoot")],
    )
    line = alt.Chart().mark_rule(color="#333", strokeDash=[5, 3]).encode(
        x=alt.datum(0), y=alt.datum(0), x2=alt.datum(top), y2=alt.datum(top))
    chart = alt.layer(points, line, data=inline(grid)).properties(width=panel, height=panel).facet(
        column=alt.Column("variant:N", title=None, sort=sorted(grid["variant"].unique())))
    title = "The boundary U = G + B over the ledger controller's overshoot"
    sub = ("Each square: the ledger cells with that U and that G + B (every G, B, desired and "
           "schedule adding up to it). Pale: none overshoots; blue: the share that does. "
           "Dashed: U = G + B; squares on it and below-right of it have U ≥ G + B. Red "
           "outline: a cell contradicting the boundary (overshoot with U ≥ G + B, or none "
           f"with U < G + B and desired > 0).{_binning_note(binned)}")
    return Figure("boundary", title, _finish(chart, title, sub), {"binned": binned})


def _gap(values: pl.Series) -> float:
    """The median gap between neighbouring distinct values (the whole span when there is one)."""
    distinct = values.unique().sort()
    gaps = distinct.diff().drop_nulls()
    return float(gaps.median()) if gaps.len() else max(1.0, float(distinct.max() or 1))  # type: ignore[arg-type]


# -- section c: read cost -------------------------------------------------------------------

#: The read-cost chart's panels: column -> heading.
READ_PANELS: Final = {
    "reads_per_round": "reads per round",
    "reads_per_second": "reads per second",
    "overshoot": "overshoot (copies)",
    "unneeded": "unneeded copies",
}


def read_cost_figure(points: Sequence[Mapping[str, Any]], fixed: Mapping[str, Any],
                     order: Sequence[str], hide: Sequence[str] = ()) -> Figure:
    """Reads per round, reads per second (log scale), overshoot and unneeded copies against
    U on one slice, one line per controller, with the boundary U = G + B marked (the
    subtitle leaves the axes in ``hide`` out of the slice's description)."""
    columns = ["controller", "U", *READ_PANELS, "missing_copy_seconds"]
    frame = (pl.DataFrame(list(points)).select(columns) if points else pl.DataFrame(
        schema={"controller": pl.String, "U": pl.Int64, "reads_per_round": pl.Float64,
                "reads_per_second": pl.Float64, "overshoot": pl.Int64, "unneeded": pl.Int64,
                "missing_copy_seconds": pl.Int64}))
    G, B = fixed.get("G"), fixed.get("B")
    boundary = G + B if isinstance(G, int) and isinstance(B, int) else None
    tooltip = [alt.Tooltip("controller:N"), alt.Tooltip("U:Q"),
               *(alt.Tooltip(f"{c}:Q", title=h) for c, h in READ_PANELS.items()),
               alt.Tooltip("missing_copy_seconds:Q", title="missing copy-seconds")]
    panels = []
    for i, (column, heading) in enumerate(READ_PANELS.items()):
        last = i == len(READ_PANELS) - 1
        scale = (alt.Scale(type="log") if column == "reads_per_second"
                 and frame[column].min() is not None and frame[column].min() > 0  # type: ignore[operator]
                 else alt.Scale(zero=False))
        line = alt.Chart().mark_line(point=alt.OverlayMarkDef(size=12)).encode(
            x=alt.X("U:Q", title="U: loop period (s)" if last else None,
                    axis=alt.Axis(labels=last)),
            y=alt.Y(f"{column}:Q", title=heading + (" (log scale)" if scale.type == "log"
                                                    else ""), scale=scale),
            color=alt.Color("controller:N", sort=list(order), title="controller"),
            strokeDash=alt.StrokeDash("controller:N", sort=list(order), legend=None),
            tooltip=tooltip,
        )
        layers: list[alt.Chart] = [line]
        if boundary is not None:
            layers.append(alt.Chart().mark_rule(color="#333", strokeDash=[5, 3]).encode(
                x=alt.datum(boundary)))
        panels.append(alt.layer(*layers).properties(width=WIDTH - 300, height=120))
    chart = alt.vconcat(*panels, data=inline(frame), spacing=8)
    title = "Read cost against the loop period U, beside overshoot and unneeded copies"
    where = describe({a: v for a, v in fixed.items() if a not in hide}) or "the whole sweep"
    sub = (f"One slice of the sweep: {where}. reads_per_second = reads / (duration + 1). "
           + ("Dashed: U = G + B." if boundary is not None else ""))
    return Figure("read_cost", title, _finish(chart, title, sub))


def _names_expr(names: Mapping[str, str]) -> str:
    """A Vega expression mapping a field value to its heading."""
    return f"{json.dumps(dict(names), ensure_ascii=False)}[datum.value]"


# -- section d: controllers compared ---------------------------------------------------------


def controllers_figure(by_g: Sequence[Mapping[str, Any]], figures: Mapping[str, str],
                       order: Sequence[str]) -> Figure:
    """Each compared figure against G, mean and max over each variant's cells at that G:
    lines for a few variants, a heatmap (variant x G) when lines would be too many to tell
    apart."""
    rows = []
    for r in by_g:
        for metric in figures:
            rows.append({"variant": r["variant"], "G": r["G"], "metric": metric,
                         "mean": r[f"{metric}__mean"], "max": r[f"{metric}__max"],
                         "cells": r["cells"], "unsettled": r["unsettled"]})
    frame = pl.DataFrame(rows, schema={"variant": pl.String, "G": pl.Int64,
                                       "metric": pl.String, "mean": pl.Float64,
                                       "max": pl.Float64, "cells": pl.Int64,
                                       "unsettled": pl.Int64})
    tooltip = [alt.Tooltip("variant:N"), alt.Tooltip("G:Q"), alt.Tooltip("metric:N"),
               alt.Tooltip("mean:Q", format=",.3~f"), alt.Tooltip("max:Q", format=",.3~f"),
               alt.Tooltip("cells:Q", title="cells at this G"),
               alt.Tooltip("unsettled:Q", title="cells never settled")]
    title = "Controllers compared against the ledger delay G"
    if len(order) > MAX_LINES:
        return Figure("controllers", title, _variant_heatmap(frame, figures, order, tooltip))
    long = frame.unpivot(["mean", "max"], index=["variant", "G", "metric", "cells", "unsettled"],
                         variable_name="stat", value_name="value")
    chart = alt.Chart(inline(long)).mark_line(point=alt.OverlayMarkDef(size=14)).encode(
        x=alt.X("G:Q", title="G: ledger delay (s)"),
        y=alt.Y("value:Q", title=None),
        color=alt.Color("variant:N", sort=list(order), title="controller / variant"),
        strokeDash=alt.StrokeDash("variant:N", sort=list(order), legend=None),
        tooltip=[*tooltip[:3], alt.Tooltip("stat:N"), alt.Tooltip("value:Q", format=",.3~f"),
                 *tooltip[5:]],
    ).properties(width=(WIDTH - 480) // 2, height=110).facet(
        row=alt.Row("metric:N", title=None, sort=list(figures),
                    header=alt.Header(labelExpr=_names_expr(figures), labelAngle=0,
                                      labelAlign="left", labelLimit=170, labelFontSize=12)),
        column=alt.Column("stat:N", title=None, sort=["mean", "max"],
                          header=alt.Header(labelExpr=_names_expr(
                              {"mean": "mean over the cells at this G",
                               "max": "max over the cells at this G"}), labelFontSize=12)),
    ).resolve_scale(y="independent")
    sub = ("Each point: every cell of a controller (variant) at that G, over all U, B, desired "
           "and schedules: the mean (left) and the largest (right). stable_at: over the cells "
           "that settle; the tooltip counts those that never do.")
    return Figure("controllers", title, _finish(chart, title, sub))


def _variant_heatmap(frame: pl.DataFrame, figures: Mapping[str, str], order: Sequence[str],
                     tooltip: list[alt.Tooltip]) -> dict[str, Any]:
    """The controllers chart for many variants: per figure, a variant x G heatmap of means."""
    n_g = max(1, frame["G"].n_unique())
    step = _clamp((WIDTH - 420) // (3 * n_g), 4, 24)
    chart = alt.Chart(inline(frame)).mark_rect().encode(
        x=alt.X("G:O", title="G: ledger delay (s)"),
        y=alt.Y("variant:N", sort=list(order), title=None, axis=alt.Axis(labelLimit=400)),
        color=alt.when("isValid(datum.mean)").then(
            alt.Color("mean:Q", scale=alt.Scale(scheme="orangered"), title=None,
                      legend=alt.Legend(orient="bottom", direction="horizontal",
                                        gradientLength=120)))
        .otherwise(alt.value(QUIET)),
        tooltip=tooltip,
    ).properties(width=alt.Step(step), height=alt.Step(14)).facet(
        facet=alt.Facet("metric:N", title=None, sort=list(figures),
                        header=alt.Header(labelExpr=_names_expr(figures), labelFontSize=12)),
        columns=3,
    ).resolve_scale(color="independent")
    sub = ("Each square: every cell of a variant at that G, over all U, B, desired and "
           "schedules; colour: the mean (each figure its own scale; the tooltip adds the "
           "largest). stable_at: over the cells that settle (grey: none does).")
    return _finish(chart, "Controllers compared against the ledger delay G", sub)


def _finish(chart: alt.TopLevelMixin, title: str, subtitle: str) -> dict[str, Any]:
    """The chart's Vega-Lite spec, titled, with its data inline."""
    lines = [line.strip() for line in subtitle.split(". ") if line.strip()]
    lines = [line if line.endswith(".") else f"{line}." for line in lines]
    titled = chart.properties(title=alt.TitleParams(title, subtitle=lines, anchor="start",
                                                    subtitleFontSize=11))
    spec: dict[str, Any] = titled.to_dict()
    return spec
