"""Controllers and their variants compared, on every cell of each.

A variant is a controller with its values of whichever of its variant parameters
(observe, max_per_round, gain, ttl, restart_at, ..., and a user's controller's own, such
as the deadband's band, known from the table's columns alone) vary in the sweep (null
where the parameter does not apply; see :func:`reconsim.report.query.variant_label`). A
user's controller is a variant like a built-in, in the table, the charts and the
trade-off frontier, under the name the table holds. For each variant: the cost of its
corrections (unneeded copies, overshoot, delete commands that killed nothing), the
service it delivers (excess and missing copy-seconds) and when it settles
(``stable_at``; null when a run ends unsettled), over all its cells and per G.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import altair as alt
import polars as pl
from markupsafe import Markup

from reconsim.model.laws import above_its_boundary, side_counts
from reconsim.model.metrics import (
    COST,
    COST_FIGURES,
    QUALITY,
    QUALITY_FIGURES,
    frontier,
    ties_text,
    tradeoff_figure,
)
from reconsim.report.blocks import macro
from reconsim.report.charts import QUIET, WIDTH, Figure, clamp, finish, inline, names_expr
from reconsim.report.claims import Claim
from reconsim.report.load import Sweep
from reconsim.report.query import (
    Table,
    collect,
    examples,
    lazy,
    variant_label,
    variant_order,
    variant_params,
)
from reconsim.report.section import Context, Section
from reconsim.web.tradeoff import tradeoff_chart


@dataclass(frozen=True, slots=True)
class Overshoot:
    """A variant's overshoot over all its cells (``largest``: the cell with the most), and
    seed 001's boundary claim in both directions on its cells (each side placed by the
    worst case where their delays vary: :func:`~reconsim.model.laws.above_its_boundary`):
    zero overshoot on or above it, overshoot below it (counted only)."""

    cells_positive: int
    mean: float | None
    max: int | None
    above_boundary: Claim
    below_boundary: Claim
    largest: dict[str, Any] | None


def side_claims(above_cells: int, above_positive: int, below_cells: int,
                below_positive: int) -> tuple[Claim, Claim]:
    """The boundary claim on each side, from the cells there and those overshooting."""
    return (Claim.of("U ≥ G + B implies zero overshoot",
                     "cells with U ≥ G + B (its worst case where the delays vary)",
                     above_cells, above_positive),
            Claim.of("U < G + B implies overshoot",
                     "cells with U < G + B (its worst case where the delays vary)", below_cells,
                     below_cells - below_positive))


@dataclass(frozen=True, slots=True)
class Unneeded:
    """A variant's unneeded copies over all its cells."""

    cells_positive: int
    mean: float | None
    max: int | None


@dataclass(frozen=True, slots=True)
class Wasted:
    """A variant's delete commands that killed nothing, of all its delete commands."""

    cells_positive: int
    total: int | None
    max: int | None
    of_delete_commands: int | None
    mean: float | None = None


@dataclass(frozen=True, slots=True)
class MeanMax:
    """A figure's mean and largest value over a variant's cells."""

    mean: float | None
    max: int | None


@dataclass(frozen=True, slots=True)
class Settling:
    """When a variant's cells settle (over those that do; ``latest``: the latest one)."""

    mean: float | None
    max: int | None
    unsettled: int
    latest: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Variant:
    """One controller variant's figures over all its cells."""

    variant: str
    controller: str
    params: dict[str, Any]
    cells: int
    overshoot: Overshoot
    unneeded: Unneeded
    wasted_delete_commands: Wasted
    excess_copy_seconds: MeanMax
    missing_copy_seconds: MeanMax
    stable_at: Settling
    reads: MeanMax


@dataclass(frozen=True, slots=True)
class Extreme:
    """The variant with the most or least of a figure, and its value."""

    variant: str
    value: Any


@dataclass(frozen=True, slots=True)
class Facts:
    """Which variants never do a thing, and which does the most or least of another."""

    no_unneeded: tuple[str, ...]
    never_overshoot: tuple[str, ...]
    no_wasted_deletes: tuple[str, ...]
    always_settle: tuple[str, ...]
    least_missing_mean: Extreme | None
    most_missing_mean: Extreme | None
    least_excess_mean: Extreme | None
    most_excess_mean: Extreme | None
    latest_stable: Extreme | None
    most_unsettled: Extreme | None


@dataclass(frozen=True, slots=True)
class TradeoffRow:
    """A variant's quality (excess copy-seconds, wasted delete commands) and cost (missing
    copy-seconds, ledger reads), each a mean over its cells, and the variants that beat it
    (:func:`reconsim.model.metrics.frontier`: no worse on all four, better on one)."""

    variant: str
    excess_copy_seconds: float | None
    wasted_delete_commands: float | None
    missing_copy_seconds: float | None
    reads: float | None
    beaten_by: tuple[str, ...]
    on_frontier: bool

    @property
    def name(self) -> str:
        """The variant (the chart's point)."""
        return self.variant

    @property
    def figures(self) -> dict[str, float | None]:
        """The quality and cost figures by name."""
        return {f: getattr(self, f) for f in (*QUALITY_FIGURES, *COST_FIGURES)}


@dataclass(frozen=True, slots=True)
class ControllersSummary:
    """Every variant's figures, over all its cells and per G (``summary.json``'s
    ``controllers``; ``by_G``: one row per variant and G, ``{figure}__mean`` and
    ``{figure}__max`` for each compared figure)."""

    population: str
    compared: bool
    varying: tuple[str, ...]
    figures: dict[str, str]
    variants: tuple[Variant, ...]
    by_G: tuple[dict[str, Any], ...]  # noqa: N815 (summary.json's key)
    facts: Facts
    tradeoffs: tuple[TradeoffRow, ...] = ()


CELL_FIGURES: Final = ("overshoot", "unneeded", "wasted_delete_commands", "stable_at")


def variant_rows(c: ControllersSummary) -> list[list[Any]]:
    """Each variant's figures over all its cells, a row of the section's table (its
    headings: ``controllers.html``)."""
    rows = []
    for v in c.variants:
        o, u, w = v.overshoot, v.unneeded, v.wasted_delete_commands
        rows.append([v.variant, v.cells, o.cells_positive, o.max, u.cells_positive,
                     u.max, w.total, w.cells_positive,
                     v.excess_copy_seconds.mean, v.missing_copy_seconds.mean,
                     v.stable_at.mean, v.stable_at.max, v.stable_at.unsettled])
    return rows


#: Past this many variants, a verdict names the extremes instead of every variant.
LISTED_VARIANTS: Final = 4


def render(c: ControllersSummary, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """Every controller and variant side by side, against G, and quality against cost
    (``templates/controllers.html``)."""
    return macro("controllers.html", "body")(
        c, variant_rows(c), figures, _one_g(context), context.constant, CELL_FIGURES,
        LISTED_VARIANTS, ties_text())


#: Most variants the controllers chart draws as lines; past that, a heatmap.
MAX_LINES: Final = 8


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
                    header=alt.Header(labelExpr=names_expr(figures), labelAngle=0,
                                      labelAlign="left", labelLimit=170, labelFontSize=12)),
        column=alt.Column("stat:N", title=None, sort=["mean", "max"],
                          header=alt.Header(labelExpr=names_expr(
                              {"mean": "mean over the cells at this G",
                               "max": "max over the cells at this G"}), labelFontSize=12)),
    ).resolve_scale(y="independent")
    sub = ("Each point: every cell of a controller (variant) at that G, over all U, B, desired "
           "and schedules: the mean (left) and the largest (right). stable_at: over the cells "
           "that settle; the tooltip counts those that never do.")
    return Figure("controllers", title, finish(chart, title, sub))


def _variant_heatmap(frame: pl.DataFrame, figures: Mapping[str, str], order: Sequence[str],
                     tooltip: list[alt.Tooltip]) -> dict[str, Any]:
    """The controllers chart for many variants: per figure, a variant x G heatmap of means."""
    n_g = max(1, frame["G"].n_unique())
    step = clamp((WIDTH - 420) // (3 * n_g), 4, 24)
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
                        header=alt.Header(labelExpr=names_expr(figures), labelFontSize=12)),
        columns=3,
    ).resolve_scale(color="independent")
    sub = ("Each square: every cell of a variant at that G, over all U, B, desired and "
           "schedules; colour: the mean (each figure its own scale; the tooltip adds the "
           "largest). stable_at: over the cells that settle (grey: none does).")
    return finish(chart, "Controllers compared against the ledger delay G", sub)


#: The figures compared, in the order the page shows them: column -> its heading.
COMPARED: Final = {
    "unneeded": "unneeded copies",
    "overshoot": "overshoot (copies)",
    "wasted_delete_commands": "wasted delete commands",
    "excess_copy_seconds": "excess copy-seconds",
    "missing_copy_seconds": "missing copy-seconds",
    "stable_at": "stable_at (s, settled cells)",
}


def controllers_verdict(table: Table, axes: Sequence[str],
                        sizes: Mapping[str, int] | None = None,
                        variant_rows: pl.DataFrame | None = None) -> ControllersSummary:
    """Each variant's figures over all its cells, per G, and which variant does best or worst.

    ``compared`` is true when the sweep holds more than one variant. Means and maxima
    are over every cell of the variant (at that G, for ``by_G``): every U, B, desired,
    schedule and other parameter the sweep ran. ``stable_at``'s mean and max are over
    the cells that settle; ``unsettled`` counts the others. ``sizes``: each axis's number
    of values, and ``variant_rows``, the table's distinct (controller, variant parameters)
    rows, where known.
    """
    params = variant_params(table, sizes, variant_rows)
    t = lazy(table).with_columns(tradeoff_figure("wasted_delete_commands"))
    rest = [a for a in axes if a != "controller"]
    # One query, per variant and G: counts, sums and maxima. The variant's figures over
    # all its cells are those merged over G (a second pass over the table took 5.6 s of
    # the report's time at 10^8 cells). Grouped by the variant's columns and labelled
    # afterwards: a label per row cost more than the aggregates.
    keys = ["controller", *params]
    by_key_g = collect(t.group_by(*keys, "G").agg(pl.len().alias("cells"), *_partials()))
    per_variant = by_key_g.group_by(keys).agg(
        pl.col("cells").sum(),
        *(pl.col(f"{m}__{part}").sum() for m in _SUMMED for part in ("sum", "n")),
        *(pl.col(f"{m}__max").max() for m in _SUMMED),
        *(pl.col(f"{m}__sum").sum() for m in _TOTALLED),
        *(pl.col(c).sum() for c in _COUNTED),
    ).select(*keys, "cells", *_variant_figures())
    by_g = by_key_g.select(
        *keys, "G", "cells",
        *(_mean_of(c).alias(f"{c}__mean") for c in COMPARED),
        *(pl.col(f"{c}__max") for c in COMPARED),
        "unsettled",
    )
    per_variant = per_variant.select(variant_label(params), pl.all())
    order = variant_order(per_variant, params)
    by_g = by_g.select(variant_label(params), pl.exclude(keys))
    rows = {r["variant"]: r for r in per_variant.iter_rows(named=True)}
    variants = [_variant(t.filter(*(pl.col(k).eq_missing(rows[label][k]) for k in keys)),
                         rows[label], params, rest)
                for label in order]
    by_g = by_g.with_columns(pl.col("variant").replace_strict(
        {v: i for i, v in enumerate(order)}, return_dtype=pl.Int64).alias("__rank"))
    by_g = by_g.sort("__rank", "G").drop("__rank")
    return ControllersSummary(
        population="every cell of each variant; means and maxima over all its cells",
        compared=len(order) > 1,
        varying=tuple(params),
        figures=dict(COMPARED),
        variants=tuple(variants),
        by_G=tuple(by_g.to_dicts()),
        facts=_facts(variants),
        tradeoffs=_tradeoffs(variants),
    )


def _tradeoffs(variants: Sequence[Variant]) -> tuple[TradeoffRow, ...]:
    """Each variant's quality against its cost (means over its cells), and who beats it."""
    figures = {v.variant: {f: getattr(v, f).mean for f in (*QUALITY_FIGURES, *COST_FIGURES)}
               for v in variants}
    return tuple(TradeoffRow(variant=t.name, **t.figures, beaten_by=t.beaten_by,
                             on_frontier=t.on_frontier) for t in frontier(figures))


#: The figures summed, counted (non-null) and maximised per variant and G, and merged.
_SUMMED: Final = ("overshoot", "unneeded", "wasted_delete_commands", "reads",
                  "excess_copy_seconds", "missing_copy_seconds", "stable_at")
#: The figures only summed (their totals), per variant and G, and merged.
_TOTALLED: Final = ("delete_commands",)
#: Counts of cells per variant and G, summed.
_COUNTED: Final = ("overshoot_cells", "unneeded_cells", "wasted_cells", "unsettled",
                   "above_cells", "above_positive", "below_cells", "below_positive")


def _partials() -> list[pl.Expr]:
    """Per group of cells: each of :data:`_SUMMED`'s sum, non-null count and maximum, the
    sums of :data:`_TOTALLED` and the counts of :data:`_COUNTED` (aggregates that merge
    by summing, and maxima)."""
    above, overshoot = above_its_boundary(stored=True), pl.col("overshoot") > 0
    return [
        *(pl.col(m).sum().alias(f"{m}__sum") for m in _SUMMED),
        *(pl.col(m).count().alias(f"{m}__n") for m in _SUMMED),
        *(pl.col(m).max().alias(f"{m}__max") for m in _SUMMED),
        *(pl.col(m).sum().alias(f"{m}__sum") for m in _TOTALLED),
        overshoot.sum().alias("overshoot_cells"),
        (pl.col("unneeded") > 0).sum().alias("unneeded_cells"),
        (pl.col("wasted_delete_commands") > 0).sum().alias("wasted_cells"),
        pl.col("stable_at").null_count().alias("unsettled"),
        *side_counts(above, overshoot),
    ]


def _mean_of(m: str) -> pl.Expr:
    """The mean of figure ``m`` from its sum and count, to three places (null when every
    value is null)."""
    n = pl.col(f"{m}__n")
    return pl.when(n > 0).then(pl.col(f"{m}__sum") / n).round(3)


def _variant_figures() -> list[pl.Expr]:
    """A variant's figures over all its cells, from its merged :func:`_partials`."""
    return [
        pl.col("overshoot_cells"),
        _mean_of("overshoot").alias("overshoot_mean"),
        pl.col("overshoot__max").alias("overshoot_max"),
        pl.col("unneeded_cells"),
        _mean_of("unneeded").alias("unneeded_mean"),
        pl.col("unneeded__max").alias("unneeded_max"),
        pl.col("wasted_cells"),
        pl.col("wasted_delete_commands__sum").alias("wasted_total"),
        pl.col("delete_commands__sum").alias("delete_commands_total"),
        pl.col("wasted_delete_commands__max").alias("wasted_max"),
        _mean_of("wasted_delete_commands").alias("wasted_mean"),
        _mean_of("reads").alias("reads_mean"), pl.col("reads__max").alias("reads_max"),
        _mean_of("excess_copy_seconds").alias("excess_mean"),
        pl.col("excess_copy_seconds__max").alias("excess_max"),
        _mean_of("missing_copy_seconds").alias("missing_mean"),
        pl.col("missing_copy_seconds__max").alias("missing_max"),
        _mean_of("stable_at").alias("stable_mean"),
        pl.col("stable_at__max").alias("stable_max"),
        pl.col("unsettled", "above_cells", "above_positive", "below_cells", "below_positive"),
    ]


def _variant(part: pl.LazyFrame, row: Mapping[str, Any], params: Sequence[str],
             rest: Sequence[str]) -> Variant:
    """One variant's figures over all its cells, from its row of aggregates (the example
    cells from ``part``, its cells)."""
    figures = ["overshoot", "unneeded", "wasted_delete_commands", "stable_at"]
    largest = (examples(part.filter(pl.col("overshoot") > 0), rest, figures,
                        pl.col("overshoot"), limit=1) if row["overshoot_cells"] else [])
    latest = (examples(part.filter(pl.col("stable_at").is_not_null()), rest, figures,
                       pl.col("stable_at"), limit=1) if row["unsettled"] < row["cells"] else [])
    above, below = side_claims(row["above_cells"], row["above_positive"], row["below_cells"],
                               row["below_positive"])
    return Variant(
        variant=row["variant"],
        controller=row["controller"],
        params={p: row[p] for p in params},
        cells=row["cells"],
        overshoot=Overshoot(
            cells_positive=row["overshoot_cells"], mean=row["overshoot_mean"],
            max=row["overshoot_max"],
            above_boundary=above, below_boundary=below,
            largest=largest[0] if largest else None),
        unneeded=Unneeded(row["unneeded_cells"], row["unneeded_mean"], row["unneeded_max"]),
        wasted_delete_commands=Wasted(row["wasted_cells"], row["wasted_total"],
                                      row["wasted_max"], row["delete_commands_total"],
                                      row["wasted_mean"]),
        excess_copy_seconds=MeanMax(row["excess_mean"], row["excess_max"]),
        missing_copy_seconds=MeanMax(row["missing_mean"], row["missing_max"]),
        stable_at=Settling(row["stable_mean"], row["stable_max"], row["unsettled"],
                           latest[0] if latest else None),
        reads=MeanMax(row["reads_mean"], row["reads_max"]),
    )


def _facts(variants: Sequence[Variant]) -> Facts:
    """Which variants never do a thing, and which does the most or least of another."""
    def labels(test: Callable[[Variant], bool]) -> tuple[str, ...]:
        """The variants for which ``test`` holds, in order."""
        return tuple(v.variant for v in variants if test(v))

    def extreme(figure: Callable[[Variant], Any], pick: Any) -> Extreme | None:
        """The variant ``pick`` (min or max) chooses by a figure; ties: the first listed."""
        known = [v for v in variants if figure(v) is not None]
        if not known:
            return None
        best = pick(known, key=figure)
        return Extreme(best.variant, figure(best))

    return Facts(
        no_unneeded=labels(lambda v: v.unneeded.cells_positive == 0),
        never_overshoot=labels(lambda v: v.overshoot.cells_positive == 0),
        no_wasted_deletes=labels(lambda v: v.wasted_delete_commands.total == 0),
        always_settle=labels(lambda v: v.stable_at.unsettled == 0),
        least_missing_mean=extreme(lambda v: v.missing_copy_seconds.mean, min),
        most_missing_mean=extreme(lambda v: v.missing_copy_seconds.mean, max),
        least_excess_mean=extreme(lambda v: v.excess_copy_seconds.mean, min),
        most_excess_mean=extreme(lambda v: v.excess_copy_seconds.mean, max),
        latest_stable=extreme(lambda v: v.stable_at.max, max),
        most_unsettled=extreme(lambda v: v.stable_at.unsettled, max),
    )


def summarize(sweep: Sweep) -> ControllersSummary:
    """Every variant's figures (``summary.json``'s ``controllers``)."""
    return controllers_verdict(sweep.table, sweep.axes, sweep.sizes, sweep.variants)


def _one_g(context: Context) -> Any:
    """G's value when the sweep holds one only (a chart against it would be one point a
    line), else None."""
    g = context.axes.get("G")
    return g.min if g is not None and g.distinct == 1 else None


def charts(c: ControllersSummary, context: Context) -> list[Figure]:
    """Each figure against G per variant (when G takes more than one value), and quality
    against cost, when the sweep compares two or more."""
    if not c.compared:
        return []
    against_g = ([] if _one_g(context) is not None else
                 [controllers_figure(c.by_G, c.figures, [v.variant for v in c.variants])])
    return [*against_g,
            Figure("tradeoff", "Quality against cost, per controller variant",
                   tradeoff_chart(c.tradeoffs, QUALITY, COST))]


def glance(c: ControllersSummary) -> Markup | None:
    """Which variants avoid the damage, in one sentence."""
    return macro("controllers.html", "glance")(c.facts) if c.compared else None


SECTION = Section("controllers", summarize, render, charts, glance,
                  title="Controllers compared", checks="the controllers side by side")
