"""The report's charts: small aggregates of the sweep's table, drawn as Vega-Lite specs.

No chart embeds the table itself. The heatmaps draw one mark per cell where the mark
budget allows it; past it, neighbouring values share a bin, or a panel covers every
value of an axis, and the tooltips say how many cells a mark stands for. Every cell
counts in some mark: nothing is left out to fit.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, Final

import altair as alt
import polars as pl

from reconsim.report.query import bin_columns, collect, collect_all
from reconsim.web.charts import ALARM, QUIET, SHARE, WIDTH, Figure, inline

# The kit's names are the report's too: its sections take them from here.
__all__ = ["ALARM", "QUIET", "SHARE", "WIDTH", "Figure", "add_bins", "bin_label",
           "bin_order", "binning_note", "clamp", "finish", "inline", "label_expr",
           "names_expr", "range_text"]

def range_text(lo: str, hi: str) -> pl.Expr:
    """Tooltip text of a range: ``lo`` when both ends are equal, else ``lo to hi`` (a dash
    would read as a minus beside negative values); an em dash when both are null."""
    a, b = pl.col(lo).cast(pl.String), pl.col(hi).cast(pl.String)
    return (pl.when(pl.col(lo).is_null()).then(pl.lit("\u2014"))
            .when(pl.col(lo) == pl.col(hi)).then(a)
            .otherwise(pl.concat_str(a, pl.lit(" to "), b)))


def add_bins(table: pl.LazyFrame | pl.DataFrame, limits: Mapping[str, int]
             ) -> tuple[pl.LazyFrame, list[str]]:
    """Add ``{axis}_lo/_hi/_label`` bin columns; return the query and the axes really binned
    (one query reads every axis's distinct values)."""
    exprs: list[pl.Expr] = []
    coarse_axes = []
    query = table.lazy()
    present = collect_all([query.select(pl.col(axis).unique()) for axis in limits])
    for (axis, limit), values in zip(limits.items(), present, strict=True):
        cols, coarse = bin_columns(values[axis].to_list(), axis, limit)
        exprs += cols
        if coarse:
            coarse_axes.append(axis)
    return query.with_columns(exprs), coarse_axes


def bin_label(axis: str) -> pl.Expr:
    """``{axis}_label`` from the ``{axis}_lo`` and ``{axis}_hi`` columns, as
    :func:`~reconsim.report.query.bin_columns` writes it: for an aggregate grouped by the
    bounds, labelled afterwards (a string key per row cost polars far more memory)."""
    lo, hi = pl.col(f"{axis}_lo"), pl.col(f"{axis}_hi")
    return pl.when(lo == hi).then(lo.cast(pl.String)).otherwise(
        pl.concat_str(lo.cast(pl.String), pl.lit("\u2013"), hi.cast(pl.String))
    ).alias(f"{axis}_label")


def bin_order(frame: pl.LazyFrame | pl.DataFrame, axis: str) -> list[str]:
    """The bin labels of one axis in ascending order of their lowest value."""
    bounds = collect(frame.lazy().select(f"{axis}_lo", f"{axis}_hi").unique())
    return bounds.sort(f"{axis}_lo").select(bin_label(axis))[f"{axis}_label"].to_list()


def binning_note(binned: Sequence[str]) -> str:
    """A subtitle's sentence naming the binned axes, if any."""
    return (f" {', '.join(binned)} binned: each mark stands for a range of values."
            if binned else "")


def clamp(value: int, lo: int, hi: int) -> int:
    """``value`` kept within ``lo`` .. ``hi``."""
    return max(lo, min(hi, value))


def label_expr(labels: Sequence[str]) -> str:
    """A Vega expression mapping a panel's index to its label."""
    return f"{json.dumps(list(labels), ensure_ascii=False)}[datum.value]"


def names_expr(names: Mapping[str, str]) -> str:
    """A Vega expression mapping a field value to its heading."""
    return f"{json.dumps(dict(names), ensure_ascii=False)}[datum.value]"


#: The most characters a subtitle line takes (11 px text: about the charts' width).
SUBTITLE_CHARACTERS: Final = 170


def finish(chart: alt.TopLevelMixin, title: str, subtitle: str) -> dict[str, Any]:
    """The chart's Vega-Lite spec, titled, with its data inline.

    Marks carry no ARIA description: Vega writes one per mark, every encoded field spelled
    out, and the law's heatmap at 10^7 cells came to a 9.3 MB SVG drawn in 1.3 s; without
    them 1.0 MB in 0.45 s, the picture unchanged. Titles, axes and legends keep theirs, and
    the page's tables give the numbers."""
    lines = [line.strip() for line in subtitle.split(". ") if line.strip()]
    lines = [part for line in lines  # no line wider than the page (a cell's command can be)
             for part in textwrap.wrap(line if line.endswith(".") else f"{line}.",
                                       SUBTITLE_CHARACTERS, break_on_hyphens=False)]
    # Room on the right: the SVG is sized by vl-convert's text metrics, and a browser's font
    # can draw a legend's longest label a few pixels wider (it was cut at the edge).
    titled = chart.properties(title=alt.TitleParams(title, subtitle=lines, anchor="start",
                                                    subtitleFontSize=11),
                              padding={"left": 5, "top": 5, "bottom": 5, "right": 24})
    spec: dict[str, Any] = titled.configure_mark(aria=False).to_dict()
    return spec
