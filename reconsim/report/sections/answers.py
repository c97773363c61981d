"""Answers: does the loop over-provision, and which period and which controller to use.

For every controller variant (:func:`reconsim.report.query.variant_params`: a controller
with its values of the variant parameters that vary, ``trigger`` among them) and every
swept loop period U, the overshoot and the unneeded copies over every other axis of the
sweep (seeds, G, B, spreads, schedules, ...): median, p95 and max; then each variant's
smallest U with zero overshoot in every cell, and the smallest with zero overshoot at the
99th percentile, with what that period costs (median missing copy-seconds and reads per
round); and the best choice by the report's trade-off rule
(:func:`reconsim.model.metrics.frontier`, the controllers section's), each variant taken at
its own smallest zero-overshoot period. A sweep that starts from running copies (``initial``
set in some cell) also gets each variant's response to its disturbance at each U: the
overshoot, the missing copy-seconds and the seconds to settle from the first death event
on (``overshoot_after``, ``missing_after``, ``settle_after``), median, p95 and max over
the cells that have such an event, and how many of them never settle before the run ends.

A spec that names the user's current setting (``baseline``, :mod:`reconsim.sweep.spec`,
read from ``sweep.json``'s spec: no controller is imported) opens the answer with that
setting's figures over the cells it selects (overshoot, unneeded copies, missing
copy-seconds and reads per round: median, p95 by nearest rank and max) and, for every other
controller variant and U, the change against them, over the cells that share the setting's
other axes (its G, its B, ...: what the user cannot choose).

Exact and streaming: the quantiles come from counts of cells per (variant, U, value),
three ``group_by`` on the lazy table (overshoot and unneeded copies together, with the
trade-off sums; missing copy-seconds; reads per round: a few rows per group where values
repeat, never more than the cells), read in memory by nearest rank
(:func:`reconsim.model.metrics.percentile`): the p-th percentile is the value at rank
``⌈p·n⌉`` (:func:`~reconsim.model.metrics.nearest_rank`) of the group's ``n`` cells sorted,
the first value whose cumulative count reaches that rank; the median is the usual one (the
mean of the two middle values when ``n`` is even). No cell is filtered out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import altair as alt
import polars as pl
from markupsafe import Markup

from reconsim.model.kinds import Records
from reconsim.model.metrics import (
    TRADEOFF,
    Tie,
    frontier,
    nearest_rank,
    percentile_expr,
    tied,
    ties_text,
)
from reconsim.model.params import BY_NAME, NAME_COLUMNS, VARIANT_PARAMS, name_column
from reconsim.report.blocks import macro
from reconsim.report.charts import WIDTH, Figure, finish, inline, names_expr
from reconsim.report.load import Sweep
from reconsim.report.query import (
    Table,
    collect,
    lazy,
    user_params,
    variant_label,
    variant_order,
    variant_params,
)
from reconsim.report.section import NOT_IN_JSON, UNLESS_DEFAULT, Context, Section
from reconsim.sweep.table import flat
from reconsim.web.html import num
from reconsim.words import listed

#: The figures whose spread over the other axes each row shows: column -> its name.
SPREAD: Final = {"overshoot": "overshoot (copies)", "unneeded": "unneeded copies"}
#: The cost of a period: column -> its name (medians over the cells at that U).
COST: Final = {"missing_copy_seconds": "missing copy-seconds",
               "reads_per_round": "reads per round"}
#: The response to the disturbance, from the first death event on: column -> its name.
AFTER: Final = {"overshoot_after": "overshoot after it (copies)",
                "missing_after": "missing copy-seconds after it",
                "settle_after": "seconds to settle after it"}
#: The percentiles read from a group's counts: name -> level.
PERCENTILES: Final = {"p95": 0.95, "p99": 0.99}
#: The figures a baseline is given by, and each one's change against it: column -> its name.
BASELINE: Final = {"overshoot": "overshoot", "unneeded": "unneeded copies",
                   "missing_copy_seconds": "missing copy-seconds",
                   "reads_per_round": "reads per round"}


@dataclass(frozen=True, slots=True)
class Spread:
    """A figure over the cells of one variant at one U: median, p95 (nearest rank), max."""

    median: float | None
    p95: float | None
    max: float | None


@dataclass(frozen=True, slots=True)
class AtU:
    """One variant at one U, over every cell it has there (``overshooting``: the cells with
    overshoot > 0; ``overshoot_p99``: the 99th percentile, nearest rank)."""

    variant: str
    U: int
    cells: int
    overshooting: int
    overshoot: Spread
    overshoot_p99: float | None
    unneeded: Spread
    missing_copy_seconds_median: float | None
    reads_per_round_median: float | None


@dataclass(frozen=True, slots=True)
class AfterAtU:
    """One variant at one U, from the first death event on, in a sweep from running
    copies: its cells with such an event (``disturbed``), those overshooting after it and
    those still off the desired count when the run ends (``unsettled``: ``settle_after``
    null), and each figure of :data:`AFTER` over the disturbed cells (``settle_after``
    over the settled ones): median, p95 (nearest rank), max."""

    variant: str
    U: int
    disturbed: int
    overshooting: int
    unsettled: int
    overshoot_after: Spread
    missing_after: Spread
    settle_after: Spread


@dataclass(frozen=True, slots=True)
class Period:
    """A period a variant may run at, and what it costs there (medians over its cells)."""

    U: int
    missing_copy_seconds_median: float | None
    reads_per_round_median: float | None


@dataclass(frozen=True, slots=True)
class VariantAnswer:
    """One variant's answer: over all its cells, how many overshoot and the most overshoot
    and unneeded copies in one; its smallest swept U with zero overshoot in every cell
    (``zero``; ``zero_stays``: whether every larger swept U has none either) and its
    smallest with zero overshoot at the 99th percentile (``p99``); None where no swept U
    gives it."""

    variant: str
    controller: str
    params: dict[str, Any]
    cells: int
    overshooting: int
    overshoot_max: float | None
    unneeded_max: float | None
    zero: Period | None
    zero_stays: bool | None
    p99: Period | None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A variant at the period it is compared at: the trade-off figures there (means over
    its cells at that U, as the controllers section's) and who beats it."""

    variant: str
    U: int
    excess_copy_seconds: float | None
    wasted_delete_commands: float | None
    missing_copy_seconds: float | None
    reads: float | None
    beaten_by: tuple[str, ...]
    on_frontier: bool
    #: The differences treated as ties that decided whether another beats it.
    ties: tuple[Tie, ...] = field(default=(), metadata=UNLESS_DEFAULT)


@dataclass(frozen=True, slots=True)
class Change:
    """One variant at one U against the baseline: its cells (among those sharing the
    baseline's other axes) and, for each figure of :data:`BASELINE`, its median, p95
    (nearest rank) and max less the baseline's (None where either is)."""

    variant: str
    U: int
    cells: int
    overshoot: Spread
    unneeded: Spread
    missing_copy_seconds: Spread
    reads_per_round: Spread


@dataclass(frozen=True, slots=True)
class Baseline:
    """The user's current setting (``setting``: axis -> value, as the spec names it), its
    cells and its figures of :data:`BASELINE` (median, p95 by nearest rank, max); ``kept``:
    the setting's axes every change keeps (all but the controller, its variant parameters
    and U); ``changes``: every other (variant, U) against it, in the rows' order; ``text``:
    the words that open the answer."""

    setting: dict[str, Any]
    cells: int
    kept: tuple[str, ...]
    overshoot: Spread
    unneeded: Spread
    missing_copy_seconds: Spread
    reads_per_round: Spread
    changes: tuple[Change, ...]
    text: str


@dataclass(frozen=True, slots=True)
class OverAxis:
    """An axis the figures at one U are taken over, and its number of values."""

    axis: str
    values: int


@dataclass(frozen=True, slots=True)
class AnswersSummary:
    """``summary.json``'s ``answers``: the swept periods, what each row is taken over, every
    (variant, U) row, each variant's answer, the candidates compared and the verdict.

    ``basis`` is ``zero`` (the candidates are the variants at their smallest U with zero
    overshoot in every cell), ``p99`` (none has one: at their smallest U with zero
    overshoot at the 99th percentile) or ``none`` (no variant reaches either). ``after``:
    the (variant, U) rows of the response to the disturbance, in the rows' order; empty
    unless the sweep starts from running copies."""

    U_values: tuple[int, ...]
    varying: tuple[str, ...]
    over: tuple[OverAxis, ...]
    full_grid: bool
    rows: tuple[AtU, ...]
    variants: tuple[VariantAnswer, ...]
    basis: str
    candidates: tuple[Candidate, ...]
    best: tuple[str, ...]
    sentence: str
    after: tuple[AfterAtU, ...] = ()
    #: The user's setting and the changes against it, where the spec names one.
    baseline: Baseline | None = field(default=None, metadata=UNLESS_DEFAULT)
    chart: pl.DataFrame | None = field(default=None, metadata=NOT_IN_JSON)
    after_chart: pl.DataFrame | None = field(default=None, metadata=NOT_IN_JSON)

    @property
    def swept(self) -> bool:
        """Whether the sweep runs more than one period."""
        return len(self.U_values) > 1


def _over_axes(axes: Sequence[str], sizes: Mapping[str, int],
               params: Sequence[str]) -> tuple[OverAxis, ...]:
    """The axes each (variant, U) row is taken over: every axis but the controller, U and
    the variant parameters (those that do not vary within a controller are one value per
    variant), with more than one value."""
    left_out = {"controller", "U", *params, *VARIANT_PARAMS, *user_params(axes)}
    return tuple(OverAxis(a, sizes[a]) for a in axes if a not in left_out and sizes[a] > 1)


def over_text(over: Sequence[OverAxis]) -> str:
    """``30 seeds and 2 G values`` (``one cell`` when nothing else varies)."""
    if not over:
        return "its one cell (no other axis varies)"
    parts = [f"{o.values:,} seeds" if o.axis == "seed" else f"{o.values:,} {o.axis} values"
             for o in over]
    return listed(parts)


def _ranks(n: pl.Expr) -> dict[str, pl.Expr]:
    """The 1-based ranks read from a group of ``n`` sorted values: the median's two middle
    ones and the nearest rank of each of :data:`PERCENTILES`."""
    return {"lo": (n + 1) // 2, "hi": n // 2 + 1,
            **{name: nearest_rank(p, n) for name, p in PERCENTILES.items()}}


def quantiles(counts: pl.DataFrame, keys: Sequence[str], value: str) -> pl.DataFrame:
    """Per group of ``keys``, from its cells' counts per ``value`` (column ``len``; nulls
    left out): ``{value}__median``, ``__p95``, ``__p99`` (nearest rank) and ``__max``.

    >>> c = pl.DataFrame({"k": [1, 1, 1], "v": [0, 1, 4], "len": [18, 1, 1]})
    >>> quantiles(c, ["k"], "v").row(0)
    (1, 0.0, 1.0, 4.0, 4.0)
    """
    keys = list(keys)
    h = counts.filter(pl.col(value).is_not_null()).sort([*keys, value], nulls_last=False)
    h = h.with_columns(pl.col("len").cum_sum().over(keys).alias("__cum"),
                       pl.col("len").sum().over(keys).alias("__n"))
    at = {name: pl.col(value).filter(pl.col("__cum") >= rank).first().cast(pl.Float64)
          for name, rank in _ranks(pl.col("__n")).items()}
    return h.group_by(keys, maintain_order=True).agg(
        ((at["lo"] + at["hi"]) / 2).alias(f"{value}__median"),
        at["p95"].alias(f"{value}__p95"), at["p99"].alias(f"{value}__p99"),
        pl.col(value).max().cast(pl.Float64).alias(f"{value}__max"))


def _counts(t: pl.LazyFrame, keys: Sequence[str], value: str) -> pl.DataFrame:
    """The cells per (keys, value): one streaming ``group_by``."""
    return collect(t.group_by(*keys, value).agg(pl.len()))


def _joint(t: pl.LazyFrame, keys: Sequence[str]) -> pl.DataFrame:
    """The cells per (keys, overshoot, unneeded), with the sums and non-null counts of the
    trade-off figures: one streaming ``group_by`` gives both figures' counts per value and
    the means (the two figures move together, so the groups are few)."""
    return collect(t.group_by(*keys, *SPREAD).agg(
        pl.len(), *(e.expr.sum().alias(f"{f}__sum") for f, e in TRADEOFF.items()),
        *(e.expr.count().alias(f"{f}__n") for f, e in TRADEOFF.items())))


def _means(joint: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Per (variant, U), from :func:`_joint`'s groups: its cells, those overshooting, and
    the trade-off figures' means (null where every value is)."""
    n = {f: pl.col(f"{f}__n").sum() for f in TRADEOFF}
    return joint.group_by(keys, maintain_order=True).agg(
        pl.col("len").sum().alias("cells"),
        pl.col("len").filter(pl.col("overshoot") > 0).sum().alias("overshooting"),
        *(pl.when(n[f] > 0).then(pl.col(f"{f}__sum").sum() / n[f]).alias(f) for f in TRADEOFF))


def answers_verdict(table: Table, axes: Sequence[str], sizes: Mapping[str, int],
                    variant_rows: pl.DataFrame | None = None,
                    initial: Sequence[Any] = ()) -> AnswersSummary:
    """Every variant's figures at every swept U over every other axis, and the answers;
    ``initial``: the values the sweep's ``initial`` takes (the response to the disturbance
    is read where one is not 0)."""
    params = variant_params(table, sizes, variant_rows)
    keys = ["controller", *params, "U"]
    t = lazy(table)
    joint = _joint(t, keys)
    figures = _means(joint, keys)
    counts = {m: joint.group_by(*keys, m).agg(pl.col("len").sum()) for m in SPREAD}
    counts |= {m: _counts(t, keys, m) for m in COST}
    for value, c in counts.items():
        figures = figures.join(quantiles(c, keys, value), on=keys, how="left",
                               nulls_equal=True)
    figures = figures.with_columns(variant_label(params))
    order = variant_order(figures, params)
    rank = {v: i for i, v in enumerate(order)}
    figures = _ranked(figures, rank)
    rows = tuple(_at_u(r) for r in figures.iter_rows(named=True))
    running = any(v not in (0, None) for v in initial)
    after = _after(t, keys, params, rank) if running else ()
    over = _over_axes(axes, sizes, params)
    product = 1
    for o in over:
        product *= o.values
    u_values = tuple(sorted({r.U for r in rows}))
    answers = []
    for label in order:
        mine = figures.filter(pl.col("variant") == label)
        first = mine.row(0, named=True)
        answers.append(_answer(label, first, params, [r for r in rows if r.variant == label]))
    basis, picked = _basis(answers)
    candidates = _candidates(figures, picked)
    best = tuple(c.variant for c in candidates if c.on_frontier)
    summary = AnswersSummary(
        U_values=u_values, varying=tuple(params), over=over,
        full_grid=all(r.cells == product for r in rows), rows=rows,
        variants=tuple(answers), basis=basis, candidates=candidates, best=best,
        sentence="", after=after, chart=_chart_rows(rows, SPREAD),
        after_chart=_chart_rows(after, AFTER) if after else None)
    return _with_sentence(summary)


def _stored(axis: str, value: Any, spec: Mapping[str, Any]) -> tuple[str, Any]:
    """The column of the report's table that holds a baseline's ``axis``, and its ``value``
    as held there: a delay table by its name column, a named schedule of records (``lag``,
    ``create_faults``) as its records from the spec's tables, flattened as the table's
    (:func:`reconsim.sweep.table.flat`); the controller, the death schedule and a user's
    controller's parameter as they are."""
    if name_column(axis) in NAME_COLUMNS:
        return name_column(axis), value
    if axis in ("controller", "schedule") or axis not in BY_NAME:
        return axis, value
    kind = BY_NAME[axis].kind
    if isinstance(kind, Records) and kind.table:
        value = () if value == "none" else spec[kind.table][value][kind.key]
    held = pl.DataFrame([pl.Series(axis, [kind.to_column(kind.check(axis, value))],
                                   dtype=kind.dtype)])
    return axis, held.select(flat(axis, kind.dtype)).item()


def _figures(keys: Sequence[str]) -> list[pl.Expr]:
    """Each figure of :data:`BASELINE` as median, p95 (nearest rank) and max, per group
    of ``keys`` (or over all cells), with the cells."""
    return [pl.len().alias("cells"), *(e for m in BASELINE for e in (
        pl.col(m).median().cast(pl.Float64).alias(f"{m}__median"),
        percentile_expr(pl.col(m), 0.95).cast(pl.Float64).alias(f"{m}__p95"),
        pl.col(m).max().cast(pl.Float64).alias(f"{m}__max")))]


def _spread(r: Mapping[str, Any], m: str, less: Mapping[str, Any] | None = None) -> Spread:
    """Figure ``m``'s median, p95 and max of row ``r``, less those of ``less``."""
    def at(q: str) -> float | None:
        mine, theirs = r[f"{m}__{q}"], None if less is None else less[f"{m}__{q}"]
        if less is None or mine is None:
            return mine  # type: ignore[no-any-return]
        return None if theirs is None else float(mine - theirs)

    return Spread(at("median"), at("p95"), at("max"))


def with_baseline(s: AnswersSummary, table: Table, axes: Sequence[str],
                  spec: Any) -> AnswersSummary:
    """``s`` with the baseline ``spec`` (the sweep's spec as ``sweep.json`` holds it) names,
    if any: its figures over the cells it selects, and every other (variant, U) against
    them over the cells sharing its other axes; two streaming queries."""
    setting = spec.get("baseline") if isinstance(spec, Mapping) else None
    if not isinstance(setting, dict) or not setting:
        return s
    t, params = lazy(table), list(s.varying)
    keys = ["controller", *params, "U"]
    rank = {a.variant: i for i, a in enumerate(s.variants)}
    held = {a: _stored(a, v, spec) for a, v in setting.items()}
    chosen = {"controller", "U", *params, *VARIANT_PARAMS, *user_params(axes)}
    kept = tuple(a for a in setting if a not in chosen)
    match = {a: pl.col(c).eq_missing(v) for a, (c, v) in held.items()}
    selects = pl.all_horizontal(*match.values())
    base = collect(t.filter(selects).select(
        *_figures([]), pl.col("U").unique().implode().alias("__U"))).row(0, named=True)
    if not base["cells"]:
        return s
    scope = t.filter(pl.all_horizontal(*(match[a] for a in kept))) if kept else t
    rows = collect(scope.group_by(keys).agg(*_figures(keys), selects.all().alias("__own")))
    rows = _ranked(rows.with_columns(variant_label(params)), rank)
    changes = tuple(Change(variant=r["variant"], U=r["U"], cells=r["cells"],
                           **{m: _spread(r, m, base) for m in BASELINE})
                    for r in rows.iter_rows(named=True)
                    if not (r["__own"] and r["cells"] == base["cells"]))
    mine = {m: _spread(base, m) for m in BASELINE}
    text = _baseline_text(setting, base["cells"], mine, changes, set(base["__U"]))
    return dataclasses.replace(s, baseline=Baseline(
        setting=dict(setting), cells=base["cells"], kept=kept, **mine, changes=changes,
        text=text))


def _signed(value: float | None) -> str:
    """A change with its sign: ``+136``, ``\u22123``, ``\u00b10``."""
    if value is None:
        return "\u2014"
    sign = "+" if value > 0 else "\u2212" if value < 0 else "\u00b1"
    return f"{sign}{num(abs(value))}"


def setting_text(setting: Mapping[str, Any]) -> str:
    """``controller ledger, U = 10``."""
    return ", ".join(f"controller {v}" if a == "controller" else f"{a} = {v}"
                     for a, v in setting.items())


def _baseline_text(setting: Mapping[str, Any], cells: int, mine: Mapping[str, Spread],
                   changes: Sequence[Change], own_u: set[int]) -> str:
    """The words that open the answer: the setting's figures, then the other variants at
    its U (their medians' changes; at most :data:`LISTED`, the table gives every one)."""
    figures = "; ".join(f"{w} median {num(mine[m].median)}, p95 {num(mine[m].p95)}, max "
                        f"{num(mine[m].max)}" for m, w in BASELINE.items())
    text = (f"At your setting ({setting_text(setting)}): {figures} (over its {cells:,} "
            f"{'cell' if cells == 1 else 'cells'}; p95 by nearest rank).")
    near = [c for c in changes if c.U in own_u]
    if near:
        said = "; ".join(f"{c.variant} at U = {num(c.U)}: " + ", ".join(
            f"{w} {_signed(getattr(c, m).median)}" for m, w in BASELINE.items())
            for c in near[:LISTED])
        more = (f"; {len(near) - LISTED:,} more in the table" if len(near) > LISTED else "")
        text += f" Against it (medians): {said}{more}."
    return text


def _ranked(figures: pl.DataFrame, rank: Mapping[str, int]) -> pl.DataFrame:
    """``figures`` in the variants' order (``rank``), then by U."""
    return figures.with_columns(pl.col("variant").replace_strict(
        rank, return_dtype=pl.Int64).alias("__rank")).sort("__rank", "U").drop("__rank")


def _after(t: pl.LazyFrame, keys: Sequence[str], params: Sequence[str],
           rank: Mapping[str, int]) -> tuple[AfterAtU, ...]:
    """The response to the disturbance per (variant, U): the counts in one ``group_by``,
    each figure's quantiles from its cells' counts per value."""
    hit = pl.col("overshoot_after").is_not_null()
    figures = collect(t.group_by(*keys).agg(
        hit.sum().alias("disturbed"), (pl.col("overshoot_after") > 0).sum().alias("overshooting"),
        (hit & pl.col("settle_after").is_null()).sum().alias("unsettled")))
    for value in AFTER:
        figures = figures.join(quantiles(_counts(t, keys, value), keys, value), on=keys,
                               how="left", nulls_equal=True)
    figures = _ranked(figures.with_columns(variant_label(params)), rank)

    def spread(r: Mapping[str, Any], m: str) -> Spread:
        return Spread(r[f"{m}__median"], r[f"{m}__p95"], r[f"{m}__max"])

    return tuple(AfterAtU(
        variant=r["variant"], U=r["U"], disturbed=r["disturbed"],
        overshooting=r["overshooting"], unsettled=r["unsettled"],
        **{m: spread(r, m) for m in AFTER}) for r in figures.iter_rows(named=True))


def _at_u(r: Mapping[str, Any]) -> AtU:
    """One row of figures as an :class:`AtU`."""
    def spread(m: str) -> Spread:
        return Spread(r[f"{m}__median"], r[f"{m}__p95"], r[f"{m}__max"])

    return AtU(variant=r["variant"], U=r["U"], cells=r["cells"], overshooting=r["overshooting"],
               overshoot=spread("overshoot"), overshoot_p99=r["overshoot__p99"],
               unneeded=spread("unneeded"),
               missing_copy_seconds_median=r["missing_copy_seconds__median"],
               reads_per_round_median=r["reads_per_round__median"])


def _period(row: AtU) -> Period:
    return Period(row.U, row.missing_copy_seconds_median, row.reads_per_round_median)


def _answer(label: str, first: Mapping[str, Any], params: Sequence[str],
            rows: Sequence[AtU]) -> VariantAnswer:
    """A variant's smallest zero-overshoot periods, from its rows (in order of U)."""
    zero = next((r for r in rows if r.overshooting == 0), None)
    p99 = next((r for r in rows if r.overshoot_p99 == 0), None)
    stays = None if zero is None else all(r.overshooting == 0 for r in rows if r.U > zero.U)
    return VariantAnswer(variant=label, controller=first["controller"],
                         params={p: first[p] for p in params},
                         cells=sum(r.cells for r in rows),
                         overshooting=sum(r.overshooting for r in rows),
                         overshoot_max=_largest(r.overshoot.max for r in rows),
                         unneeded_max=_largest(r.unneeded.max for r in rows),
                         zero=None if zero is None else _period(zero), zero_stays=stays,
                         p99=None if p99 is None else _period(p99))


def _largest(values: Iterable[float | None]) -> float | None:
    """The largest of values (nulls left out; None when none is left)."""
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _basis(answers: Sequence[VariantAnswer]) -> tuple[str, dict[str, int]]:
    """Which periods the variants are compared at: each one's smallest U with zero overshoot
    in every cell, where any has one; else at the 99th percentile; else none."""
    zero = {a.variant: a.zero.U for a in answers if a.zero is not None}
    if zero:
        return "zero", zero
    p99 = {a.variant: a.p99.U for a in answers if a.p99 is not None}
    return ("p99", p99) if p99 else ("none", {})


def _candidates(figures: pl.DataFrame, picked: Mapping[str, int]) -> tuple[Candidate, ...]:
    """The picked (variant, U) pairs with their trade-off figures and the frontier rule's
    verdict (:func:`reconsim.model.metrics.frontier`, as the controllers section applies it)."""
    at = {r["variant"]: r for r in figures.iter_rows(named=True)
          if picked.get(r["variant"]) == r["U"]}
    names = [v for v in picked if v in at]
    rows = frontier({v: {f: _rounded(at[v][f]) for f in TRADEOFF} for v in names})
    return tuple(Candidate(variant=t.name, U=picked[t.name], **t.figures, beaten_by=t.beaten_by,
                           on_frontier=t.on_frontier, ties=t.ties) for t in rows)


def _rounded(value: float | None) -> float | None:
    """A mean to three places, as the controllers section's trade-off figures."""
    return None if value is None else round(float(value), 3)


#: Past this many variants, the sentence counts them instead of naming each.
LISTED: Final = 4

#: The trade-off figures in words, as the sentence names them.
TRADEOFF_WORDS: Final = {"excess_copy_seconds": "excess copy-seconds",
                         "wasted_delete_commands": "wasted deletes",
                         "missing_copy_seconds": "missing copy-seconds", "reads": "reads"}


def _least(variant: str, candidates: Sequence[Candidate]) -> str:
    """`` (fewest reads)``: the trade-off figures on which ``variant`` alone is lowest among
    the frontier's candidates, by more than a tie (nothing when it is alone on the frontier
    or lowest on none)."""
    front = [c for c in candidates if c.on_frontier]
    if len(front) < 2:
        return ""
    mine = next(c for c in front if c.variant == variant)
    lowest = [w for f, w in TRADEOFF_WORDS.items()
              if getattr(mine, f) is not None
              and all(getattr(c, f) is not None and getattr(c, f) > getattr(mine, f)
                      and not tied(getattr(c, f), getattr(mine, f))
                      for c in front if c is not mine)]
    return f" (fewest {listed(lowest)})" if lowest else ""


def _with_sentence(s: AnswersSummary) -> AnswersSummary:
    """The summary with its one-sentence answer."""
    at = {c.variant: c.U for c in s.candidates}
    never = [a.variant for a in s.variants if a.zero is None]
    swept = (f"the swept U ({num(s.U_values[0])} to {num(s.U_values[-1])} s)" if s.swept
             else f"the one swept U ({num(s.U_values[0])} s)")
    if s.basis == "none":
        text = (f"No controller reaches zero overshoot in {swept}, not even at the 99th "
                "percentile: no period here avoids over-provisioning.")
    else:
        where = ("each controller at its smallest U with zero overshoot in every cell"
                 if s.basis == "zero" else "each controller at its smallest U with zero "
                 "overshoot at the 99th percentile (none has zero in every cell)")
        again = {a.variant for a in s.variants if s.basis == "zero" and a.zero_stays is False}
        best = [f"{v} at U = {num(at[v])} s" + _least(v, s.candidates)
                + (" (a larger swept U overshoots again)" if v in again else "")
                for v in s.best]
        if len(best) == 1:
            text = f"Best choice: {best[0]} ({where}, by the trade-off rule)."
        elif len(best) <= LISTED:
            text = (f"No single best choice ({where}): {listed(best)} are "
                    f"{'both' if len(best) == 2 else 'all'} on the trade-off frontier.")
        else:
            text = (f"No single best choice ({where}): {len(best)} variants are all on the "
                    "trade-off frontier (the table of candidates marks them).")
        text += _ties_said(s.candidates)
        if never and s.basis == "zero":
            who = listed(never) if len(never) <= LISTED else f"{len(never)} variants"
            text += (f" {who} never {'reach' if len(never) > 1 else 'reaches'} "
                     f"zero overshoot in every cell in {swept}"
                     + ("." if len(never) <= LISTED else " (the table marks them)."))
    return dataclasses.replace(s, sentence=text)


def _ties_said(candidates: Sequence[Candidate]) -> str:
    """The differences treated as ties where they changed the verdict, in one sentence
    (nothing where comparing exactly gives the same)."""
    pairs: dict[tuple[str, ...], str] = {}
    for c in candidates:
        for tie in c.ties:
            key = (*sorted((c.variant, tie.other)), tie.figure)
            pairs.setdefault(key, f"the {TRADEOFF_WORDS[tie.figure]} of {c.variant} and "
                             f"{tie.other} ({num(tie.mine)} and {num(tie.theirs)})")
    if not pairs:
        return ""
    return f" {ties_text().capitalize()}: {listed(list(pairs.values()))} are taken as equal."


def _chart_rows(rows: Sequence[AtU] | Sequence[AfterAtU],
                names: Mapping[str, str]) -> pl.DataFrame:
    """A chart's rows: per variant, U and figure of ``names``, its median, p95 and max,
    and the cells it is taken over."""
    out = [{"variant": r.variant, "U": r.U, "figure": m, "median": getattr(r, m).median,
            "p95": getattr(r, m).p95, "max": getattr(r, m).max,
            "cells": r.cells if isinstance(r, AtU) else r.disturbed}
           for r in rows for m in names]
    return pl.DataFrame(out, schema={"variant": pl.String, "U": pl.Int64, "figure": pl.String,
                                     "median": pl.Float64, "p95": pl.Float64,
                                     "max": pl.Float64, "cells": pl.Int64})


def summarize(sweep: Sweep) -> AnswersSummary:
    """The answers (``summary.json``'s ``answers``)."""
    initial = sweep.axis_facts.get("initial")  # known already: no pass over the table
    s = answers_verdict(sweep.table, sweep.axes, sweep.sizes, sweep.variants,
                        () if initial is None else initial.values)
    return with_baseline(s, sweep.table, sweep.axes, sweep.meta.get("spec"))


def _scope(s: AnswersSummary) -> str:
    """What each row is taken over, in words."""
    if s.full_grid:
        return f"over {over_text(s.over)}"
    if not s.over:
        return "over every cell it has there"
    return f"over every cell it has there (the sweep spans {over_text(s.over)})"


def render(s: AnswersSummary, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """The answer in a box, the chart against U, each variant's periods and every row
    (``templates/answers.html``)."""
    return macro("answers.html", "body")(s, _scope(s), BASELINE, _signed, ties_text(), figures)


def charts(s: AnswersSummary, context: Context) -> list[Figure]:
    """Overshoot and unneeded copies against U, per variant, and the response to the
    disturbance where there is one (none when U has one value)."""
    if not s.swept or s.chart is None:
        return []
    order = [a.variant for a in s.variants]
    title = "Overshoot and unneeded copies against the loop period U"
    sub = (f"Each line: one controller (variant), its median at each U over "
           f"{over_text(s.over)}; the band reaches the p95 (nearest rank). The tooltip adds the "
           "max")
    out = [Figure("answers", title, finish(
        _against_u(s.chart, SPREAD, order, "copies (symlog scale)"), title, sub))]
    if s.after_chart is not None:
        title = "The response to the disturbance against the loop period U"
        sub = ("From the first death event on, over the cells that have one (seconds to "
               "settle: over those that settle). Each line a controller's median, the band "
               "to the p95 (nearest rank); each panel its own scale")
        chart = _against_u(s.after_chart, AFTER, order, "median (symlog scale)")
        out.append(Figure("answers_after", title,
                          finish(chart.resolve_scale(y="independent"), title, sub)))
    return out


def _against_u(data: pl.DataFrame, names: Mapping[str, str], order: Sequence[str],
               y_title: str) -> alt.FacetChart:
    """One panel a figure of ``names``: each variant's median against U, its band to the
    p95."""
    x = alt.X("U:Q", title="U: loop period (s)", scale=alt.Scale(zero=False))
    color = alt.Color("variant:N", sort=order, title="controller / variant",
                      legend=alt.Legend(labelLimit=260))
    tooltip = [alt.Tooltip("variant:N"), alt.Tooltip("U:Q"), alt.Tooltip("figure:N"),
               alt.Tooltip("median:Q", format=",.3~f"),
               alt.Tooltip("p95:Q", format=",.3~f", title="p95 (nearest rank)"),
               alt.Tooltip("max:Q", format=",.3~f"), alt.Tooltip("cells:Q")]
    y = alt.Y("median:Q", title=y_title, scale=alt.Scale(type="symlog"))
    band = alt.Chart().mark_area(opacity=0.18).encode(
        # Its own fill scale (the same palette in the same order): a colour without a
        # legend here and with one on the lines would conflict in Vega-Lite.
        x=x, y=y, y2="p95:Q", fill=alt.Fill("variant:N", sort=order, legend=None))
    line = alt.Chart().mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        x=x, y=y, color=color, tooltip=tooltip,
        strokeDash=alt.StrokeDash("variant:N", sort=order, legend=None))
    return alt.layer(band, line, data=inline(data)).properties(
        width=(WIDTH - 380) // len(names), height=220).facet(
        column=alt.Column("figure:N", title=None, sort=list(names),
                          header=alt.Header(labelExpr=names_expr(names), labelFontSize=12)))


def glance(s: AnswersSummary) -> Markup:
    """The answer, in one sentence (and the response to the disturbance, in another)."""
    return macro("answers.html", "glance")(s)


SECTION = Section("answers", summarize, render, charts, glance, title="Answers")
