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

Two streaming queries: the groups, one ``group_by``; the law's counts and its failures,
one ``group_by`` and one filter. The table's list parameters are read as stored where the
loader kept them (``scale`` and ``deaths``) and ``rollout`` is read back from its flat
text where it was flattened.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final

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
from reconsim.model.metrics import nearest_rank
from reconsim.report.charts import WIDTH, Figure, finish, inline
from reconsim.report.load import CELL_ID, ROW_DEATHS, ROW_SCALE, Sweep
from reconsim.report.query import Table, collect, lazy
from reconsim.report.section import NOT_IN_JSON, Context, Section
from reconsim.web.html import figure_html, folded, num, share, table, verdict
from reconsim.words import plural

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
class LawFailure:
    """A cell where the law of a rollout's duration fails: its id (null where the report
    cannot say), parameters and the law's figures against the measured duration."""

    cell: int | None
    desired: int
    max_surge: str
    max_unavailable: str
    min_ready: int
    G: int
    B: int
    grace: int
    at: int
    surge: int
    unavailable: int
    waves: int
    wave: int
    law: int
    measured: int | None


@dataclass(frozen=True, slots=True)
class RolloutSummary:
    """``summary.json``'s ``rollout``: the cells with a rollout, those done by the end, the
    groups, and the law's verdict: checked, held, failed, unchecked by reason, every
    failure (the first :data:`MAX_LISTED` by cell id). Left out where no cell rolls out."""

    rollouts: int
    done: int
    groups: tuple[BudgetGroup, ...]
    checked: int
    held: int
    failed: int
    unchecked: dict[str, int]
    failures: tuple[LawFailure, ...]
    #: The sweep's folder as a command names it, for the command that runs a cell again.
    folder: str | None = field(default=None, metadata=NOT_IN_JSON)


def _none() -> RolloutSummary:
    return RolloutSummary(rollouts=0, done=0, groups=(), checked=0, held=0, failed=0,
                          unchecked={}, failures=())


def as_stored(t: pl.LazyFrame) -> pl.LazyFrame:
    """``t`` with the list parameters the law reads as lists: ``rollout`` read back from its
    flat text (``10,45``; ``none``) where the loader flattened it, ``scale`` and ``deaths``
    from the loader's copies as stored where it kept them."""
    schema = t.collect_schema()
    out = []
    if schema["rollout"] == pl.String:
        text = pl.col("rollout")
        out.append(pl.when(text == "none").then(pl.lit([], dtype=pl.List(pl.Int64)))
                   .otherwise(text.str.split(",").cast(pl.List(pl.Int64))).alias("rollout"))
    for name, kept in (("scale", ROW_SCALE), ("deaths", ROW_DEATHS)):
        if kept in schema:
            out.append(pl.col(kept).alias(name))
    return t.with_columns(out) if out else t


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
    v = values.drop_nulls().sort()
    n = v.len()
    return [*(v.get(pl.max_horizontal(nearest_rank(p, n) - 1, 0), null_on_oob=True)
              .alias(f"duration_{name}") for name, p in LEVELS.items()),
            v.max().alias("duration_max")]


def _groups(rows: pl.LazyFrame) -> tuple[BudgetGroup, ...]:
    """Per (max_surge, max_unavailable, min_ready, G, B): the rollouts' figures."""
    desired = pl.col("desired").cast(pl.Int64)
    api_over = pl.col("max_api_pods") - desired - pl.col("surge_budget")
    over = pl.col("peak_surge") - pl.col("surge_budget")
    short = desired - pl.col("unavailable_budget") - pl.col("min_available_after_rollout")

    def most(e: pl.Expr) -> pl.Expr:
        return pl.max_horizontal(e.cast(pl.Int64).max(), pl.lit(0))

    g = collect(rows.with_columns(
        last_change=_int_list_last("rollout")).group_by(*KEYS).agg(
        pl.len().alias("rollouts"),
        pl.col("rollout_done_at").is_null().sum().alias("not_done"),
        *_spread(pl.col("rollout_done_at").cast(pl.Int64) - pl.col("last_change")),
        (pl.col("api_surge_violation_seconds") > 0).sum().alias("surge_api_cells"),
        most(api_over).alias("surge_api_over"),
        (pl.col("surge_violation_seconds") > 0).sum().alias("surge_cells"),
        most(over).alias("surge_over"),
        (pl.col("unavailable_seconds_after_rollout") > 0).sum().alias("unavailable_cells"),
        most(short).alias("unavailable_over")))
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


def _verdict(rows: pl.LazyFrame) -> tuple[int, int, int, dict[str, int], bool]:
    """The law's counts: checked, held, failed, unchecked by reason, whether any failed."""
    holds, excluded = _r("holds"), _r("excluded")
    c = collect(rows.select(
        holds.is_not_null().sum().alias("checked"),
        holds.fill_null(value=False).sum().alias("held"),
        (~holds).fill_null(value=False).sum().alias("failed"),
        *((excluded == k).sum().alias(k) for k in ROLLOUT_EXCLUSIONS))).row(0, named=True)
    unchecked = {k: int(c[k]) for k in ROLLOUT_EXCLUSIONS if c[k]}
    return int(c["checked"]), int(c["held"]), int(c["failed"]), unchecked, bool(c["failed"])


def _failures(rows: pl.LazyFrame) -> tuple[LawFailure, ...]:
    """Every cell where the law fails (the first :data:`MAX_LISTED` by cell id)."""
    names = rows.collect_schema().names()
    cell = pl.col(CELL_ID) if CELL_ID in names else pl.lit(None, dtype=pl.Int64)
    params = ("desired", "max_surge", "max_unavailable", "min_ready", "G", "B", "grace")
    f = collect(rows.filter(~_r("holds").fill_null(value=True)).select(
        cell.alias("cell"), *params, *(_r(x).alias(x) for x in FAILURE_FIGURES)).sort(
        "cell", *params, nulls_last=True).head(MAX_LISTED))
    return tuple(LawFailure(**r) for r in f.iter_rows(named=True))


def rollout_verdict(table: Table, folder: str | None = None) -> RolloutSummary:
    """The rollouts per budget and delays, and the law of their duration on every cell."""
    rows = rollouts(table)
    if rows is None:
        return _none()
    head = collect(rows.select(pl.len().alias("n"),
                               pl.col("rollout_done_at").is_not_null().sum().alias("done")))
    n = int(head["n"].item())
    if n == 0:
        return _none()
    checked, held, failed, unchecked, any_failed = _verdict(rows)
    return RolloutSummary(rollouts=n, done=int(head["done"].item()), groups=_groups(rows),
                          checked=checked, held=held, failed=failed, unchecked=unchecked,
                          failures=_failures(rows) if any_failed else (), folder=folder)


def summarize(sweep: Sweep) -> RolloutSummary:
    """The rolling update (``summary.json``'s ``rollout``)."""
    return rollout_verdict(sweep.table, sweep.folder)


def shown(s: RolloutSummary) -> bool:
    """Whether some cell rolls out."""
    return s.rollouts > 0


# --- Words ---------------------------------------------------------------------------


def _spread_text(s: Spread) -> str:
    return f"{num(s.median)} s (p95 {num(s.p95)} s, max {num(s.max)} s)"


def budget_label(g: BudgetGroup) -> str:
    """``maxSurge 25% / maxUnavailable 0``."""
    return f"maxSurge {g.max_surge} / maxUnavailable {g.max_unavailable}"


def sentences(s: RolloutSummary) -> list[str]:
    """The answer in words: per budget pair (over every min_ready, G and B), the fastest
    and slowest median duration, and how many rollouts leave each budget."""
    out = []
    pairs = dict.fromkeys((g.max_surge, g.max_unavailable) for g in s.groups)
    for pair in pairs:
        mine = [g for g in s.groups if (g.max_surge, g.max_unavailable) == pair]
        n = sum(g.rollouts for g in mine)
        late = sum(g.not_done for g in mine)
        medians = [(g.duration.median, g) for g in mine if g.duration.median is not None]
        text = f"{budget_label(mine[0])}: {n:,} {plural(n, 'rollout')}"
        if medians:
            fast, slow = min(medians, key=lambda x: x[0]), max(medians, key=lambda x: x[0])
            text += (f", a median {num(fast[0])} s at min_ready {fast[1].min_ready}, G "
                     f"{fast[1].G}, B {fast[1].B} to {num(slow[0])} s at min_ready "
                     f"{slow[1].min_ready}, G {slow[1].G}, B {slow[1].B}")
        if late:
            text += f"; {late:,} not done by the end of the run"
        api = sum(g.surge_api_cells for g in mine)
        over = sum(g.surge_cells for g in mine)
        down = sum(g.unavailable_cells for g in mine)
        text += (f"; above the surge budget counting terminating pods in {api:,} "
                 f"(by up to {max(g.surge_api_over for g in mine)}), not counting them in "
                 f"{over:,} (by up to {max(g.surge_over for g in mine)}); below the "
                 f"availability budget after the rollout starts in {down:,} (by up to "
                 f"{max(g.unavailable_over for g in mine)})")
        out.append(text + ".")
    return out


def unchecked_text(unchecked: Mapping[str, int]) -> str:
    """The unchecked rollouts by reason, in words."""
    return ", ".join(f"{n:,} with {ROLLOUT_EXCLUSIONS[k]}" for k, n in unchecked.items())


def law_paragraphs(s: RolloutSummary) -> tuple[str, list[Markup]]:
    """The law's verdict in words: its kind and its paragraphs."""
    rest = s.rollouts - s.checked
    skipped = (f" {rest:,} further {plural(rest, 'rollout')} {'is' if rest == 1 else 'are'} "
               f"not checked, for the law says nothing of them: "
               f"{unchecked_text(s.unchecked)}." if rest else "")
    if s.checked == 0:
        return "none", [Markup("None of the {:,} rollouts is one the law covers, so it is "
                               "not checked.{}").format(s.rollouts, skipped)]
    if s.failed == 0:
        return "holds", [Markup("<strong>The law of a rollout's duration holds on all {:,} "
                                "rollouts it checks</strong>: on every one, rollout_done_at "
                                "is r + the law's duration (or, past the end, null).{}")
                         .format(s.checked, skipped)]
    return "fails", [Markup("<strong>The law of a rollout's duration fails on {:,} of {:,} "
                            "rollouts it checks ({})</strong>; it holds on the other {:,}.{}")
                     .format(s.failed, s.checked, share(s.failed, s.checked), s.held, skipped)]


def groups_table(groups: Sequence[BudgetGroup]) -> Markup:
    """Per budget pair, min_ready, G and B: the rollouts, their duration, and the budgets
    left."""
    def dur(d: Spread) -> str:
        return "\u2014" if d.max is None else f"{num(d.median)} / {num(d.p95)} / {num(d.max)}"

    return table(["maxSurge", "maxUnavailable", "min_ready", "G", "B", "rollouts",
                  "not done", "duration (s): median / p95 / max",
                  "over surge, terminating counted: cells (max)",
                  "over surge, not counted: cells (max)",
                  "below availability: cells (max)"],
                 ([g.max_surge, g.max_unavailable, g.min_ready, g.G, g.B, g.rollouts,
                   g.not_done, dur(g.duration), f"{g.surge_api_cells:,} ({g.surge_api_over})",
                   f"{g.surge_cells:,} ({g.surge_over})",
                   f"{g.unavailable_cells:,} ({g.unavailable_over})"] for g in groups))


def failures_table(failures: Sequence[LawFailure]) -> Markup:
    """The law's failures, cell by cell."""
    return table(["cell", "desired", "maxSurge", "maxUnavailable", "min_ready", "G", "B",
                  "grace", "r", "S", "U", "waves", "wave time", "law (s)", "measured (s)"],
                 ([f.cell, f.desired, f.max_surge, f.max_unavailable, f.min_ready, f.G, f.B,
                   f.grace, f.at, f.surge, f.unavailable, f.waves, f.wave, f.law,
                   f.measured] for f in failures), missing="\u2014")


def render(s: RolloutSummary, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """The question, the answer per budget pair, the table and chart, the law's verdict and
    every failure."""
    kind, paragraphs = law_paragraphs(s)
    parts = [
        Markup("<p>With our informer lag G, readiness B and minReadySeconds (min_ready), "
               "which maxSurge / maxUnavailable keeps a rolling update inside its budgets "
               "and finishes in time? For each of the {n:,} cells of the Deployment world "
               "that change the template within the run ({done:,} done by the end): how long "
               "the rollout takes (rollout_done_at &minus; the last template change: median, "
               "p95 and max by nearest rank, over those done), how many leave the surge budget "
               "(desired + maxSurge) counting terminating pods (api_surge_violation_seconds "
               "&gt; 0, by max_api_pods &minus; desired &minus; surge_budget) and not counting "
               "them, as the controller does (surge_violation_seconds &gt; 0, by peak_surge "
               "&minus; surge_budget), and how many fall below the availability budget "
               "(desired &minus; maxUnavailable) after the rollout starts "
               "(unavailable_seconds_after_rollout &gt; 0, by desired &minus; "
               "unavailable_budget &minus; min_available_after_rollout).</p>").format(
                   n=s.rollouts, done=s.done),
        verdict("none", sentences(s)),
    ]
    if "rollout" in figures:
        parts.append(figure_html(figures["rollout"]))
    parts += [folded(groups_table(s.groups), len(s.groups),
                     "rows: every maxSurge, maxUnavailable, min_ready, G and B"),
              Markup("<h3>A rollout's duration in closed form</h3><p>From a settled start, one "
                     "template change at second r, no death and no change of desired, the "
                     "rollout runs in waves of S + U pods (the budgets as the controller "
                     "resolves them), each created when the one before is seen available, a "
                     "wave time A apart: A = {wave}. The law: rollout_done_at &minus; r = "
                     "<code>{law}</code> (docs: the Deployment world's rules, last section). "
                     "It is checked on every cell it applies to; a cell it says nothing of is "
                     "counted by reason, never left out silently.</p>").format(
                         wave=WAVE_TIME, law=ROLLOUT_LAW),
              verdict(kind, paragraphs)]
    if s.unchecked:
        parts.append(table(["not checked: why", "cells"],
                           ([SHORT.get(k, k), n] for k, n in s.unchecked.items())))
    if s.failures:
        listed = len(s.failures)
        parts += [Markup("<h4>Every failure</h4><p>Each cell where the law fails, by its id{}{}."
                         "</p>").format(
            Markup("; it runs again with <code>reconsim run --from {} --cell ID</code>")
            .format(shlex.quote(s.folder)) if s.folder is not None else "",
            f"; the first {listed:,} of {s.failed:,} by id" if listed < s.failed else ""),
            folded(failures_table(s.failures), listed, "failures of the law", limit=40)]
    return Markup("").join(parts)


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


def glance(s: RolloutSummary) -> Markup | None:
    """The law's verdict in one sentence."""
    link = Markup('<a href="#rollout">The rolling update</a>')
    if s.checked == 0:
        return link + Markup(": {:,} rollouts, none the law of their duration covers.").format(
            s.rollouts)
    if s.failed == 0:
        return link + Markup(": the law of a rollout's duration holds on all {:,} it checks "
                             "({:,} not checked).").format(s.checked, s.rollouts - s.checked)
    return link + Markup(": <strong>the law of a rollout's duration fails on {:,} of {:,} "
                         "({})</strong>.").format(s.failed, s.checked,
                                                  share(s.failed, s.checked))


SECTION = Section("rollout", summarize, render, charts, glance, title="The rolling update",
                  checks="the law of a rollout's duration", shown=shown)
