"""A cell's metrics, declared once: each one's name, type and meaning, and for a derived
metric its formula from what a run counts.

A run — the reference model, the event model, a trace's sums, a kernel's result matrix —
yields the :data:`COUNTERS`: the metrics it counts as they are (``rounds``, ``created``,
``overshoot`` ...) and the last second its live count was off ``desired``
(``last_drift``). With the cell's :data:`INPUTS` (``desired``, ``duration`` and the death
schedule's total count), every other metric (``work``, ``unneeded``, ``stable_at``, the
per-round ratios) is a formula of those, written once here, and used alike for one cell
(:func:`of_run`, with Python integers) and for a batch (:func:`exprs`, with polars
expressions over its columns, a cell a row; :func:`columns` from numpy arrays): the
formulas are arithmetic that both evaluate the same way (a ratio in float64 on both sides).

A metric's percentiles over many cells (the report's p90, p95 and p99, ``reconsim
compare``'s p95) are read one way, by nearest rank (:func:`percentile` for a sequence,
:func:`percentile_expr` for a polars column or a ``group_by``'s groups): the value at
1-based rank ⌈p·n⌉ (:func:`nearest_rank`, exact) of the n non-null values sorted.

The figures the report, the comparisons and the benchmarks derive from a cell's metrics are
defined here too, once: :data:`DERIVED` (wasted deletes, reads per second, as polars
expressions), the trade-off's :data:`QUALITY` and :data:`COST` figures, and the rule that
compares variants by them, :func:`frontier`.

>>> from reconsim.model.params import Cell
>>> m = of_run({**dict.fromkeys(COUNTERS, 0), "rounds": 4, "create_commands": 6,
...             "delete_commands": 2, "reads": 10, "last_drift": 3}, Cell(duration=60))
>>> m["work"], m["work_per_round"], m["stable_at"], m["reads_per_round"]
(8, 2.0, 4, 2.5)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final, Protocol, TypeVar

import numpy as np
import polars as pl

__all__ = ["BY_NAME", "COST", "COST_FIGURES", "COUNTERS", "DERIVED", "INPUTS", "METRICS",
           "METRIC_NAMES", "OUTPUT_NAMES", "QUALITY", "QUALITY_FIGURES", "RESPONSES",
           "RESPONSES_DTYPE", "RESPONSE_FIELDS", "TIES", "TRADEOFF", "WORLD_METRICS", "Metric",
           "Tie", "Tradeoff",
           "TradeoffFigure", "columns", "derived", "exprs", "frontier", "nearest_rank", "of_run",
           "percentile", "percentile_expr", "responses_of", "tied", "ties_text", "tradeoff_figure"]

#: What a formula reads: the counters, and the metrics declared before it.
Values = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Metric:
    """One output column: its name, whether it is fractional or may be null, its meaning —
    ``help`` in one line (``reconsim run``, the report), ``doc`` in full (the model page's
    table) — and, for a derived metric, how it is computed.

    ``formula`` maps the counters (and the metrics before this one) to its value, integers
    or arrays alike; None for a metric a run counts itself. ``null_when``, for a nullable
    one, is the condition under which the metric is null instead. ``world`` names the one
    world that counts it (``deployment``: a rolling update's figures); null elsewhere.
    """

    name: str
    help: str
    doc: str
    float: bool = False
    nullable: bool = False
    formula: Callable[[Values], Any] | None = None
    null_when: Callable[[Values], Any] | None = None
    world: str | None = None

    @property
    def dtype(self) -> pl.DataType:
        """The metric's column dtype."""
        return pl.Float64() if self.float else pl.Int64()

    @property
    def type(self) -> str:
        """The metric's type as the model page's table names it: ``int``, ``float``,
        ``int, nullable``."""
        return ("float" if self.float else "int") + (", nullable" if self.nullable else "")


def ratio(a: Any, b: Any) -> Any:
    """``a / b`` in float64, each converted to float64 first (integers or arrays): what
    numpy does with int64 arrays, and so the same number for one cell as for a batch
    (Python's own ``int / int`` rounds once, and differs from it past 2**53).

    >>> a = 117_219_931_971_361_069
    >>> bool(ratio(a, 500) == (np.array([a]) / np.array([500]))[0]), ratio(a, 500) == a / 500
    (True, False)
    """
    if isinstance(a, int) and isinstance(b, int):
        return float(a) / float(b)
    return a / b


#: Every metric of a cell, in column order.
METRICS: Final[tuple[Metric, ...]] = (
    Metric("rounds", "rounds run: periodic ones (every U s, jittered) and watch-triggered",
           "rounds run: seconds `t ≤ duration` with `t % U == 0` (with jitter, the periodic "
           "schedule's; with `watch`, also the triggered ones)"),
    Metric("work", "create commands + delete commands",
           "create commands + delete commands (copies created + delete commands when nothing "
           "fails)",
           formula=lambda v: v["create_commands"] + v["delete_commands"]),
    Metric("work_per_round", "work / rounds", "`work / rounds`", float=True,
           formula=lambda v: ratio(v["work"], v["rounds"])),
    Metric("created", "copies created", "copies created"),
    Metric("unneeded", "created + initial - desired - raised - the schedule's total death "
           "count: copies that ran beyond need",
           "`created + initial \u2212 desired \u2212 raised \u2212 (total count of the death "
           "schedule)`: the copies that ran beyond need (every copy that ever ran, less those "
           "needed: `desired`, each increase of desired during the run — `raised`, their sum "
           "— and a replacement per death); 0 for a settled service that replaces its deaths "
           "exactly and follows each change of desired exactly, `initial \u2212 desired` when "
           "it only deletes a surplus it started with; negative when scheduled deaths did "
           "not all land (events after the end, or more deaths than live copies)",
           formula=lambda v: (v["created"] + v["initial"] - v["desired"] - v["raised"]
                              - v["deaths_total"])),
    Metric("delete_commands", "delete commands issued", "delete commands issued"),
    Metric("deleted", "delete commands that removed a copy (it dies grace s later)",
           "delete commands that removed a copy not yet removed (`delete_commands \u2212 deleted` "
           "were wasted: sent to a copy already removed, or beyond the entries the read "
           "listed)"),
    Metric("overshoot", "largest live - desired over all seconds, 0 if live never exceeds desired",
           "the largest `live \u2212 desired` over all seconds; 0 if live never exceeds desired"),
    Metric("stable_at", "1 + the last second with live != desired, second 0 counted as one "
           "(so 1 if no later second drifts); null if that is the final second",
           "1 + the last second with `live ≠ desired`, where second 0 counts as such a second "
           "whatever its live count: 1 for a cell whose live count equals desired from second "
           "1 on (a cell that never drifts included). Null when that last second is "
           "`duration` itself, i.e. the run ends unsettled (so also for `duration = 0`)",
           nullable=True, formula=lambda v: v["last_drift"] + 1,
           null_when=lambda v: v["last_drift"] == v["duration"]),
    Metric("reads", "ledger entries read over all rounds, ledger_base included",
           "ledger entries read, summed over rounds: the service's own entries plus "
           "`ledger_base` entries of other services per round (a settled six-copy service "
           "reads 26, as seed 001 counts)"),
    Metric("reads_per_round", "reads / rounds", "`reads / rounds`", float=True,
           formula=lambda v: ratio(v["reads"], v["rounds"])),
    Metric("excess_copy_seconds", "sum over seconds of max(0, live - desired)",
           "Σ over seconds of `max(0, live \u2212 desired)`"),
    Metric("missing_copy_seconds", "sum over seconds of max(0, desired - live)",
           "Σ over seconds of `max(0, desired \u2212 live)`"),
    Metric("create_commands", "create commands issued (failed and lost ones included)",
           "create commands issued, failed and lost ones included"),
    Metric("failed_creates", "create commands that failed: nothing was created",
           "create commands that failed: nothing was created"),
    # The response to a disturbance, from the schedule's first death event (its earliest
    # `at`) on. A run counts them itself, -1 for null (no death event within the run).
    Metric("overshoot_after", "largest live - desired over the seconds from the first death "
           "event on, 0 if live never exceeds desired there; null without a death event "
           "(at <= duration)",
           "the disturbance's overshoot: the largest `live \u2212 desired` over the seconds "
           "from the first death event on (the schedule's earliest `at`, whatever its "
           "count); 0 if live never exceeds desired there. Null when the schedule has "
           "no event at or before `duration`", nullable=True,
           null_when=lambda v: v["overshoot_after"] < 0),
    Metric("missing_after", "sum of max(0, desired - live) over the seconds from the first "
           "death event on; null without a death event",
           "Σ of `max(0, desired \u2212 live)` over the seconds from the first death event "
           "on; null as `overshoot_after`", nullable=True,
           null_when=lambda v: v["missing_after"] < 0),
    Metric("settle_after", "1 + the last second with live != desired minus the first death "
           "event's second, that second counted as one (so 1 if no later second drifts); "
           "null without a death event, or if that is the final second",
           "the time to settle after the first death event at `a`: 1 + the last second "
           "`≥ a` with `live ≠ desired`, minus `a`, with second `a` counted as such a "
           "second (as `stable_at` counts second 0): 1 when no later second drifts. "
           "Null when there is no death event (as `overshoot_after`) or when that last "
           "second is `duration` (the run ends unsettled); `overshoot_after` tells the "
           "two apart", nullable=True,
           null_when=lambda v: v["settle_after"] < 0),
    # A rolling update's figures: counted by the Deployment world alone (the data set's
    # definitions, over seconds 0 ... duration), null in every other.
    *(Metric(name, short, f"{doc} (the Deployment world; null in the others)",
             nullable=True, world="deployment") for name, short, doc in (
        ("max_pods", "most pods in the API not terminating, over all seconds",
         "the most pods in the API that are not terminating, over all seconds"),
        ("max_api_pods", "most pods in the API, terminating ones included",
         "the most pods in the API, terminating ones included, over all seconds"),
        ("max_live", "most live pods (ready, in the API, terminating ones included)",
         "the most live pods (ready and in the API, terminating ones included) over all "
         "seconds"),
        ("peak_surge", "largest non-terminating pods - desired, at least 0",
         "the largest `non-terminating pods \u2212 desired` over all seconds, at least 0"),
        ("surge_violation_seconds", "seconds with non-terminating pods > desired + surge "
         "budget", "seconds with `non-terminating pods > desired + surge_budget` (each "
         "second's desired and budget)"),
        ("api_surge_violation_seconds", "seconds with pods in the API > desired + surge "
         "budget (terminating ones counted)", "seconds with `pods in the API > desired + "
         "surge_budget`: terminating pods counted, as a node's resources count them (the "
         "controller does not)"),
        ("min_available", "fewest available pods over all seconds",
         "the fewest available pods over all seconds: in the API, not terminating, ready "
         "with `ready second + min_ready \u2264 t`"),
        ("min_available_after_rollout", "fewest available pods from the first template "
         "change on", "`min_available` over the seconds from the first template change on"),
        ("unavailable_seconds", "seconds with available < desired - unavailable budget",
         "seconds with `available < desired \u2212 unavailable_budget` (each second's)"),
        ("unavailable_seconds_after_rollout", "unavailable_seconds from the first template "
         "change on", "`unavailable_seconds` over the seconds from the first template change "
         "on"),
        ("rollout_done_at", "first second from the last template change on with every pod "
         "new, available and not terminating, and no old pod; null if never",
         "the first second `t \u2265` the last template change with `desired` new pods "
         "available and not terminating and no old pod in the API; null if never"),
        ("status_complete_at", "first second from the last template change on whose status "
         "says complete; null if never", "the first second `t \u2265` the last template "
         "change whose Deployment status says complete (Progressing True, reason "
         "NewReplicaSetAvailable, observedGeneration current); null if never"),
        ("complete_at_end", "1 if the rollout is done at the end of the run, else 0",
         "1 if `rollout_done_at`'s condition holds at `t = duration`, else 0"),
        ("rs_syncs", "ReplicaSet controller syncs", "`syncReplicaSet` calls"),
        ("deploy_syncs", "Deployment controller syncs", "`syncDeployment` calls"),
        ("final_rs_count", "ReplicaSets in the API at the end", "ReplicaSets in the API at "
         "`t = duration`"),
        ("surge_budget", "max_surge resolved against the initial desired",
         "`max_surge` resolved against the initial `desired` (a percentage rounded up)"),
        ("unavailable_budget", "max_unavailable resolved against the initial desired",
         "`max_unavailable` resolved against the initial `desired` (a percentage rounded "
         "down; 1 when both budgets come to 0), at most `desired`"),
    )),
)
#: Every metric's name, in column order.
METRIC_NAMES: Final[tuple[str, ...]] = tuple(m.name for m in METRICS)
#: Every metric by name.
BY_NAME: Final[Mapping[str, Metric]] = {m.name: m for m in METRICS}

#: What a run counts, from which (with the cell's :data:`INPUTS`) every metric follows: the
#: metrics it counts as they are, ``last_drift``, the last second with live != desired
#: (0 when none: second 0 counts as one), and ``raised``, the sum of the increases of
#: desired during the run (its scale schedule's changes up to ``duration``).
COUNTERS: Final[tuple[str, ...]] = (
    *(m.name for m in METRICS if m.formula is None and m.world is None), "last_drift", "raised")
#: The metrics one world alone counts, by world: null in the others' runs.
WORLD_METRICS: Final[Mapping[str, tuple[str, ...]]] = {
    world: tuple(m.name for m in METRICS if m.world == world)
    for world in dict.fromkeys(m.world for m in METRICS if m.world is not None)}
#: What the formulas read of the cell: ``desired``, ``duration``, ``deaths_total``, the
#: death schedule's total count (also the deaths after the end or beyond the live count),
#: and ``initial``, the copies running at t = 0 (``"desired"`` resolved).
INPUTS: Final[tuple[str, ...]] = ("desired", "duration", "deaths_total", "initial")


#: The column holding a cell's responses to its events, one record each.
RESPONSES: Final = "responses"
#: A response's fields and what each means: a list of records, one per event (a second
#: within the run holding a death event, a change of desired, or both), in order; its
#: window runs from its second to the second before the next event (or ``duration``).
RESPONSE_FIELDS: Final[Mapping[str, str]] = {
    "at": "the event's second: a death event's, a change of desired's, or both's",
    "overshoot": "the largest `live \u2212 desired` over the event's window; 0 if live never "
                 "exceeds desired there",
    "undershoot": "the largest `desired \u2212 live` over the window; 0 if live never falls "
                  "below desired there",
    "missing": "\u03a3 of `max(0, desired \u2212 live)` over the window",
    "settle": "the time to settle: 1 + the window's last second with `live \u2260 desired`, "
              "minus the event's second, that second counted as such a second (1 when no "
              "later second drifts, as `settle_after`); null when that last second is the "
              "window's last: the cell had not settled before the next event, or the end",
}
#: The responses column's dtype.
RESPONSES_DTYPE: Final = pl.List(pl.Struct(dict.fromkeys(RESPONSE_FIELDS, pl.Int64)))
#: The columns :func:`reconsim.simulate` adds to a frame, in order: every metric, then the
#: responses (the keys of :func:`reconsim.run_cell`'s dict alike).
OUTPUT_NAMES: Final[tuple[str, ...]] = (*METRIC_NAMES, RESPONSES)


def responses_of(matrix: np.ndarray, base: int, n: int) -> list[dict[str, int | None]]:
    """A run's responses as records (settle None for null), from columns ``base … base +
    n - 1`` of ``matrix``, a field a row in :data:`RESPONSE_FIELDS`' order."""
    fields = tuple(RESPONSE_FIELDS)
    return [{f: (None if f == "settle" and v < 0 else int(v))
             for f, v in zip(fields, matrix[:, base + k].tolist(), strict=True)}
            for k in range(n)]


class CellInputs(Protocol):
    """What :func:`of_run` reads of a cell (a :class:`~reconsim.model.params.Cell`)."""

    @property
    def desired(self) -> int: ...
    @property
    def duration(self) -> int: ...
    @property
    def deaths(self) -> Iterable[tuple[int, int]]: ...
    def initial_copies(self) -> int: ...


def of_run(counts: Mapping[str, int], cell: CellInputs,
           responses: list[dict[str, int | None]] | None = None) -> dict[str, Any]:
    """One cell's metrics (Python numbers, None for a null) from its run's
    :data:`COUNTERS`, and with ``responses`` given, its :data:`RESPONSES` after them."""
    values: dict[str, Any] = {**counts, "desired": cell.desired, "duration": cell.duration,
                              "deaths_total": sum(count for _, count in cell.deaths),
                              "initial": cell.initial_copies()}
    for m in METRICS:
        if m.formula is not None:
            values[m.name] = m.formula(values)
    out = {m.name: None if m.null_when is not None and m.null_when(values)
           else values.get(m.name) if m.world is not None else values[m.name]
           for m in METRICS}
    if responses is not None:
        out[RESPONSES] = responses
    return out


@dataclass(frozen=True)
class Derived:
    """A figure derived from a cell's metrics to compare cells by (not a column of the
    table): its formula, what it means, and the formula as a polars expression."""

    formula: str
    help: str
    expr: pl.Expr


#: The derived figures by name: the report, the benchmarks and the docs read them here.
DERIVED: Final[Mapping[str, Derived]] = {
    "wasted_deletes": Derived("delete_commands - deleted",
                              "delete commands sent to a copy already removed, or beyond "
                              "the entries the read listed",
                              pl.col("delete_commands") - pl.col("deleted")),
    "reads_per_second": Derived("reads / (duration + 1)",
                                "ledger entries read per second of the run, the run being "
                                "the seconds 0 \u2026 duration",
                                pl.col("reads") / (pl.col("duration") + 1)),
}


def derived(name: str) -> pl.Expr:
    """The derived figure ``name`` (:data:`DERIVED`) as a polars expression, named so.

    >>> frame = pl.DataFrame({"delete_commands": [5], "deleted": [3]})
    >>> frame.select(derived("wasted_deletes")).item()
    2
    """
    return DERIVED[name].expr.alias(name)


@dataclass(frozen=True)
class TradeoffFigure:
    """A figure that weighs a controller variant against another, lower being better: its
    name in words and its value for one cell as a polars expression (a variant's figure
    aggregates it over its cells: a mean in the report, a sum in the benchmarks)."""

    label: str
    expr: pl.Expr


#: What a variant gets wrong, by the name the report's summary and the benchmarks' quality
#: record give it (``wasted_delete_commands`` is :data:`DERIVED`'s ``wasted_deletes``).
QUALITY: Final[Mapping[str, TradeoffFigure]] = {
    "excess_copy_seconds": TradeoffFigure("excess copy-seconds", pl.col("excess_copy_seconds")),
    "wasted_delete_commands": TradeoffFigure("wasted delete commands",
                                             DERIVED["wasted_deletes"].expr),
}
#: What a variant pays for it.
COST: Final[Mapping[str, TradeoffFigure]] = {
    "missing_copy_seconds": TradeoffFigure("missing copy-seconds",
                                           pl.col("missing_copy_seconds")),
    "reads": TradeoffFigure("ledger reads", pl.col("reads")),
}
#: The quality figures, then the cost figures: all four better when lower.
TRADEOFF: Final[Mapping[str, TradeoffFigure]] = {**QUALITY, **COST}
#: The names of the quality and of the cost figures, in order.
QUALITY_FIGURES: Final[tuple[str, ...]] = tuple(QUALITY)
COST_FIGURES: Final[tuple[str, ...]] = tuple(COST)


def tradeoff_figure(name: str) -> pl.Expr:
    """The quality or cost figure ``name`` (:data:`QUALITY`, :data:`COST`) of a cell as a
    polars expression, named so.

    >>> frame = pl.DataFrame({"delete_commands": [5], "deleted": [3]})
    >>> frame.select(tradeoff_figure("wasted_delete_commands")).row(0, named=True)
    {'wasted_delete_commands': 2}
    """
    return TRADEOFF[name].expr.alias(name)


#: Two figures within this fraction of the larger one count as a tie in :func:`frontier`:
#: neither is better (means of a few hundred cells differ by far more from seed to seed).
TIES: Final = 0.01


@dataclass(frozen=True)
class Tie:
    """A difference treated as a tie that decides whether ``other`` beats a variant: the
    figure, the variant's value and the other's."""

    other: str
    figure: str
    mine: float
    theirs: float


@dataclass(frozen=True)
class Tradeoff:
    """A variant's quality and cost figures, the variants that beat it on all of them, and
    the ties that decided whether one does (``ties``: none where exact comparison gives the
    same verdict)."""

    name: str
    figures: Mapping[str, float | None]
    beaten_by: tuple[str, ...]
    ties: tuple[Tie, ...] = ()

    @property
    def on_frontier(self) -> bool:
        """Whether no other variant beats it."""
        return not self.beaten_by


def tied(a: float, b: float, ties: float = TIES) -> bool:
    """Whether ``a`` and ``b`` differ by at most ``ties`` of the larger in size.

    >>> tied(115_163, 115_183), tied(100, 105), tied(0, 0.001)
    (True, False, False)
    """
    return abs(a - b) <= ties * max(abs(a), abs(b))


def ties_text(ties: float = TIES) -> str:
    """The tolerance in words: ``differences within 1 % count as ties``."""
    return f"differences within {ties * 100:g} % count as ties"


def frontier(figures: Mapping[str, Mapping[str, float | None]],
             ties: float = TIES) -> tuple[Tradeoff, ...]:
    """Variant -> its figures, as :class:`Tradeoff` rows: each variant's quality and cost
    figures (:data:`QUALITY_FIGURES`, :data:`COST_FIGURES`) and the variants that beat it,
    as good on every one and better on one (a figure some variant lacks is left out); two
    values within ``ties`` of the larger (:func:`tied`) are as good as each other, neither
    better. Each row lists the ties that changed whether another beats it (against
    comparing exactly).

    >>> [t.beaten_by for t in frontier({"a": {"reads": 2}, "b": {"reads": 1}})]
    [('b',), ()]
    >>> [t.beaten_by for t in frontier({"a": {"reads": 1000}, "b": {"reads": 999}})]
    [(), ()]
    """
    rows = {n: {f: q.get(f) for f in TRADEOFF} for n, q in figures.items()}
    present = [f for f in TRADEOFF if all(r[f] is not None for r in rows.values())]
    if not present:
        return tuple(Tradeoff(n, r, ()) for n, r in rows.items())

    known = {n: {f: float(r[f] or 0) for f in present} for n, r in rows.items()}

    def beats(a: Mapping[str, float], b: Mapping[str, float], within: float) -> bool:
        even = {f: tied(a[f], b[f], within) for f in present}
        return (all(even[f] or a[f] < b[f] for f in present)
                and any(not even[f] and a[f] < b[f] for f in present))

    def decided(other: str, n: str) -> tuple[Tie, ...]:
        a, b = known[other], known[n]
        if beats(a, b, ties) == beats(a, b, 0.0):
            return ()
        return tuple(Tie(other, f, b[f], a[f]) for f in present
                     if a[f] != b[f] and tied(a[f], b[f], ties))

    return tuple(Tradeoff(n, r, tuple(m for m in rows
                                      if m != n and beats(known[m], known[n], ties)),
                          tuple(t for m in rows if m != n for t in decided(m, n)))
                 for n, r in rows.items())


def exprs(values: Mapping[str, pl.Expr]) -> list[pl.Expr]:
    """A batch's metrics as polars expressions, one each in :data:`METRICS`' order, from its
    :data:`COUNTERS` and :data:`INPUTS` as expressions (columns, a cell a row): the same
    formulas, evaluated by polars side by side."""
    values = dict(values)
    out = []
    for m in METRICS:
        if m.formula is not None:
            values[m.name] = m.formula(values)
        value = values.get(m.name, pl.lit(None)) if m.world is not None else values[m.name]
        if m.null_when is not None:
            value = pl.when(m.null_when(values)).then(None).otherwise(value)
        out.append(value.cast(m.dtype).alias(m.name))
    return out


def columns(counts: Mapping[str, np.ndarray]) -> list[pl.Series]:
    """A batch's metrics, one column each in :data:`METRICS`' order, from its
    :data:`COUNTERS` and :data:`INPUTS` as numpy arrays (a cell a value)."""
    frame = pl.DataFrame(dict(counts))
    return frame.select(exprs({name: pl.col(name) for name in counts})).get_columns()


#: A count of values: a Python integer, or a polars integer expression (a group's count).
Count = TypeVar("Count", int, pl.Expr)


def _level(p: float | Fraction) -> Fraction:
    """A percentile's level ``p``, 0 < p ≤ 1, as an exact fraction: a float is read as the
    decimal it is written as (0.95 is 19/20, not the binary float just below it)."""
    q = p if isinstance(p, Fraction) else Fraction(repr(p))
    if not 0 < q <= 1:
        raise ValueError(f"a percentile's level must be in (0, 1], got {p!r}")
    return q


def nearest_rank(p: float | Fraction, n: Count) -> Count:
    """The 1-based rank ⌈p·n⌉ of the p-th percentile among ``n`` sorted values, for a
    Python integer or a polars integer expression alike: integer arithmetic on ``p`` as an
    exact fraction, so 100 values at 0.07 give 7, where the float ``0.07 * 100`` is
    7.000000000000001 and its ceiling 8. Zero for no value (no rank to read).

    >>> nearest_rank(0.95, 20), nearest_rank(0.07, 100), nearest_rank(0.99, 1), nearest_rank(0.9, 0)
    (19, 7, 1, 0)
    """
    q = _level(p)
    return (q.numerator * n + q.denominator - 1) // q.denominator


def percentile(values: Iterable[Any], p: float | Fraction) -> Any:
    """The p-th percentile of ``values`` by nearest rank: of the n values that are not None,
    sorted, the one at rank ⌈p·n⌉ (:func:`nearest_rank`) — the smallest value with at least
    ⌈p·n⌉ of the n at or below it, always one of the values, never interpolated. None when
    no value is left.

    >>> percentile(range(1, 13), 0.95), percentile(range(1, 21), 0.95), percentile([None, 7], 0.5)
    (12, 19, 7)
    >>> percentile([None], 0.95) is None
    True
    """
    kept = sorted(v for v in values if v is not None)
    return kept[nearest_rank(p, len(kept)) - 1] if kept else None


def percentile_expr(values: pl.Expr, p: float | Fraction) -> pl.Expr:
    """:func:`percentile` as a polars expression, for a ``select`` or a ``group_by``'s
    ``agg``: ``values``' nulls dropped, sorted, the one at index ⌈p·n⌉ - 1 of the n left, in
    its own dtype; null where none is left.

    >>> frame = pl.DataFrame({"k": [1] * 12 + [2], "v": [*range(1, 13), None]})
    >>> frame.group_by("k", maintain_order=True).agg(percentile_expr(pl.col("v"), 0.95)).rows()
    [(1, 12), (2, None)]
    """
    n = values.count().cast(pl.Int64)
    # With no value left the index is -1, out of bounds of nothing: null.
    return values.drop_nulls().sort().get(nearest_rank(p, n) - 1, null_on_oob=True)
