"""The report's charts: small aggregates of the sweep's table, drawn as Vega-Lite specs.

No chart embeds the table itself: each aggregates the cells to one mark per (G, U, B)
(or per (U, G + B)), binning an axis only when it has more values than a chart can
show, and its tooltips say how many cells a mark stands for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import altair as alt
import polars as pl

from reconsim.params import METRIC_NAMES
from reconsim.report_data import bin_columns, controllers, describe, select, tally

#: Most rows or columns a heatmap draws; past that, neighbouring values share a bin.
MAX_BINS: Final = 40
#: Most B panels a heatmap draws.
MAX_PANELS: Final = 12
#: Most heatmap marks that also get their number written on them.
MAX_LABELLED: Final = 3000
#: Pixels per heatmap row and column.
STEP: Final = 16
#: Colour of the marks where nothing goes wrong.
QUIET: Final = "#e4ebf1"
#: Colour ramp of the marks where something does, from a share near 0 to a share of 1:
#: even one cell in a thousand shows clearly against QUIET.
ALARM: Final = ["#fdae6b", "#7f0000"]


@dataclass(frozen=True)
class Figure:
    """One chart of the report: its file name, its heading, and its Vega-Lite spec."""

    name: str
    title: str
    spec: dict[str, Any]


def inline(frame: pl.DataFrame) -> alt.Data:
    """A chart's rows, inline in its spec as CSV (no key repeated per row), with the type of
    each numeric or boolean column declared so that Vega parses it back exactly.

    Every chart here is an aggregate whose size the binning bounds (at most
    MAX_BINS x MAX_BINS x MAX_PANELS marks), never the table itself.
    """
    parse = {c: "number" for c, t in frame.schema.items() if t.is_numeric()}
    parse |= {c: "boolean" for c, t in frame.schema.items() if t == pl.Boolean}
    csv = alt.DataFormat(type="csv", parse=parse)  # type: ignore[no-untyped-call]
    return alt.Data(values=frame.write_csv(), format=csv)  # type: ignore[no-untyped-call]


def _spread(lo: str, hi: str) -> pl.Expr:
    """Tooltip text of a range: ``lo`` when both ends are equal, else ``lo`` dash ``hi``."""
    a, b = pl.col(lo).cast(pl.String), pl.col(hi).cast(pl.String)
    return (pl.when(pl.col(lo).eq_missing(pl.col(hi))).then(a.fill_null("null"))
            .otherwise(pl.concat_str(a.fill_null("null"), pl.lit("\u2013"), b.fill_null("null"))))


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
    return (f" {', '.join(binned)} binned: each mark stands for a range of values."
            if binned else "")


def _heatmap_axes(frame: pl.DataFrame) -> tuple[alt.X, alt.Y, alt.Facet]:
    return (
        alt.X("U_label:O", sort=_order(frame, "U"), title="U: loop period (s)"),
        alt.Y("G_label:O", sort=_order(frame, "G"), title="G: ledger delay (s)"),
        alt.Facet("B_label:O", sort=_order(frame, "B"), title="B: startup (s)"),
    )


def law_figure(table: pl.DataFrame) -> Figure:
    """Per (G, U, B), how many ledger cells break the overshoot law, with where they are
    (ledger cells the law does not apply to, ``law_holds`` null, are left out)."""
    ledger = table.filter(pl.col("controller") == "ledger", pl.col("law_holds").is_not_null())
    t, binned = _binned(ledger, {"G": MAX_BINS, "U": MAX_BINS, "B": MAX_PANELS})
    keys = [f"{a}_{p}" for a in ("G", "U", "B") for p in ("lo", "hi", "label")]
    fails = t.filter(~pl.col("law_holds"))
    grid = t.group_by(keys).agg(
        pl.len().alias("cells"),
        (~pl.col("law_holds")).sum().alias("mismatching"),
        pl.col("overshoot").min().alias("o_lo"), pl.col("overshoot").max().alias("o_hi"),
        pl.col("law_overshoot").min().alias("l_lo"), pl.col("law_overshoot").max().alias("l_hi"),
    )
    for axis in ("schedule", "desired"):
        counts = (fails.group_by([*keys, axis]).agg(pl.len().alias("n"))
                  .sort(["n", axis], descending=[True, False], nulls_last=True)
                  .group_by(keys, maintain_order=True).agg(tally(axis).alias(f"by_{axis}")))
        grid = grid.join(counts, on=keys, how="left")
    grid = grid.sort(keys).select(
        "G_label", "U_label", "B_label", "cells", "mismatching",
        (pl.col("mismatching") / pl.col("cells")).round(4).alias("share"),
        _spread("o_lo", "o_hi").alias("measured"), _spread("l_lo", "l_hi").alias("law"),
        pl.col("by_schedule").fill_null("—"), pl.col("by_desired").fill_null("—"),
    )
    x, y, facet = _heatmap_axes(t)
    color = (alt.when(alt.datum.mismatching == 0).then(alt.value(QUIET))
             .otherwise(alt.Color("share:Q", scale=alt.Scale(range=ALARM, domain=[0, 1]),
                                  title="share failing")))
    chart = alt.Chart(inline(grid)).mark_rect(stroke="white", strokeWidth=0.5).encode(
        x=x, y=y, color=color,
        tooltip=[
            alt.Tooltip("G_label:N", title="G"), alt.Tooltip("U_label:N", title="U"),
            alt.Tooltip("B_label:N", title="B"),
            alt.Tooltip("cells:Q", title="ledger cells"),
            alt.Tooltip("mismatching:Q", title="law fails on"),
            alt.Tooltip("share:Q", title="share failing", format=".1%"),
            alt.Tooltip("measured:N", title="measured overshoot"),
            alt.Tooltip("law:N", title="law's overshoot"),
            alt.Tooltip("by_schedule:N", title="failing, by schedule"),
            alt.Tooltip("by_desired:N", title="failing, by desired"),
        ],
    ).properties(width=alt.Step(STEP), height=alt.Step(STEP)).facet(facet=facet, columns=3)
    title = "Overshoot law, ledger controller: cells where it fails"
    sub = ("Each square: all ledger cells with that G, U and B (every desired and schedule); "
           "colour: the share of them where the law fails. "
           f"Pale: the law holds on every one of them.{_binning_note(binned)}")
    return Figure("law", title, _finish(chart, title, sub))


def overshoot_figure(table: pl.DataFrame, fixed: Mapping[str, Any]) -> Figure:
    """Measured overshoot of the ledger controller per (G, U, B) on the slice ``fixed``."""
    ledger = table.filter(pl.col("controller") == "ledger")
    cut = select(ledger, fixed)
    t, binned = _binned(cut, {"G": MAX_BINS, "U": MAX_BINS, "B": MAX_PANELS})
    keys = [f"{a}_{p}" for a in ("G", "U", "B") for p in ("lo", "hi", "label")]
    figures = [*METRIC_NAMES, "law_overshoot"]
    grid = t.group_by(keys).agg(
        pl.len().alias("cells"),
        (~pl.col("law_holds")).sum().alias("mismatching"),
        pl.col("overshoot").max().alias("overshoot_max"),
        *(pl.col(f).min().alias(f"{f}__lo") for f in figures),
        *(pl.col(f).max().alias(f"{f}__hi") for f in figures),
    ).sort(keys)
    grid = grid.select(
        "G_label", "U_label", "B_label", "cells", "mismatching", "overshoot_max",
        *(_spread(f"{f}__lo", f"{f}__hi").alias(f) for f in figures if not _is_float(f)),
        *(_spread(f"{f}__lo", f"{f}__hi").alias(f) for f in figures if _is_float(f)),
    ).with_columns(
        *(pl.col(f"{f}").str.replace_all(r"(\d+\.\d{3})\d+", "$1") for f in figures
          if _is_float(f))
    )
    x, y, facet = _heatmap_axes(t)
    base = alt.Chart().encode(x=x, y=y)
    rect = base.mark_rect().encode(
        color=alt.Color("overshoot_max:Q", scale=alt.Scale(scheme="blues", type="sqrt"),
                        title="overshoot"),
        stroke=alt.when(alt.datum.mismatching > 0).then(alt.value("#d4380d"))
        .otherwise(alt.value("white")),
        strokeWidth=alt.when(alt.datum.mismatching > 0).then(alt.value(2))
        .otherwise(alt.value(0.5)),
        tooltip=[alt.Tooltip("G_label:N", title="G"), alt.Tooltip("U_label:N", title="U"),
                 alt.Tooltip("B_label:N", title="B"), alt.Tooltip("cells:Q", title="cells"),
                 alt.Tooltip("mismatching:Q", title="law fails on"),
                 *(alt.Tooltip(f"{f}:N", title=f) for f in figures)],
    )
    dark = 0.6 * float(grid["overshoot_max"].max() or 0)  # type: ignore[arg-type]
    text = base.mark_text(fontSize=7).encode(
        text=alt.Text("overshoot_max:Q"),
        color=alt.when(alt.datum.overshoot_max == 0).then(alt.value("#999"))
        .when(alt.datum.overshoot_max > dark).then(alt.value("white"))
        .otherwise(alt.value("#111")),
    )
    # Past a few thousand marks the numbers are too many to read and slow to draw.
    layers = [rect, text] if grid.height <= MAX_LABELLED else [rect]
    chart = alt.layer(*layers, data=inline(grid)).properties(
        width=alt.Step(STEP), height=alt.Step(STEP)).facet(facet=facet, columns=3)
    fixed_text = describe(fixed)
    title = "Measured overshoot, ledger controller"
    number = ("Number: the overshoot (the largest, where a mark stands for several cells). "
              if grid.height <= MAX_LABELLED else "")
    sub = (f"One slice of the sweep: {fixed_text}. {number}Red outline: the law fails there."
           f"{_binning_note(binned)}")
    return Figure("overshoot", title, _finish(chart, title, sub))


def _is_float(metric: str) -> bool:
    return metric in ("work_per_round", "reads_per_round")


def boundary_figure(table: pl.DataFrame) -> Figure:
    """Per controller and (U, G + B): the share of cells that overshoot, and the line U = G + B."""
    t = table.with_columns((pl.col("G") + pl.col("B")).alias("GB"))
    t, binned = _binned(t, {"U": MAX_BINS, "GB": MAX_BINS})
    grid = t.group_by("controller", "U_lo", "U_label", "GB_lo", "GB_label").agg(
        pl.len().alias("cells"),
        (pl.col("overshoot") > 0).sum().alias("overshooting"),
        pl.col("overshoot").max().alias("max_overshoot"),
        pl.col("above_boundary").all().alias("all_above"),
        pl.col("above_boundary").any().alias("any_above"),
    ).with_columns(
        (pl.col("overshooting") / pl.col("cells")).round(4).alias("share"),
        pl.when(pl.col("all_above")).then(pl.lit("yes"))
        .when(pl.col("any_above")).then(pl.lit("partly")).otherwise(pl.lit("no"))
        .alias("above"),
    ).drop("all_above", "any_above").sort("controller", "U_lo", "GB_lo")
    top = int(grid["GB_lo"].max() or 0)  # type: ignore[arg-type]
    points = alt.Chart().mark_square(size=40).encode(
        x=alt.X("U_lo:Q", title="U: loop period (s)"),
        y=alt.Y("GB_lo:Q", title="G + B (s)", scale=alt.Scale(domain=[0, max(top, 1)])),
        color=alt.when(alt.datum.overshooting == 0).then(alt.value(QUIET))
        .otherwise(alt.Color("share:Q", scale=alt.Scale(range=ALARM, domain=[0, 1]),
                             title="share overshooting")),
        tooltip=[alt.Tooltip("controller:N"), alt.Tooltip("U_label:N", title="U"),
                 alt.Tooltip("GB_label:N", title="G + B"), alt.Tooltip("cells:Q"),
                 alt.Tooltip("overshooting:Q", title="overshoot > 0"),
                 alt.Tooltip("max_overshoot:Q", title="largest overshoot"),
                 alt.Tooltip("above:N", title="U ≥ G + B")],
    )
    line = alt.Chart().mark_line(color="#333", strokeDash=[4, 3], clip=True).encode(
        x="U_lo:Q", y="U_lo:Q")
    chart = alt.layer(points, line, data=inline(grid)).properties(width=300, height=300).facet(
        column=alt.Column("controller:N", sort=controllers(table), title="controller"))
    title = "Where overshoot happens, against the boundary U = G + B"
    sub = ("Each square: all cells of a controller with that U and G + B. Pale: none "
           "overshoots. Dashed: U = G + B; below-right of it, U ≥ G + B."
           f"{_binning_note(binned)}")
    return Figure("boundary", title, _finish(chart, title, sub))


def read_cost_figure(points: Sequence[Mapping[str, Any]], fixed: Mapping[str, Any],
                     order: Sequence[str]) -> Figure:
    """Reads per round and reads per second against U, one line per controller."""
    frame = pl.DataFrame(list(points)) if points else pl.DataFrame(
        schema={"controller": pl.String, "U": pl.Int64, "reads_per_round": pl.Float64,
                "reads_per_second": pl.Float64})
    frame = frame.with_columns(pl.col("reads_per_round", "reads_per_second").round(4))
    chart = alt.Chart(inline(frame)).transform_fold(
        ["reads_per_round", "reads_per_second"], as_=["measure", "value"],
    ).mark_line(point=True).encode(
        x=alt.X("U:Q", title="U: loop period (s)"),
        y=alt.Y("value:Q", title=None),
        color=alt.Color("controller:N", sort=list(order)),
        tooltip=[alt.Tooltip(f"{c}:{'Q' if frame[c].dtype.is_numeric() else 'N'}")
                 for c in frame.columns],
    ).properties(width=420, height=180).facet(
        row=alt.Row("measure:N", title=None, sort=["reads_per_round", "reads_per_second"]),
    ).resolve_scale(y="independent")
    fixed_text = describe(fixed)
    title = "Read cost against the loop period U"
    sub = f"One slice of the sweep: {fixed_text}. reads_per_second = reads / (duration + 1)."
    return Figure("read_cost", title, _finish(chart, title, sub))


def _finish(chart: alt.FacetChart, title: str, subtitle: str) -> dict[str, Any]:
    """The chart's Vega-Lite spec, titled, with its data inline."""
    lines = [line.strip() for line in subtitle.split(". ") if line.strip()]
    lines = [line if line.endswith(".") else f"{line}." for line in lines]
    titled = chart.properties(title=alt.TitleParams(title, subtitle=lines, anchor="start",
                                                    subtitleFontSize=11))
    spec: dict[str, Any] = titled.to_dict()
    return spec
