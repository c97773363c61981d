"""The overshoot law: the ledger controller's measured overshoot against
:data:`~reconsim.model.laws.LAW_FORMULA`, on every ledger row the law covers; where it
fails, parameter by parameter; G x U heatmaps with every mismatched cell outlined."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import altair as alt
import polars as pl
from markupsafe import Markup

from reconsim.model.laws import (
    EXCLUSIONS,
    LAW_FORMULA,
    LAW_SCOPE,
    law_exclusion,
    listing_delay,
)
from reconsim.report.blocks import macro
from reconsim.report.charts import (
    ALARM,
    QUIET,
    WIDTH,
    Figure,
    bin_label,
    bin_order,
    binning_note,
    clamp,
    finish,
    inline,
    label_expr,
    range_text,
)
from reconsim.report.claims import Check, Claim, Spread, locate
from reconsim.report.load import LAW_EXCLUDED, Sweep
from reconsim.report.query import (
    Deaths,
    Table,
    bin_columns,
    collect,
    collect_all,
    groups,
    height,
    in_order,
    lazy,
    tally,
)
from reconsim.report.section import NOT_IN_JSON, Context, Section
from reconsim.web.html import plain


def _counts(table: Table) -> dict[str, dict[str, Any]]:
    """Per controller, every count the law's verdict and scopes need, in one query."""
    names = lazy(table).collect_schema().names()
    excluded = pl.col(LAW_EXCLUDED) if LAW_EXCLUDED in names else law_exclusion(names)
    checked = pl.col("law_holds").is_not_null()
    mismatched = checked & ~pl.col("law_holds")
    created = pl.col("observe").eq_missing("created")
    diff = pl.col("overshoot") - pl.col("law_overshoot")
    zero_delay = listing_delay() == 0
    early = ~zero_delay & (pl.col("U") < pl.col("B"))
    elsewhere = ~zero_delay & ~early
    rows = collect(lazy(table).group_by("controller").agg(
        pl.len().alias("rows"),
        checked.sum().alias("checked"),
        mismatched.sum().alias("mismatches"),
        (checked & ~created).sum().alias("ready"),
        (mismatched & ~created).sum().alias("ready_mismatches"),
        (checked & created).sum().alias("created"),
        (mismatched & created).sum().alias("created_mismatches"),
        (mismatched & (diff > 0)).sum().alias("above"),
        (mismatched & (diff < 0)).sum().alias("below"),
        pl.when(mismatched).then(diff).min().alias("difference_min"),
        pl.when(mismatched).then(diff).max().alias("difference_max"),
        (mismatched & (pl.col("law_overshoot") < 0)).sum().alias("law_negative"),
        (mismatched & zero_delay).sum().alias("zero_delay"),
        (checked & zero_delay).sum().alias("zero_delay_of"),
        (mismatched & early).sum().alias("early"),
        (checked & early).sum().alias("early_of"),
        (mismatched & elsewhere).sum().alias("elsewhere"),
        (checked & elsewhere).sum().alias("elsewhere_of"),
        pl.when(mismatched & elsewhere).then(diff).min().alias("elsewhere_min"),
        pl.when(mismatched & elsewhere).then(diff).max().alias("elsewhere_max"),
        *((excluded == key).sum().alias(f"excluded_{key}") for key in EXCLUSIONS),
    ))
    return {r["controller"]: r for r in rows.iter_rows(named=True)}


@dataclass(frozen=True, slots=True)
class LawScope:
    """Which law applies to some rows: how many, and (where checked) how many mismatch."""

    rows: str
    law: str | None
    cells: int
    mismatches: int | None


@dataclass(frozen=True, slots=True)
class Causes:
    """The law on the checked cells split three ways, each a :class:`~.claims.Claim`
    (see :func:`law_verdict`): where the listing delay is zero, where U < B, and
    elsewhere (U >= B and a positive delay: where and by how much it fails there)."""

    zero_delay: Claim
    U_below_B: Claim
    elsewhere: Claim


@dataclass(frozen=True, slots=True)
class LawGrid:
    """The law's heatmaps as data: one row per mark (``grid``), the panels' labels, the
    G and U bins in order, and which axes got panels, shared them or were binned."""

    grid: pl.DataFrame
    labels: tuple[str, ...]
    g_order: tuple[str, ...]
    u_order: tuple[str, ...]
    facets: tuple[str, ...]
    shared: tuple[str, ...]
    binned: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LawSummary:
    """The law against the measured overshoot (``summary.json``'s ``law``); ``chart`` is the
    heatmaps' data (None without ledger cells the law covers)."""

    population: str
    cells: int
    mismatches: int
    holds: int
    not_applicable: int
    scopes: tuple[LawScope, ...]
    measured_above_law: int
    measured_below_law: int
    difference_min: int | None
    difference_max: int | None
    law_negative: int
    causes: Causes
    where: tuple[dict[str, Any], ...]
    by_schedule: tuple[dict[str, Any], ...]
    examples: tuple[dict[str, Any], ...]
    chart: LawGrid | None = field(default=None, metadata=NOT_IN_JSON)
    #: Why the ``not_applicable`` rows are not checked, in words (the scopes count them).
    excluded: str = field(default="", metadata=NOT_IN_JSON)
    #: Of them, the rows left unchecked for their delays vary (the scopes count them too).
    varying: int = field(default=0, metadata=NOT_IN_JSON)

    @property
    def claim(self) -> Claim:
        """The law over every ledger cell it applies to, as one claim (its figures are the
        summary's own: ``cells``, ``mismatches``, ``where`` and ``examples``)."""
        return Claim.of("The overshoot law", "ledger cells it applies to", self.cells,
                        self.mismatches,
                        by=Spread("measured minus law", self.difference_min,
                                  self.difference_max),
                        where=self.where, examples=self.examples)


def law_scopes(counts: Mapping[str, Mapping[str, Any]]) -> tuple[LawScope, ...]:
    """Which law applies to which rows, with how many rows and (where checked) mismatches,
    from :func:`_counts`.

    As :mod:`reconsim.model.laws` states it: the uncapped ledger controller, with the
    ceil(G / U) analogue where copies are listed at creation; no law elsewhere.
    """
    out = []
    ledger = counts.get("ledger")
    if ledger is not None:
        for observe in ("ready", "created"):
            if ledger[observe]:
                out.append(LawScope(f"ledger, observe = {observe}, no cap, undamped",
                                    LAW_FORMULA[observe], ledger[observe],
                                    ledger[f"{observe}_mismatches"]))
        for key, words in EXCLUSIONS.items():
            if ledger[f"excluded_{key}"]:
                out.append(LawScope(f"ledger with {words}", None,
                                    ledger[f"excluded_{key}"], None))
        rest = ledger["rows"] - ledger["checked"] - sum(
            ledger[f"excluded_{key}"] for key in EXCLUSIONS)
        if rest:
            out.append(LawScope("ledger, no law value in the table", None, rest, None))
    for name in in_order(counts):
        if name != "ledger":
            out.append(LawScope(name, None, counts[name]["rows"], None))
    return tuple(out)


#: :func:`_counts`'s row for a sweep without ledger cells.
_NO_LEDGER: Final[Mapping[str, Any]] = dict.fromkeys(
    ("rows", "checked", "mismatches", "above", "below", "law_negative", "zero_delay",
     "zero_delay_of", "early", "early_of", "elsewhere", "elsewhere_of",
     *(f"excluded_{key}" for key in EXCLUSIONS)), 0) | dict.fromkeys(
    ("difference_min", "difference_max", "elsewhere_min", "elsewhere_max"))


def law_verdict(table: Table, axes: Sequence[str], schedules: Mapping[str, Deaths],
                chart: bool = True, sizes: Mapping[str, int] | None = None) -> LawSummary:
    """The ledger controller's measured overshoot against the law, on every ledger row it covers.

    ``cells`` are the ledger rows whose ``law_holds`` is not null (``not_applicable``
    counts the other ledger rows); ``mismatches`` those where measured and law differ.
    ``causes`` checks the law on three parts of those cells, each a
    :class:`~reconsim.report.claims.Claim`: a zero delay (the law's ceiling is 0 and its
    value negative), U < B (a new copy is not ready before the next round), and the rest
    (where and by how much it fails there); ``where`` and ``by_schedule`` say which
    parameter values the mismatches have, each with the count of all checked cells having
    that value. ``chart``: whether to aggregate the heatmaps' data too (:func:`law_grid`);
    ``sizes``: each axis's number of values, for :func:`~reconsim.report.query.where`.
    """
    counts = _counts(table)
    c = counts.get("ledger") or _NO_LEDGER
    checked = lazy(table).filter(pl.col("controller") == "ledger",
                                 pl.col("law_holds").is_not_null())
    rest = [a for a in axes if a != "controller"]
    diff = pl.col("overshoot") - pl.col("law_overshoot")
    mismatched = checked.filter(~pl.col("law_holds"))
    zero_delay = listing_delay() == 0
    elsewhere = ~zero_delay & ~(pl.col("U") < pl.col("B"))
    figures = ["overshoot", "law_overshoot"]
    # Where the mismatches lie, among all checked cells and among those elsewhere: one read
    # per group of axes for both.
    checks = {"all": Check(None, ~pl.col("law_holds"), diff.abs())} if c["mismatches"] else {}
    if c["elsewhere"]:
        checks["elsewhere"] = Check(elsewhere, ~pl.col("law_holds"), diff.abs())
    located = locate(checked, checks, rest, figures, sizes)
    every, listed = located.get("all", ((), ()))
    return LawSummary(
        population=f"ledger rows where law_holds is not null: {LAW_SCOPE}, every observe "
                   "(created: the ⌈G / U⌉ analogue)",
        cells=c["checked"],
        mismatches=c["mismatches"],
        holds=c["checked"] - c["mismatches"],
        not_applicable=c["rows"] - c["checked"],
        scopes=law_scopes(counts),
        excluded=_excluded(c),
        varying=c["excluded_varying"],
        measured_above_law=c["above"],
        measured_below_law=c["below"],
        difference_min=c["difference_min"],
        difference_max=c["difference_max"],
        law_negative=c["law_negative"],
        causes=_causes(c, located.get("elsewhere", ((), ()))),
        where=tuple(every),
        by_schedule=(tuple(groups(mismatched, checked, ["schedule"], rest, sizes))
                     if c["mismatches"] else ()),
        examples=tuple(listed),
        chart=law_grid(checked, axes) if chart and c["checked"] else None,
    )


def _causes(counts: Mapping[str, Any],
            elsewhere: tuple[Sequence[dict[str, Any]], Sequence[dict[str, Any]]]) -> Causes:
    """The law where the delay is zero, where U < B and elsewhere, from :func:`_counts`'s
    row and where the mismatches elsewhere lie (and the worst of them)."""
    where, listed = elsewhere
    return Causes(
        zero_delay=Claim.of("The law where the listing delay is zero",
                            "ledger cells with no delay at all", counts["zero_delay_of"],
                            counts["zero_delay"]),
        U_below_B=Claim.of("The law where U < B", "ledger cells with U < B and a positive "
                           "delay", counts["early_of"], counts["early"]),
        elsewhere=Claim.of("The law where U ≥ B and the delay is positive",
                           "ledger cells with U ≥ B and a positive delay",
                           counts["elsewhere_of"], counts["elsewhere"],
                           by=Spread("measured minus law", counts["elsewhere_min"],
                                     counts["elsewhere_max"]),
                           where=where, examples=listed))


def _excluded(counts: Mapping[str, Any]) -> str:
    """The ledger rows the law does not check, by why: "480 with damping (gain below 1),
    ..." (each row counted once, under the first reason of :data:`EXCLUSIONS` it has;
    rows whose table holds no law value for none of them, as such)."""
    parts = [f"{counts[f'excluded_{key}']:,} with {words}"
             for key, words in EXCLUSIONS.items() if counts[f"excluded_{key}"]]
    rest = counts["rows"] - counts["checked"] - sum(
        counts[f"excluded_{key}"] for key in EXCLUSIONS)
    if rest:
        parts.append(f"{rest:,} whose table holds no law value")
    return ", ".join(parts)


def render(law: LawSummary, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """The law, where it applies, its verdict, its heatmaps and where it fails
    (``templates/law.html``)."""
    return macro("law.html", "body")(
        law, LAW_FORMULA, LAW_SCOPE, figures.get("law"), context.constant,
        by_group_rows(law.by_schedule))


def by_group_rows(groups: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """The by-group table's headings, and one row per group: its key, its counts and each
    parameter's range among its cells."""
    if not groups:
        return [], []
    keys = list(groups[0]["key"])
    axes = [a for a in groups[0]["ranges"]
            if any(g["ranges"][a]["distinct"] > 1 for g in groups)
            or len({plain(g["ranges"][a]["min"]) for g in groups}) > 1]
    rows = []
    for g in groups:
        ranges = []
        for a in axes:
            r = g["ranges"][a]
            lo, hi = r["min"], r["max"]
            text = plain(lo) if lo == hi else f"{plain(lo)} \u2013 {plain(hi)}"
            ranges.append(f"{text} ({r['distinct']})" if r["distinct"] > 1 else text)
        rows.append([*(g["key"][k] for k in keys), f"{g['cells']:,} of {g['of']:,}", *ranges])
    return [*keys, "mismatched of all", *axes], rows


#: Most marks the law's heatmap draws; past that, desired, schedule and other axes share
#: panels instead of each value getting its own.
MAX_LAW_MARKS: Final = 30_000


#: Most rows (G) and columns (U) a heatmap draws; past that, neighbouring values share a bin.
MAX_G_BINS: Final = 60


MAX_U_BINS: Final = 120


#: Most B values the heatmap gives their own panels; past that, B is binned.
MAX_B_PANELS: Final = 12


#: Most heatmap marks that also get their number written on them.
MAX_LABELLED: Final = 1500


def law_facets(t: Table, axes: Sequence[str], per_panel: int,
               budget: int = MAX_LAW_MARKS) -> tuple[list[str], list[str]]:
    """Which of ``axes`` get a panel per value (besides B's), and which share panels.

    Candidates, in order: observe, desired, schedule, then the other axes (G, U, B and
    controller aside) that vary among the rows. Each gets its own panels if the marks,
    ``per_panel`` each, stay within ``budget``.
    """
    first = [a for a in ("observe", "desired", "schedule") if a in axes]
    rest = [a for a in axes if a not in (*first, "controller", "G", "U", "B")]
    varying = collect(lazy(t).select(pl.col(a).n_unique() for a in (*first, *rest)))
    candidates = [a for a in (*first, *rest) if varying[a].item() > 1]
    facets: list[str] = []
    for axis in candidates:
        panels = height(lazy(t).select("B_lo", *facets, axis).unique())
        if panels * per_panel <= budget:
            facets.append(axis)
    return facets, [a for a in candidates if a not in facets]


def law_grid(rows: pl.LazyFrame, axes: Sequence[str]) -> LawGrid:
    """The heatmaps' data from the ledger rows the law covers: one mark per (panel, G bin,
    U bin), one panel per B and, where the mark budget allows, per desired, schedule and
    other varying axes (see :func:`law_facets`).

    Four reads of the rows, and one more per axis sharing the panels: the distinct panel
    keys (B and every candidate axis: a count per combination, a small group table where
    ``n_unique`` over many rows held them all), G's values, U's values, and the aggregate
    by the raw values of the panel keys, G and U, binned afterwards in memory."""
    first = [a for a in ("observe", "desired", "schedule") if a in axes]
    others = [a for a in axes if a not in (*first, "controller", "G", "U", "B")]
    keys_q = rows.group_by("B", *first, *others).agg(pl.len().alias("__n"))
    # One query per axis: unique().implode() of two at once held every row (1.3 GB at 10^8).
    panel_keys, g_values, u_values = collect_all(
        [keys_q, rows.select(pl.col("G").unique()), rows.select(pl.col("U").unique())])
    limits = {"G": MAX_G_BINS, "U": MAX_U_BINS, "B": MAX_B_PANELS}
    present = {"G": g_values["G"].to_list(), "U": u_values["U"].to_list(),
               "B": panel_keys["B"].unique().to_list()}
    columns: dict[str, list[pl.Expr]] = {}
    binned = []
    for axis, limit in limits.items():
        columns[axis], coarse = bin_columns(present[axis], axis, limit)
        if coarse:
            binned.append(axis)
    g_order = bin_order(pl.DataFrame({"G": present["G"]}).with_columns(columns["G"]), "G")
    u_order = bin_order(pl.DataFrame({"U": present["U"]}).with_columns(columns["U"]), "U")
    n_g, n_u = len(g_order), len(u_order)
    t = panel_keys.with_columns(columns["B"])
    facets, shared = law_facets(t, axes, max(1, n_g * n_u))
    panel_keys_sorted = ["B_lo", "B_label", *facets]
    panels = (t.select("B_lo", "B_hi", *facets).unique().with_columns(bin_label("B"))
              .drop("B_hi").sort(panel_keys_sorted, nulls_last=False))
    labels = [" \u00b7 ".join([f"B = {r['B_label']}",
                               *(f"{a} = {'null' if r[a] is None else r[a]}" for a in facets)])
              for r in panels.iter_rows(named=True)]
    panel_index = panels.with_row_index("panel").drop("B_label")
    # Grouped by the bins' bounds (integers); the panel and the labels are put on the
    # aggregates afterwards.
    bounds = ["B_lo", *facets, "G_lo", "G_hi", "U_lo", "U_hi"]
    keys = ["panel", "G_lo", "G_label", "U_lo", "U_label"]
    bin_bounds = [e for axis in limits for e in columns[axis][:2]]  # lo and hi

    def keyed(frame: pl.DataFrame) -> pl.DataFrame:
        """An aggregate by ``bounds`` with its panel and the G and U labels."""
        return (frame.join(panel_index, on=["B_lo", *facets], how="left", nulls_equal=True)
                .with_columns(bin_label("G"), bin_label("U"))
                .drop("B_lo", *facets, "G_hi", "U_hi"))

    # Aggregated by the raw values first (few groups, little memory), then by bin.
    mism = ~pl.col("law_holds")
    ranged = ("overshoot", "law_overshoot", "unneeded", "stable_at")
    raw = collect(rows.group_by("B", *facets, "G", "U").agg(
        pl.len().alias("cells"),
        mism.sum().alias("mismatching"),
        *(pl.col(c).min().alias(f"{c}__lo") for c in ranged),
        *(pl.col(c).max().alias(f"{c}__hi") for c in ranged),
        pl.col("stable_at").null_count().alias("unsettled"),
    ))
    grid = raw.with_columns(bin_bounds).group_by(bounds).agg(
        pl.col("cells").sum(),
        pl.col("mismatching").sum(),
        pl.col("overshoot__hi").max().alias("overshoot_max"),
        *(pl.col(f"{c}__lo").min() for c in ranged),
        *(pl.col(f"{c}__hi").max() for c in ranged),
        pl.col("unsettled").sum(),
    )
    grid = keyed(grid)
    for axis in shared:
        # Counted by the raw values (few groups), then by square and tallied in one query
        # on those counts, the largest first within each square: binned, sorted and
        # grouped eagerly, the 2.2 million (square, value) rows at 10^8 cells took 0.67 GB.
        counts = collect(rows.filter(mism).group_by("B", *facets, "G", "U", axis).agg(
            pl.len().alias("n")).with_columns(bin_bounds)
            .group_by([*bounds, axis]).agg(pl.col("n").sum())
            .group_by(bounds).agg(tally(axis).alias(f"by_{axis}")))
        grid = grid.join(keyed(counts), on=keys, how="left")
    grid = grid.sort(keys).select(
        "panel", "G_label", "U_label", "cells", "mismatching", "overshoot_max",
        range_text("overshoot__lo", "overshoot__hi").alias("overshoot"),
        range_text("law_overshoot__lo", "law_overshoot__hi").alias("law"),
        range_text("unneeded__lo", "unneeded__hi").alias("unneeded"),
        range_text("stable_at__lo", "stable_at__hi").alias("stable_at"),
        "unsettled",
        *(pl.col(f"by_{a}").fill_null("\u2014") for a in shared),
    )
    return LawGrid(grid=grid, labels=tuple(labels), g_order=tuple(g_order),
                   u_order=tuple(u_order), facets=tuple(facets), shared=tuple(shared),
                   binned=tuple(binned))


def law_figure(law: LawGrid) -> Figure:
    """G x U heatmaps of the ledger cells the law covers, from :func:`law_grid`'s data:
    colour the measured overshoot, a red outline where the law fails on any cell of the
    mark; one panel per B and, where the mark budget allows, per desired, schedule and
    other varying axes."""
    grid, labels, shared, binned = law.grid, law.labels, law.shared, law.binned
    g_order, u_order = list(law.g_order), list(law.u_order)
    n_g, n_u = len(g_order), len(u_order)
    # One panel fills the width; several share it, two or more to a row.
    columns = 1 if len(labels) == 1 else max(2, min(len(labels), WIDTH // (n_u * 16 + 60)))
    step_u = clamp((WIDTH // columns - 60) // n_u, 4, 24)
    labelled = grid.height <= MAX_LABELLED and step_u >= 14
    step_g = step_u if labelled else clamp(120 // n_g, 6, 16)
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
        panel_label=label_expr(labels).replace("datum.value", "datum.panel"),
    ).encode(
        x=alt.X("U_label:O", sort=u_order, title="U: loop period (s)",
                axis=alt.Axis(labelOverlap="greedy")),
        y=alt.Y("G_label:O", sort=g_order, title="G: ledger delay (s)"),
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
                        header=alt.Header(labelExpr=label_expr(labels), labelFontSize=11,
                                          labelAnchor="start")),
        columns=columns,
    ).resolve_scale(x="shared", y="shared")
    title = "The overshoot law, ledger controller: measured overshoot, and where the law fails"
    one = "Each square: one cell" if not shared and not binned else "Each square: the cells"
    sub = (f"{one} at that G and U in its panel{_shared_note(shared)}; colour: measured "
           "overshoot (the largest, where a square holds several cells; pale grey: 0)"
           + (", number: the same" if labelled else "")
           + f". Red outline: the law fails on a cell of that square.{binning_note(binned)}")
    return Figure("law", title, finish(chart, title, sub),
                  {"facets": ["B", *law.facets], "shared": list(shared), "binned": list(binned),
                   "marks": grid.height, "cells": int(grid["cells"].sum())})


def _shared_note(shared: Sequence[str]) -> str:
    """A subtitle's words for the axes whose values share the heatmap's panels, if any."""
    if not shared:
        return ""
    return (" (every value of " + ", ".join(shared)
            + " shares the panel; the tooltip counts failures by value)")


def summarize(sweep: Sweep) -> LawSummary:
    """The law's verdict over every cell (``summary.json``'s ``law``) and its heatmaps' data."""
    return law_verdict(sweep.table, sweep.axes, sweep.schedules, sizes=sweep.sizes)


def charts(law: LawSummary, context: Context) -> list[Figure]:
    """The heatmaps, when the sweep has ledger cells the law covers."""
    return [law_figure(law.chart)] if law.chart is not None else []


def glance(law: LawSummary) -> Markup:
    """The law's verdict in one sentence (and, where delays vary, where those cells are read)."""
    return macro("law.html", "glance")(law)


SECTION = Section("law", summarize, render, charts, glance, title="The overshoot law",
                  checks="the overshoot law")
