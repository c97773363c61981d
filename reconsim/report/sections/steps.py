"""The law per step: each cell's first change of desired against
:data:`~reconsim.model.laws.STEP_LAWS`, on every cell the law covers.

A change of Δ copies at second a, from a settled start, is seed 001's experiment again
with Δ in place of desired (:func:`reconsim.model.laws.step_columns`, whose hidden
columns :mod:`~reconsim.report.load` computes from the lists as stored). The section
counts, per direction (a step up, a step down) and controller, the steps, those the law
checks and those it holds on; lists every failure, cell by cell; and counts the steps it
leaves unchecked by reason (:data:`~reconsim.model.laws.STEP_EXCLUSIONS`). Nothing is
filtered or clamped to make it hold. Two streaming queries: the counts, one ``group_by``;
the failures, a filter. A table without a change of desired (or written before the
responses existed) has no step, and the section is left out.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import polars as pl
from markupsafe import Markup

from reconsim.model.laws import STEP_CONTROLLERS, STEP_EXCLUSIONS, STEP_LAWS, STEP_PREFIX
from reconsim.model.params import UNLIMITED
from reconsim.report.blocks import macro
from reconsim.report.charts import Figure
from reconsim.report.claims import Claim
from reconsim.report.load import CELL_ID, Sweep
from reconsim.report.query import Table, collect, in_order, lazy
from reconsim.report.section import NOT_IN_JSON, Context, Section
from reconsim.web.html import plain

#: The directions of a step, as the page names them.
DIRECTIONS: Final = {"up": "step up (Δ > 0)", "down": "step down (Δ < 0)"}
#: Why a step is unchecked beyond :data:`STEP_EXCLUSIONS`: the law's columns hold no
#: value to compare (a table whose responses lack the step's record).
NO_VALUE: Final = "no_value"
#: Every reason a step is unchecked, in words.
UNCHECKED: Final = {**STEP_EXCLUSIONS, NO_VALUE: "no measured value in the table"}
#: Every reason in a few words, for the table (the verdict gives them in full).
SHORT: Final = {"capped": "capped", "damped": "damped", "world": "off seed 001's world",
                "varying": "delays vary", "unsettled": "start not settled",
                "after_death": "a death first", "cut_short": "window too short",
                "slow_start": "B ≥ 2U, blind rounds", "ttl": "ttl too short",
                NO_VALUE: "no value"}
#: Most failures the page lists cell by cell (all of them are counted).
MAX_LISTED: Final = 10_000
#: The columns of a failure besides the cell's axes, as :func:`step_columns` names them.
STEP_FIGURES: Final = ("delta", "phase", "law", "measured", "missing_law", "missing",
                       "undershoot")


def _step(name: str) -> pl.Expr:
    """Hidden column ``__step_<name>``."""
    return pl.col(f"{STEP_PREFIX}{name}")


@dataclass(frozen=True, slots=True)
class StepGroup:
    """One controller's steps in one direction: how many, how many the law checks, holds
    on and fails on, and the unchecked ones by reason (a key of :data:`UNCHECKED`)."""

    direction: str
    controller: str
    steps: int
    checked: int
    held: int
    failed: int
    unchecked: dict[str, int]


@dataclass(frozen=True, slots=True)
class StepsSummary:
    """``summary.json``'s ``steps``: the cells with a step (``steps``), the law per step
    as a :class:`~.claims.Claim` (the steps it covers, those it holds on, and as its
    examples every failure, the first :data:`MAX_LISTED` by cell id: the cell's id, its
    step's direction, controller, G, U and B, :data:`STEP_FIGURES`, and its other axes
    that take several values in the sweep), the unchecked steps by reason, and the same
    per direction and controller (``groups``). Left out of the page where no cell has a
    step."""

    steps: int
    law: Claim
    unchecked: dict[str, int]
    groups: tuple[StepGroup, ...]
    #: The sweep's folder as a command names it, for the command that runs a cell again.
    folder: str | None = field(default=None, metadata=NOT_IN_JSON)


#: The law per step as a claim, and the steps it speaks of.
CLAIM: Final = ("The law per step", "steps it covers")


def _none() -> StepsSummary:
    return StepsSummary(steps=0, law=Claim.of(*CLAIM, 0, 0), unchecked={}, groups=())


def _reason() -> pl.Expr:
    """Why a step is unchecked: its exclusion, or :data:`NO_VALUE`; null where checked."""
    return (pl.when(_step("holds").is_not_null()).then(None)
            .otherwise(_step("excluded").fill_null(NO_VALUE)))


def _direction() -> pl.Expr:
    return pl.when(_step("delta") > 0).then(pl.lit("up")).otherwise(pl.lit("down"))


def steps_verdict(table: Table, axes: Sequence[str], sizes: Mapping[str, int] | None = None,
                  folder: str | None = None) -> StepsSummary:
    """The law per step on every cell with a step: the counts per direction and
    controller in one ``group_by``, and every failure."""
    t = lazy(table)
    if f"{STEP_PREFIX}at" not in t.collect_schema():
        return _none()
    stepped = t.filter(_step("at").is_not_null())
    holds, reason = _step("holds"), _reason()
    counts = collect(stepped.group_by("controller", _direction().alias("direction")).agg(
        pl.len().alias("steps"),
        holds.is_not_null().sum().alias("checked"),
        holds.fill_null(value=False).sum().alias("held"),
        (~holds).fill_null(value=False).sum().alias("failed"),
        *((reason == key).sum().alias(f"unchecked_{key}") for key in UNCHECKED)))
    if counts.height == 0:
        return _none()
    rank = {c: i for i, c in enumerate(in_order(counts["controller"].to_list()))}
    counts = counts.with_columns(
        pl.col("controller").replace_strict(rank, return_dtype=pl.Int64).alias("__rank"),
        (pl.col("direction") == "down").alias("__down")).sort("__down", "__rank")
    groups = tuple(StepGroup(
        direction=r["direction"], controller=r["controller"], steps=r["steps"],
        checked=r["checked"], held=r["held"], failed=r["failed"],
        unchecked={k: r[f"unchecked_{k}"] for k in UNCHECKED if r[f"unchecked_{k}"]})
        for r in counts.iter_rows(named=True))
    failed = sum(g.failed for g in groups)
    law = Claim.of(*CLAIM, sum(g.checked for g in groups), failed,
                   examples=_failures(stepped, axes, sizes) if failed else ())
    return StepsSummary(
        steps=sum(g.steps for g in groups), law=law,
        unchecked={k: n for k in UNCHECKED
                   if (n := sum(g.unchecked.get(k, 0) for g in groups))},
        groups=groups, folder=folder)


def _failures(stepped: pl.LazyFrame, axes: Sequence[str],
              sizes: Mapping[str, int] | None) -> tuple[dict[str, Any], ...]:
    """Every cell where the law per step fails (the first :data:`MAX_LISTED` by cell id,
    then by its axes), with the axes that take several values in the sweep."""
    shown = ("controller", "G", "U", "B")
    others = [a for a in axes if a not in shown and (sizes is None or sizes.get(a, 2) > 1)]
    names = stepped.collect_schema().names()
    cell = pl.col(CELL_ID) if CELL_ID in names else pl.lit(None, dtype=pl.Int64)
    rows = collect(stepped.filter(~_step("holds").fill_null(value=True)).select(
        cell.alias("cell"), _direction().alias("direction"), *shown, *others,
        *(_step(f).alias(f) for f in STEP_FIGURES)).sort(
        "cell", *shown, *others, nulls_last=True).head(MAX_LISTED))
    return tuple(rows.iter_rows(named=True))


def summarize(sweep: Sweep) -> StepsSummary:
    """The law per step on every cell with a step (``summary.json``'s ``steps``)."""
    return steps_verdict(sweep.table, sweep.axes, sweep.sizes, sweep.folder)


def shown(s: StepsSummary) -> bool:
    """Whether some cell has a step."""
    return s.steps > 0


def _law_of(direction: str, controller: str) -> str:
    """The law a controller's step of one direction is held to, as text."""
    if direction == "up":
        over = STEP_LAWS["overshoot"] if controller == "ledger" else "0"
        return f"overshoot {over}; missing copy-seconds {STEP_LAWS['missing']}"
    wasted = STEP_LAWS["wasted"] if controller in ("ledger", "intent") else "0"
    return f"wasted deletes {wasted}; undershoot 0"


def _value(axis: str, value: Any) -> str:
    """An axis's value in a failure's row (``max_per_round`` null: no cap)."""
    return UNLIMITED if axis == "max_per_round" and value is None else plain(value)


def failure_rows(failures: Sequence[dict[str, Any]], direction: str, hide: frozenset[str]
                 ) -> tuple[list[str], list[list[Any]]] | None:
    """One direction's failures (None without any): the table's headings, and cell by cell
    its step, the law's figures against the measured ones and its other axes that vary
    among them."""
    mine = [f for f in failures if f["direction"] == direction]
    if not mine:
        return None
    fixed = ("cell", "direction", "controller", "G", "U", "B", *STEP_FIGURES)
    others = [a for a in mine[0] if a not in fixed and a not in hide
              and any(f[a] is not None for f in mine)]
    if direction == "up":
        head = ["overshoot: law", "overshoot: measured", "missing copy-s: law",
                "missing copy-s: measured"]
        figures: tuple[str, ...] = ("law", "measured", "missing_law", "missing")
    else:
        head = ["wasted deletes: law", "wasted deletes: measured", "undershoot (law: 0)"]
        figures = ("law", "measured", "undershoot")
    rows = [[f["cell"], f["controller"], f["G"], f["U"], f["B"], f["delta"], f["phase"],
             *(f[c] for c in figures), *(_value(a, f[a]) for a in others)] for f in mine]
    return ["cell", "controller", "G", "U", "B", "Δ", "φ", *head, *others], rows


def render(s: StepsSummary, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """The claim, its verdict, the counts per direction and controller, every failure
    (``templates/steps.html``)."""
    hide = context.constant
    failures = {d: failure_rows(s.law.examples, d, hide) for d in DIRECTIONS}
    return macro("steps.html", "body")(
        s, STEP_LAWS, STEP_CONTROLLERS, DIRECTIONS, UNCHECKED, SHORT, _law_of, failures,
        shlex.quote(s.folder) if s.folder is not None else None)


def glance(s: StepsSummary) -> Markup:
    """The verdict in one sentence."""
    return macro("steps.html", "glance")(s)


SECTION = Section("steps", summarize, render, glance=glance, title="The law per step",
                  checks="the law per step", shown=shown)
