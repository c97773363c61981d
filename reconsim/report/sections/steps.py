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
from reconsim.report.charts import Figure
from reconsim.report.load import CELL_ID, Sweep
from reconsim.report.query import Table, collect, in_order, lazy
from reconsim.report.section import NOT_IN_JSON, Context, Section
from reconsim.web.html import folded, plain, share, table, verdict
from reconsim.words import plural

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
class StepFailure:
    """A cell where the law per step fails: its id (null where the report cannot say), its
    step and the law's figures against the measured ones; ``axes``, its other axes that
    take several values in the sweep."""

    cell: int | None
    direction: str
    controller: str
    G: int
    U: int
    B: int
    delta: int
    phase: int
    law: int
    measured: int | None
    missing_law: int | None
    missing: int | None
    undershoot: int | None
    axes: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StepsSummary:
    """``summary.json``'s ``steps``: the cells with a step (``steps``), those the law
    checks, holds on and fails on, the unchecked ones by reason, the same per direction
    and controller (``groups``) and the failures, cell by cell (the first
    :data:`MAX_LISTED` by cell id). Left out of the page where no cell has a step."""

    steps: int
    checked: int
    held: int
    failed: int
    unchecked: dict[str, int]
    groups: tuple[StepGroup, ...]
    failures: tuple[StepFailure, ...]
    #: The sweep's folder as a command names it, for the command that runs a cell again.
    folder: str | None = field(default=None, metadata=NOT_IN_JSON)


def _none() -> StepsSummary:
    return StepsSummary(steps=0, checked=0, held=0, failed=0, unchecked={}, groups=(),
                        failures=())


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
    return StepsSummary(
        steps=sum(g.steps for g in groups), checked=sum(g.checked for g in groups),
        held=sum(g.held for g in groups), failed=failed,
        unchecked={k: n for k in UNCHECKED
                   if (n := sum(g.unchecked.get(k, 0) for g in groups))},
        groups=groups, failures=_failures(stepped, axes, sizes) if failed else (),
        folder=folder)


def _failures(stepped: pl.LazyFrame, axes: Sequence[str],
              sizes: Mapping[str, int] | None) -> tuple[StepFailure, ...]:
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
    return tuple(StepFailure(**{k: r[k] for k in ("cell", "direction", *shown, *STEP_FIGURES)},
                             axes={a: r[a] for a in others})
                 for r in rows.iter_rows(named=True))


def summarize(sweep: Sweep) -> StepsSummary:
    """The law per step on every cell with a step (``summary.json``'s ``steps``)."""
    return steps_verdict(sweep.table, sweep.axes, sweep.sizes, sweep.folder)


def shown(s: StepsSummary) -> bool:
    """Whether some cell has a step."""
    return s.steps > 0


def unchecked_text(unchecked: Mapping[str, int]) -> str:
    """The unchecked steps by reason, in words: "12 with a cap on corrections per round
    (max_per_round), 40 with a death event at or before the step"."""
    return ", ".join(f"{n:,} with {UNCHECKED[k]}" for k, n in unchecked.items())


def _direction_text(s: StepsSummary, direction: str) -> str | None:
    """One direction's figures in one sentence (None without such steps)."""
    mine = [g for g in s.groups if g.direction == direction]
    steps = sum(g.steps for g in mine)
    if not steps:
        return None
    checked = sum(g.checked for g in mine)
    failed = sum(g.failed for g in mine)
    name = "steps up" if direction == "up" else "steps down"
    text = f"{steps:,} {name}: {checked:,} checked"
    if checked:
        text += (f", the law holds on all {checked:,}" if not failed else
                 f", the law fails on {failed:,} ({share(failed, checked)}) and holds on "
                 f"{checked - failed:,}")
    per = [f"{g.controller} {g.failed:,} of {g.checked:,}" for g in mine if g.failed]
    if per:
        text += f" (failures by controller: {', '.join(per)})"
    return text + "."


def steps_paragraphs(s: StepsSummary) -> tuple[str, list[Markup]]:
    """The verdict in words: its kind and its paragraphs."""
    n, m = s.checked, s.failed
    rest = s.steps - n
    skipped = (f" {rest:,} further {plural(rest, 'step')} {'is' if rest == 1 else 'are'} not "
               f"checked, for the law says nothing of them: {unchecked_text(s.unchecked)}."
               if rest else "")
    if n == 0:
        out = [Markup("This sweep has {:,} {}, none of which the law covers, so it is not "
                      "checked.{}").format(s.steps, plural(s.steps, "step"), skipped)]
        kind = "none"
    elif m == 0:
        out = [Markup("<strong>The law per step holds on all {:,} steps it checks</strong>: on "
                      "every one, the measured figures equal the law's.{}").format(n, skipped)]
        kind = "holds"
    else:
        out = [Markup("<strong>The law per step fails on {:,} of {:,} steps it checks ({})"
                      "</strong>; it holds on the other {:,}.{}").format(
                          m, n, share(m, n), n - m, skipped)]
        kind = "fails"
    out += [Markup(t) for d in DIRECTIONS if (t := _direction_text(s, d)) is not None]
    return kind, out


def _law_of(direction: str, controller: str) -> str:
    """The law a controller's step of one direction is held to, as text."""
    if direction == "up":
        over = STEP_LAWS["overshoot"] if controller == "ledger" else "0"
        return f"overshoot {over}; missing copy-seconds {STEP_LAWS['missing']}"
    wasted = STEP_LAWS["wasted"] if controller in ("ledger", "intent") else "0"
    return f"wasted deletes {wasted}; undershoot 0"


def groups_table(s: StepsSummary) -> Markup:
    """Per direction and controller: the law, the steps, checked, held, failed, unchecked."""
    def reasons(g: StepGroup) -> str:
        return ", ".join(f"{n:,} {SHORT.get(k, k)}" for k, n in g.unchecked.items()) or "\u2014"

    return table(["step", "controller", "the law", "steps", "checked", "holds", "fails",
                  "not checked"],
                 ([DIRECTIONS[g.direction], g.controller, _law_of(g.direction, g.controller),
                   g.steps, g.checked, g.held, g.failed, reasons(g)] for g in s.groups))


def failures_table(failures: Sequence[StepFailure], direction: str,
                   hide: frozenset[str]) -> Markup:
    """One direction's failures, cell by cell."""
    mine = [f for f in failures if f.direction == direction]
    others = [a for a in (mine[0].axes if mine else {})
              if a not in hide and any(f.axes[a] is not None for f in mine)]
    if direction == "up":
        head = ["overshoot: law", "overshoot: measured", "missing copy-s: law",
                "missing copy-s: measured"]
        figures: tuple[str, ...] = ("law", "measured", "missing_law", "missing")
    else:
        head = ["wasted deletes: law", "wasted deletes: measured", "undershoot (law: 0)"]
        figures = ("law", "measured", "undershoot")
    rows = ([f.cell, f.controller, f.G, f.U, f.B, f.delta, f.phase,
             *(getattr(f, c) for c in figures), *(_value(a, f.axes[a]) for a in others)]
            for f in mine)
    return table(["cell", "controller", "G", "U", "B", "Δ", "φ", *head, *others], rows,
                 missing="\u2014")


def _value(axis: str, value: Any) -> str:
    """An axis's value in a failure's row (``max_per_round`` null: no cap)."""
    return UNLIMITED if axis == "max_per_round" and value is None else plain(value)


def render(s: StepsSummary, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """The claim, its verdict, the counts per direction and controller, every failure."""
    kind, paragraphs = steps_paragraphs(s)
    controllers = ", ".join(STEP_CONTROLLERS)
    parts = [
        Markup("<p>A change of desired by Δ copies at second a (a <em>step</em>) from a settled "
               "start (every copy listed, nothing pending) is seed 001's experiment again, with "
               "Δ in place of desired. The first round at or after a comes φ = (&minus;a) mod U "
               "seconds later (the step's <em>phase</em>), sees the settled count and corrects "
               "by Δ; a new copy is listed L = G + B seconds after its creation (G where "
               "observe = created). The law, derived for the controllers that decide in rounds "
               "({controllers}), on each cell's first change of desired:</p><ul>"
               "<li><strong>a step up</strong> (Δ &gt; 0): ledger keeps seeing the old count "
               "until the new copies are listed and creates Δ again at each of the next "
               "⌈L / U⌉ &minus; 1 rounds: it overshoots by <code>{over}</code>; intent and "
               "expectations, which remember what they asked for, by 0. All three miss "
               "<code>{missing}</code> copy-seconds: the new copies are missing from a until "
               "they are ready, B seconds after the first round;</li>"
               "<li><strong>a step down</strong> (Δ &lt; 0): the first round deletes |Δ| "
               "copies, whose entries stay on the ledger G more seconds; ledger and intent "
               "delete |Δ| again at each of the next ⌈G / U⌉ &minus; 1 rounds, to the same removed "
               "copies: <code>{wasted}</code> wasted delete commands (delete_commands &minus; "
               "deleted); expectations waits until its deletions are observed: none. No "
               "controller undershoots.</li></ul>"
               "<p>The measured figures are the cell's own: the overshoot, undershoot and "
               "missing copy-seconds of the step's record in <code>responses</code> (over its "
               "window, to the next event or the end) and the run's wasted delete commands. "
               "The law is checked on every cell with a step where it applies; a cell it "
               "says nothing of is counted by reason below, never left out silently. "
               "{steps:,} cells have a step.</p>").format(
                   controllers=controllers, over=STEP_LAWS["overshoot"],
                   missing=STEP_LAWS["missing"], wasted=STEP_LAWS["wasted"], steps=s.steps),
        verdict(kind, paragraphs),
        groups_table(s),
    ]
    if s.failures:
        hide = context.constant
        listed = len(s.failures)
        parts.append(Markup("<h3>Every failure</h3><p>Each cell where the law fails, by its "
                            "id (its number in the sweep's grid){}{}.</p>").format(
            Markup("; it runs again with <code>reconsim run --from {} --cell ID</code>")
            .format(shlex.quote(s.folder)) if s.folder is not None else "",
            f"; the first {listed:,} of {s.failed:,} by id" if listed < s.failed else ""))
        for direction in DIRECTIONS:
            n = sum(1 for f in s.failures if f.direction == direction)
            if n:
                parts += [Markup("<h4>On a {}</h4>").format(DIRECTIONS[direction]),
                          folded(failures_table(s.failures, direction, hide), n,
                                 f"failures on a {DIRECTIONS[direction]}", limit=40)]
    return Markup("").join(parts)


def glance(s: StepsSummary) -> Markup | None:
    """The verdict in one sentence."""
    link = Markup('<a href="#steps">The law per step</a>')
    if s.checked == 0:
        return link + Markup(": not checked ({:,} {}, none it covers).").format(
            s.steps, plural(s.steps, "step"))
    if s.failed == 0:
        return link + Markup(": holds on all {:,} steps it checks ({:,} not checked).").format(
            s.checked, s.steps - s.checked)
    return link + Markup(": <strong>fails on {:,} of {:,} steps it checks ({})</strong> "
                         "({:,} not checked).").format(s.failed, s.checked,
                                                      share(s.failed, s.checked),
                                                      s.steps - s.checked)


SECTION = Section("steps", summarize, render, glance=glance, title="The law per step",
                  checks="the law per step", shown=shown)
