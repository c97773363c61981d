"""The rolling update: with our informer lag G, readiness B and minReadySeconds, which
maxSurge / maxUnavailable keeps a rollout inside its budgets and finishes in time?

For the Deployment world's cells (controller ``deployment``) with a template change within
the run, per swept (max_surge, max_unavailable, min_ready, G, B): the rollouts, how long
they take (``rollout_done_at`` - the last template change: median, p95 and max by nearest
rank, :func:`reconsim.model.metrics.nearest_rank`; the rollouts not done by the end
counted apart), how many leave the surge budget and by how much, counting terminating pods
(``api_surge_violation_seconds`` > 0; ``max_api_pods`` - ``desired`` - ``surge_budget``)
and not (``surge_violation_seconds`` > 0; ``peak_surge`` - ``surge_budget``), and how many
leave the availability budget after the rollout starts
(``unavailable_seconds_after_rollout`` > 0; ``desired`` - ``unavailable_budget`` -
``min_available_after_rollout``). Then the law of a rollout's duration
(:func:`reconsim.model.laws.rollout_columns`) on every cell it applies to: every failure
listed, the unchecked cells counted by reason. A table without such cells (every sweep of
the copies' world) leaves the section out.

One read of the table for every figure: a streaming ``group_by`` gives each group's
figures and the law's counts, and the totals are their sums; where the law fails, one more
for its failures (a filter; gathering them in the same ``group_by`` took several times as
long as both reads). The law reads the table's list parameters (``rollout``, ``scale`` and
``deaths``) as stored, from the loader's copies of them where it kept them
(:data:`~reconsim.report.load.ROW_ROLLOUT` ...).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

import altair as alt
import polars as pl
from markupsafe import Markup

from reconsim.model.laws import (
    ROLLOUT_EXCLUSIONS,
    ROLLOUT_LAW,
    ROLLOUT_PREFIX,
    WAVE_TIME,
    rollout_columns,
)
from reconsim.model.metrics import percentile_expr
from reconsim.report.blocks import macro
from reconsim.report.charts import WIDTH, Figure, finish, inline
from reconsim.report.claims import Claim
from reconsim.report.load import CELL_ID, ROW_DEATHS, ROW_ROLLOUT, ROW_SCALE, Sweep
from reconsim.report.query import Table, collect, lazy
from reconsim.report.section import NOT_IN_JSON, Context, Section

#: The columns a table needs for this section: the Deployment world's parameters and
#: metrics.
NEEDED: Final = ("controller", "desired", "G", "B", "grace", "duration", "max_surge",
                 "max_unavailable", "min_ready", "rollout", "rollout_done_at",
                 "max_api_pods", "peak_surge", "surge_budget", "unavailable_budget",
                 "surge_violation_seconds", "api_surge_violation_seconds",
                 "unavailable_seconds_after_rollout", "min_available_after_rollout")
#: The group of a row of the table: the budgets and delays the question names.
KEYS: Final = ("max_surge", "max_unavailable", "min_ready", "G", "B")
#: The percentiles of a rollout's duration (nearest rank).
LEVELS: Final = {"median": Fraction(1, 2), "p95": Fraction(19, 20)}
#: Most failures the page lists cell by cell (all of them are counted).
MAX_LISTED: Final = 10_000
#: The figures of a failure besides its parameters.
FAILURE_FIGURES: Final = ("at", "surge", "unavailable", "waves", "wave", "law", "measured")
#: Every reason in a few words, for the table (the verdict gives them in full).
SHORT: Final = {"unsettled": "start not settled", "rollover": "a second rollout",
                "scaled": "desired changed", "death": "a death", "staggered":
                "staggered first wave", "slow_cache": "G ≥ 300 s", "long_wave": "wave > 600 s"}


def _r(name: str) -> pl.Expr:
    """Hidden column ``__rollout_<name>``."""
    return pl.col(f"{ROLLOUT_PREFIX}{name}")


@dataclass(frozen=True, slots=True)
class Spread:
    """A figure over some rollouts: median, p95 (nearest rank) and max; null where none."""

    median: int | None
    p95: int | None
    max: int | None


@dataclass(frozen=True, slots=True)
class BudgetGroup:
    """The rollouts of one (max_surge, max_unavailable, min_ready, G, B): how many, how
    long (``duration`` over those done; ``not_done`` by the end), and how many leave each
    budget (``*_cells``) and by how much at most (``*_over``; 0 when none does)."""

    max_surge: str
    max_unavailable: str
    min_ready: int
    G: int
    B: int
    rollouts: int
    not_done: int
    duration: Spread
    surge_api_cells: int
    surge_api_over: int
    surge_cells: int
    surge_over: int
    unavailable_cells: int
    unavailable_over: int


@dataclass(frozen=True, slots=True)
class RolloutSummary:
    """``summary.json``'s ``rollout``: the cells with a rollout, those done by the end, the
    groups, the law of a rollout's duration as a :class:`~.claims.Claim` (the rollouts it
    covers, those it holds on, and as its examples every failure, the first
    :data:`MAX_LISTED` by cell id: the cell's id, its parameters and
    :data:`FAILURE_FIGURES`) and the rollouts it leaves unchecked, by reason. Left out
    where no cell rolls out."""

    rollouts: int
    done: int
    groups: tuple[BudgetGroup, ...]
    law: Claim
    unchecked: dict[str, int]
    #: The sweep's folder as a command names it, for the command that runs a cell again.
    folder: str | None = field(default=None, metadata=NOT_IN_JSON)


#: The law of a rollout's duration as a claim, and the rollouts it speaks of.
CLAIM: Final = ("The law of a rollout's duration", "rollouts it covers")


def _none() -> RolloutSummary:
    return RolloutSummary(rollouts=0, done=0, groups=(), law=Claim.of(*CLAIM, 0, 0),
                          unchecked={})


def as_stored(t: pl.LazyFrame) -> pl.LazyFrame:
    """``t`` with the list parameters the law reads (``rollout``, ``scale``, ``deaths``) as
    stored: from the loader's copies of them (:data:`~reconsim.report.load.ROW_ROLLOUT`
    ...) where it kept them beside the flattened ones it shows."""
    schema = t.collect_schema()
    kept = [pl.col(copy).alias(name) for name, copy in
            (("rollout", ROW_ROLLOUT), ("scale", ROW_SCALE), ("deaths", ROW_DEATHS))
            if copy in schema]
    return t.with_columns(kept) if kept else t


def rollouts(table: Table) -> pl.LazyFrame | None:
    """The rows of the Deployment world with a template change within the run, with the
    law's hidden columns (:func:`~reconsim.model.laws.rollout_columns`) and each
    rollout's measured duration; None for a table without the world's columns."""
    t = lazy(table)
    schema = t.collect_schema()
    if any(c not in schema for c in NEEDED):
        return None
    t = as_stored(t)
    return t.with_columns(rollout_columns(t.collect_schema().names())).filter(
        _r("at").is_not_null())


def _spread(values: pl.Expr) -> list[pl.Expr]:
    """A group's median, p95 (nearest rank) and max of ``values`` (nulls left out)."""
    return [*(percentile_expr(values, p).alias(f"duration_{name}")
              for name, p in LEVELS.items()), values.max().alias("duration_max")]


def _aggregate(rows: pl.LazyFrame) -> pl.DataFrame:
    """Per (max_surge, max_unavailable, min_ready, G, B): the rollouts' figures and the
    law's counts (checked, failed, unchecked by reason): the one read of the table."""
    desired = pl.col("desired").cast(pl.Int64)
    api_over = pl.col("max_api_pods") - desired - pl.col("surge_budget")
    over = pl.col("peak_surge") - pl.col("surge_budget")
    short = desired - pl.col("unavailable_budget") - pl.col("min_available_after_rollout")
    holds, excluded = _r("holds"), _r("excluded")

    def most(e: pl.Expr) -> pl.Expr:
        return pl.max_horizontal(e.cast(pl.Int64).max(), pl.lit(0))

    return collect(rows.with_columns(
        last_change=_int_list_last("rollout")).group_by(*KEYS).agg(
        pl.len().alias("rollouts"),
        pl.col("rollout_done_at").is_null().sum().alias("not_done"),
        *_spread(pl.col("rollout_done_at").cast(pl.Int64) - pl.col("last_change")),
        (pl.col("api_surge_violation_seconds") > 0).sum().alias("surge_api_cells"),
        most(api_over).alias("surge_api_over"),
        (pl.col("surge_violation_seconds") > 0).sum().alias("surge_cells"),
        most(over).alias("surge_over"),
        (pl.col("unavailable_seconds_after_rollout") > 0).sum().alias("unavailable_cells"),
        most(short).alias("unavailable_over"),
        holds.is_not_null().sum().alias("checked"),
        (~holds).fill_null(value=False).sum().alias("failed"),
        *((excluded == k).sum().alias(f"excluded_{k}") for k in ROLLOUT_EXCLUSIONS)))


def _groups(g: pl.DataFrame) -> tuple[BudgetGroup, ...]:
    """The groups of :func:`_aggregate`, counts before percentages."""
    g = g.with_columns(_budget_order("max_surge"), _budget_order("max_unavailable")).sort(
        "__max_surge", "max_surge", "__max_unavailable", "max_unavailable", "min_ready",
        "G", "B")
    return tuple(BudgetGroup(
        max_surge=r["max_surge"], max_unavailable=r["max_unavailable"],
        min_ready=r["min_ready"], G=r["G"], B=r["B"], rollouts=r["rollouts"],
        not_done=r["not_done"],
        duration=Spread(r["duration_median"], r["duration_p95"], r["duration_max"]),
        **{k: int(r[k]) for k in ("surge_api_cells", "surge_api_over", "surge_cells",
                                   "surge_over", "unavailable_cells", "unavailable_over")})
        for r in g.iter_rows(named=True))


def _int_list_last(name: str) -> pl.Expr:
    """A list column's last entry (the last template change, as ``rollout_done_at``
    counts from it)."""
    return pl.col(name).list.last().cast(pl.Int64)


def _budget_order(name: str) -> pl.Expr:
    """Counts before percentages, each by its number."""
    text = pl.col(name)
    return (text.str.ends_with("%").cast(pl.Int64) * 1_000_000
            + text.str.strip_suffix("%").cast(pl.Int64)).alias(f"__{name}")


def _verdict(g: pl.DataFrame) -> tuple[int, int, dict[str, int]]:
    """The law's counts over the groups of :func:`_aggregate`: checked, failed, unchecked
    by reason."""
    unchecked = {k: n for k in ROLLOUT_EXCLUSIONS if (n := int(g[f"excluded_{k}"].sum()))}
    return int(g["checked"].sum()), int(g["failed"].sum()), unchecked


def _failures(rows: pl.LazyFrame) -> tuple[dict[str, Any], ...]:
    """Every cell where the law fails (the first :data:`MAX_LISTED` by cell id)."""
    names = rows.collect_schema().names()
    cell = pl.col(CELL_ID) if CELL_ID in names else pl.lit(None, dtype=pl.Int64)
    params = ("desired", "max_surge", "max_unavailable", "min_ready", "G", "B", "grace")
    f = collect(rows.filter(~_r("holds").fill_null(value=True)).select(
        cell.alias("cell"), *params, *(_r(x).alias(x) for x in FAILURE_FIGURES)).sort(
        "cell", *params, nulls_last=True).head(MAX_LISTED))
    return tuple(f.iter_rows(named=True))


def rollout_verdict(table: Table, folder: str | None = None) -> RolloutSummary:
    """The rollouts per budget and delays, and the law of their duration on every cell."""
    rows = rollouts(table)
    if rows is None:
        return _none()
    g = _aggregate(rows)
    if g.height == 0:
        return _none()
    n, not_done = int(g["rollouts"].sum()), int(g["not_done"].sum())
    checked, failed, unchecked = _verdict(g)
    law = Claim.of(*CLAIM, checked, failed, examples=_failures(rows) if failed else ())
    return RolloutSummary(rollouts=n, done=n - not_done, groups=_groups(g), law=law,
                          unchecked=unchecked, folder=folder)


def summarize(sweep: Sweep) -> RolloutSummary:
    """The rolling update (``summary.json``'s ``rollout``)."""
    return rollout_verdict(sweep.table, sweep.folder)


def shown(s: RolloutSummary) -> bool:
    """Whether some cell rolls out."""
    return s.rollouts > 0


# --- Words ---------------------------------------------------------------------------


def budget_label(g: BudgetGroup) -> str:
    """``maxSurge 25% / maxUnavailable 0``."""
    return f"maxSurge {g.max_surge} / maxUnavailable {g.max_unavailable}"


@dataclass(frozen=True, slots=True)
class BudgetPair:
    """One maxSurge / maxUnavailable over every min_ready, G and B: its rollouts, those not
    done, the groups with the fastest and slowest median duration (None where none is
    done), and how many rollouts leave each budget and by how much at most."""

    max_surge: str
    max_unavailable: str
    rollouts: int
    not_done: int
    fastest: BudgetGroup | None
    slowest: BudgetGroup | None
    surge_api_cells: int
    surge_api_over: int
    surge_cells: int
    surge_over: int
    unavailable_cells: int
    unavailable_over: int


def budget_pairs(s: RolloutSummary) -> list[BudgetPair]:
    """The groups folded per budget pair, in the groups' order (the answer's sentences)."""
    out = []
    for pair in dict.fromkeys((g.max_surge, g.max_unavailable) for g in s.groups):
        mine = [g for g in s.groups if (g.max_surge, g.max_unavailable) == pair]
        done = [g for g in mine if g.duration.median is not None]
        out.append(BudgetPair(
            *pair, rollouts=sum(g.rollouts for g in mine),
            not_done=sum(g.not_done for g in mine),
            fastest=min(done, key=lambda g: g.duration.median or 0, default=None),
            slowest=max(done, key=lambda g: g.duration.median or 0, default=None),
            surge_api_cells=sum(g.surge_api_cells for g in mine),
            surge_api_over=max(g.surge_api_over for g in mine),
            surge_cells=sum(g.surge_cells for g in mine),
            surge_over=max(g.surge_over for g in mine),
            unavailable_cells=sum(g.unavailable_cells for g in mine),
            unavailable_over=max(g.unavailable_over for g in mine)))
    return out


def render(s: RolloutSummary, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """The question, the answer per budget pair, the table and chart, the law's verdict and
    every failure (``templates/rollout.html``)."""
    folder = shlex.quote(s.folder) if s.folder is not None else None
    return macro("rollout.html", "body")(
        s, budget_pairs(s), figures.get("rollout"), WAVE_TIME, ROLLOUT_LAW, ROLLOUT_EXCLUSIONS,
        SHORT, folder)


def chart_rows(s: RolloutSummary) -> pl.DataFrame:
    """The chart's data: one row per group with a median duration."""
    return pl.DataFrame(
        [{"budgets": budget_label(g), "min_ready": g.min_ready, "G": g.G, "B": g.B,
          "median": g.duration.median, "p95": g.duration.p95, "rollouts": g.rollouts,
          "not_done": g.not_done, "surge_api_cells": g.surge_api_cells,
          "unavailable_cells": g.unavailable_cells}
         for g in s.groups if g.duration.median is not None],
        schema={"budgets": pl.String, "min_ready": pl.Int64, "G": pl.Int64, "B": pl.Int64,
                "median": pl.Int64, "p95": pl.Int64, "rollouts": pl.Int64,
                "not_done": pl.Int64, "surge_api_cells": pl.Int64,
                "unavailable_cells": pl.Int64})


def charts(s: RolloutSummary, context: Context) -> list[Figure]:
    """The median duration against G, one line per budget pair, one panel per min_ready,
    B as the point's shape."""
    data = chart_rows(s)
    if data.height == 0:
        return []
    order = list(dict.fromkeys(budget_label(g) for g in s.groups))
    panels = sorted(set(data["min_ready"].to_list()))
    tooltip = [alt.Tooltip("budgets:N", title="budgets"), alt.Tooltip("min_ready:Q"),
               alt.Tooltip("G:Q"), alt.Tooltip("B:Q"),
               alt.Tooltip("median:Q", title="median (s)"),
               alt.Tooltip("p95:Q", title="p95 (s, nearest rank)"),
               alt.Tooltip("rollouts:Q"), alt.Tooltip("not_done:Q", title="not done"),
               alt.Tooltip("surge_api_cells:Q", title="over surge (terminating counted)"),
               alt.Tooltip("unavailable_cells:Q", title="below availability")]
    line = alt.Chart().mark_line(point=alt.OverlayMarkDef(size=30)).encode(
        x=alt.X("G:Q", title="G: pod cache delay (s)"),
        y=alt.Y("median:Q", title="median rollout duration (s)"),
        color=alt.Color("budgets:N", sort=order, title="budgets",
                        legend=alt.Legend(labelLimit=260)),
        detail="B:N", shape=alt.Shape("B:N", title="B (s)"), tooltip=tooltip)
    chart = alt.layer(line, data=inline(data)).properties(
        width=max(160, (WIDTH - 320) // len(panels)), height=220).facet(
        column=alt.Column("min_ready:O", title="min_ready (s)"))
    title = "How long a rollout takes, against the pod cache delay G"
    sub = ("Each line: one maxSurge / maxUnavailable at one B (the point's shape), the median "
           "duration over the rollouts done at each G; one panel per min_ready. The tooltip "
           "adds the p95, the rollouts not done and those leaving a budget")
    return [Figure("rollout", title, finish(chart, title, sub),
                   {"marks": data.height, "panels": len(panels)})]


def glance(s: RolloutSummary) -> Markup:
    """The law's verdict in one sentence."""
    return macro("rollout.html", "glance")(s)


SECTION = Section("rollout", summarize, render, charts, glance, title="The rolling update",
                  checks="the law of a rollout's duration", shown=shown)
