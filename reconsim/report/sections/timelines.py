"""Timelines of a few telling cells, second by second (:func:`reconsim.trace`).

Four kinds of cell are picked with lazy queries over the table (the best row of a filter,
never the table sorted whole): the worst law mismatch (the largest
``|overshoot - law_overshoot|`` where the law applies), a ledger cell just below the
boundary and the cell at it in the same panel (every parameter equal but U: the largest U
below G + B, and U = G + B; delays fixed, for no single G + B places a cell whose delays
vary), and the slowest-settling cell (the longest wait from its
last scripted death, or from the start when none, to ``stable_at``). Each is rebuilt as a
:class:`~reconsim.model.params.Cell` from its parameter columns, traced by the reference
model, and checked: the trace's sums and extremes must give the table's metrics. The
trace, as its chart draws it (:func:`downsample`: at most about :data:`MAX_POINTS` rows),
is kept in the summary, so that the charts draw it without tracing the cell again.

:func:`timeline_figure` draws one trace; ``reconsim run --plot`` uses it too. A cell the
section names is named by its id (its number in the sweep's grid, :data:`~reconsim.report.
load.CELL_ID`), with the command that runs it again, ``reconsim run --from DIR --cell ID``;
a long cell's timeline shows the seconds around its event (:func:`event_window`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import altair as alt
import polars as pl
from markupsafe import Markup

from reconsim.model.controllers import registry
from reconsim.model.kinds import Cap
from reconsim.model.laws import delays_vary
from reconsim.model.metrics import METRIC_NAMES, METRICS
from reconsim.model.params import (
    CONTROLLERS,
    DEFAULTS,
    DELAY_PARAMS,
    PARAM_NAMES,
    PARAMS,
    WORLD_OWN,
    Cell,
)
from reconsim.model.trace import metrics_of, trace_cell
from reconsim.report.blocks import macro
from reconsim.report.charts import ALARM, WIDTH, Figure, finish, inline
from reconsim.report.load import CELL_ID, ROW_DEATHS, Sweep
from reconsim.report.query import (
    SEED_SETTING,
    collect,
    height,
    lazy,
    seed_schedules,
    user_params,
)
from reconsim.report.section import NOT_IN_JSON, Context, Section
from reconsim.sweep.table import unflat

#: The reference model's work to trace one cell is about (seconds) x (copies created): a
#: cell beyond this many copy-seconds is named, not traced (about 10 s of Python).
TRACE_BUDGET: Final = 20_000_000
#: Seconds drawn one by one; a longer trace is drawn in buckets of whole seconds.
MAX_POINTS: Final = 1_800
#: The copies each line counts, and their colours.
SERIES: Final = {"live": "#08306b", "ledger": "#6baed6", "pending": "#fd8d3c",
                 "terminating": "#756bb1"}
#: The counts a trace draws as lines, and the events it draws as marks.
COUNTS: Final = ("desired", "live", "ledger", "pending", "terminating")
EVENTS: Final = ("create_commands", "created", "failed_creates", "delete_commands", "deleted",
                 "wasted_deletes", "deaths")
#: Seconds of a cell's run drawn before its first death and after it settles, when the
#: run is longer than :data:`MAX_POINTS` seconds (:func:`event_window`).
MARGIN: Final = 60
#: Candidate panels examined at once when looking for a boundary pair (then 8 times more).
BOUNDARY_CANDIDATES: Final = 8


@dataclass(frozen=True, slots=True)
class Drawn:
    """A trace as its chart draws it: :func:`downsample`'s rows, the seconds per row
    (``bucket``), the cell traced, and the seconds drawn (``window``, first and last)."""

    frame: pl.DataFrame
    bucket: int
    cell: Cell
    window: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Timeline:
    """One telling cell: which kind, why it was chosen (or why there is none), its
    parameters and the table's metrics, and whether its trace gives those metrics; its id
    (``cell``: its number in the sweep's grid, None where the table does not say) and the
    seconds its timeline shows (``window``); ``drawn`` is the chart's data (None when the
    cell is not traced)."""

    kind: str
    title: str
    found: bool
    why: str
    parameters: dict[str, Any] | None = None
    metrics: dict[str, Any] | None = None
    traced: bool = False
    agrees: bool | None = None
    differing: tuple[str, ...] = ()
    cell: int | None = None
    window: tuple[int, int] | None = None
    drawn: Drawn | None = field(default=None, metadata=NOT_IN_JSON)


@dataclass(frozen=True, slots=True)
class Timelines:
    """The section's summary (``summary.json``'s ``timelines``); ``folder``, the sweep's
    folder as a command names it (None on object storage), is the page's."""

    cells: tuple[Timeline, ...]
    folder: str | None = field(default=None, metadata=NOT_IN_JSON)


# --- picking the cells ---

def _numeric_axes(sweep: Sweep) -> list[str]:
    """The numeric axes: a row's key that costs no computing (the flattened list columns
    and the hidden helper columns of :mod:`~reconsim.report.load` cost seconds per 10^7
    rows, so a query over every row never asks for them)."""
    schema = lazy(sweep.table).collect_schema()
    return [a for a in sweep.axes if schema[a].is_numeric()]


def _row_columns(sweep: Sweep) -> list[str]:
    """What a chosen row is read with: its axes, parameters, metrics and law prediction."""
    wanted = {*sweep.axes, *PARAM_NAMES, *METRIC_NAMES, "law_overshoot", ROW_DEATHS, CELL_ID}
    return [c for c in lazy(sweep.table).collect_schema().names() if c in wanted]


def _best(sweep: Sweep, query: pl.LazyFrame, rank: pl.Expr,
          extra: Sequence[str] = ()) -> dict[str, Any] | None:
    """The row of ``query`` with the smallest ``rank`` (ties: the smallest numeric axes,
    then the other axes), or None. Two passes: the best rank and numeric axes (only those
    columns computed), then the few rows holding them, in full."""
    numeric = _numeric_axes(sweep)
    ranked = lazy(query).with_columns(rank.alias("__rank")).filter(
        pl.col("__rank").is_not_null())
    key = collect(ranked.select("__rank", *numeric).bottom_k(1, by=["__rank", *numeric]))
    if key.height == 0:
        return None
    best = key.row(0, named=True)
    rows = collect(ranked.filter(*(pl.col(c).eq_missing(best[c]) for c in ["__rank", *numeric]))
                   .select(*_row_columns(sweep), "__rank", *extra))
    return rows.sort(list(sweep.axes), nulls_last=False).row(0, named=True)


def worst_law_mismatch(sweep: Sweep) -> Timeline:
    """The cell whose overshoot is farthest from the law's prediction."""
    title = "The worst law mismatch"
    law = lazy(sweep.table).filter(pl.col("law_overshoot").is_not_null())
    gap = (pl.col("overshoot") - pl.col("law_overshoot")).abs()
    row = _best(sweep, law.filter(gap > 0), -gap)
    if row is None:
        covered = int(collect(law.select(pl.len())).item())
        why = ("No cell is in the law's scope." if covered == 0 else
               f"The law holds in all {covered:,} cells it covers: no mismatch to show.")
        return Timeline("law_mismatch", title, False, why)
    return _timeline(sweep, row, "law_mismatch", title, (
        f"Its overshoot, {row['overshoot']}, is {abs(row['overshoot'] - row['law_overshoot'])} "
        f"from the law's {row['law_overshoot']}: the largest gap among the cells the law "
        "covers."))


def _seed_distance(sweep: Sweep, columns: Sequence[str]) -> pl.Expr:
    """How many of ``columns`` differ from seed 001's setting, plus one if the schedule's
    deaths are not the seed's: a small score picks a familiar cell."""
    terms = [(~pl.col(a).eq_missing(pl.lit(SEED_SETTING[a]))).cast(pl.Int64)
             for a in columns if a in SEED_SETTING]
    terms.append((~pl.col("schedule").is_in(seed_schedules(sweep.schedules))).cast(pl.Int64))
    return pl.sum_horizontal(terms)


def boundary_pair(sweep: Sweep) -> tuple[Timeline, Timeline]:
    """A ledger cell at the boundary (U = G + B) and the one just below it in its panel
    (every other axis equal, the largest U < G + B), seed 001's setting preferred; both
    with fixed delays (where they vary, no single G + B places a cell)."""
    below_t, at_t = "Just below the boundary", "At the boundary"
    numeric = _numeric_axes(sweep)
    panel = [a for a in sweep.axes if a != "U"]
    ledger = lazy(sweep.table).filter(pl.col("controller") == "ledger",
                                      ~delays_vary(stored=True))
    gb = pl.col("G") + pl.col("B")
    # The law's own cells first, then the cell nearest seed 001's setting.
    cheap = [a for a in (*numeric, "observe") if a in sweep.axes and a != "U"]
    score = (pl.col("law_overshoot").is_null().cast(pl.Int64) * 1000
             + _seed_distance(sweep, cheap)).alias("__rank")
    at = ledger.filter(pl.col("U") == gb, gb >= 2).with_columns(score)
    n = BOUNDARY_CANDIDATES
    for _ in range(3):
        # The best n numeric keys, then their rows in full and the rows below them.
        keys = collect(at.select("__rank", *numeric).bottom_k(n, by=["__rank", *numeric]))
        if keys.height == 0:
            break
        of_key = pl.any_horizontal(
            pl.all_horizontal(pl.col(a).eq_missing(v) for a, v in key.items() if a != "U")
            for key in keys.drop("__rank").iter_rows(named=True))
        candidates = collect(at.filter(of_key).select(*_row_columns(sweep), "__rank")).sort(
            ["__rank", *sweep.axes], nulls_last=False)
        below = collect(ledger.filter(pl.col("U") < gb, of_key).select(*_row_columns(sweep)))
        for cand in candidates.iter_rows(named=True):
            match = below.filter(*(pl.col(a).eq_missing(cand[a]) for a in panel))
            if match.height:
                lower = match.sort("U").row(-1, named=True)
                return (_timeline(sweep, lower, "below_boundary", below_t, (
                            f"U = {lower['U']}, the largest period below G + B = "
                            f"{lower['G'] + lower['B']} in its panel (every other parameter "
                            "as in the next cell)." + _law_text(lower))),
                        _timeline(sweep, cand, "above_boundary", at_t, (
                            f"U = G + B = {cand['U']}: the first period on the boundary, in "
                            "the panel of the previous cell." + _law_text(cand))))
        if keys.height < n:
            break
        n *= 8
    why = ("No ledger cell has U = G + B with a smaller U beside it in its panel "
           "(every other parameter equal).")
    if height(lazy(sweep.table).filter(pl.col("controller") == "ledger",
                                       delays_vary(stored=True))):
        why += (" Ledger cells whose delays vary are not looked at: no single G + B places "
                "them (the boundary section places them by their worst case).")
    return Timeline("below_boundary", below_t, False, why), Timeline(
        "above_boundary", at_t, False, why)


def _law_text(row: Mapping[str, Any]) -> str:
    law = row.get("law_overshoot")
    if law is None:
        return f" Measured overshoot: {row['overshoot']} (outside the law's scope)."
    return f" The law predicts an overshoot of {law}; measured: {row['overshoot']}."


def slowest_settling(sweep: Sweep) -> Timeline:
    """The cell that takes longest to settle after its last scripted death (from the start
    when it has none), among the cells that settle."""
    title = "The slowest-settling cell"
    settle = pl.col("stable_at") - pl.col("__last_death")
    query = lazy(sweep.table).filter(pl.col("stable_at").is_not_null()).with_columns(
        _last_death().alias("__last_death"))
    row = _best(sweep, query, -settle, extra=("__last_death",))
    if row is None:
        return Timeline("slowest_settling", title, False,
                        "No cell settles: every one ends with live \u2260 desired.")
    since = (f"its last scripted death at second {row['__last_death']}"
             if row["__last_death"] else "the start")
    return _timeline(sweep, row, "slowest_settling", title, (
        f"Stable from second {row['stable_at']}, {row['stable_at'] - row['__last_death']} s "
        f"after {since}: the longest wait among the cells that settle."))


def _last_death() -> pl.Expr:
    """A row's last scripted death at or before its end, 0 with none: from the row's own
    deaths (a random schedule's differ from seed to seed)."""
    after_end = (pl.col(ROW_DEATHS).list.eval(pl.element().struct.field("at"))
                 - pl.col("duration"))  # <= 0 within the run
    last = after_end.list.eval(pl.when(pl.element() <= 0).then(pl.element())).list.max()
    return (last + pl.col("duration")).fill_null(0)


# --- a row back to its cell ---

def deaths_of(sweep: Sweep, schedule: str, duration: int) -> tuple[tuple[int, int], ...]:
    """A cell's death events from its schedule's name: the spec's events as listed (also
    those after the end, which count in ``unneeded``) for an explicit schedule; for a
    periodic or random one, its longest run's events up to this cell's duration (a shorter
    run's events are a prefix of a longer one's)."""
    events = sweep.schedules.get(schedule, ())
    spec = sweep.meta.get("spec")
    declared = spec.get("schedule", {}).get(schedule) if isinstance(spec, dict) else None
    if isinstance(declared, dict) and ("every" in declared or "rate" in declared):
        return tuple((at, count) for at, count in events if at <= duration)
    return tuple(events)


def cell_of(sweep: Sweep, row: Mapping[str, Any]) -> Cell:
    """The :class:`Cell` of a row of ``sweep.table`` (axes flattened as the report shows
    them: lists as ``a,b`` or ``none``, records as JSON); a null is a parameter that does
    not apply (its default), or no cap."""
    return Cell(**_cell_params(sweep, row))


def _cell_params(sweep: Sweep, row: Mapping[str, Any]) -> dict[str, Any]:
    """The cell parameters of a row, as :func:`cell_of` reads them (unchecked): its own
    deaths where the row holds them (a random schedule's differ from seed to seed), else
    its schedule's."""
    own = row.get(ROW_DEATHS)
    params: dict[str, Any] = {"deaths": deaths_of(sweep, row["schedule"], row["duration"])
                              if own is None else tuple((e["at"], e["count"]) for e in own)}
    for p in PARAMS:
        if p.name == "deaths" or p.name not in row:
            continue
        value = row[p.name]
        if value is None:
            if isinstance(p.kind, Cap):
                params[p.name] = None
            continue
        params[p.name] = unflat(p.kind, value)
    return params


def _parameters(cell: Cell) -> dict[str, Any]:
    """A cell's parameters as JSON values (records as lists); a user's controller's
    parameters among them, by name."""
    values = dataclasses.asdict(cell)
    values |= dict(values.pop("options"))
    return json.loads(json.dumps(_without_empty_tables(  # type: ignore[no-any-return]
        _without_other_worlds(values, cell.controller))))


#: The delay table parameters, by name.
DELAYS_BY_NAME: Final = frozenset(p.name for p in DELAY_PARAMS)


def _without_empty_tables(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` without the delay tables a cell does not have (its spreads say it all)."""
    return {k: v for k, v in values.items()
            if not (k in DELAYS_BY_NAME and (v is None or len(v) == 0))}


def _row_parameters(sweep: Sweep, row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's parameters as :func:`_parameters` gives a cell's, from the table alone: the
    cell's (defaults where the table has none), then its user's controller's, by name."""
    values = dict(DEFAULTS) | _cell_params(sweep, row) | {
        name: row[name] for name in user_params(row) if row[name] is not None}
    return json.loads(json.dumps(_without_empty_tables(  # type: ignore[no-any-return]
        _without_other_worlds(values, row["controller"]))))


def _without_other_worlds(values: dict[str, Any], controller: str) -> dict[str, Any]:
    """``values`` without the parameters of a world the controller does not run in (a
    rolling update's, for a controller of rounds)."""
    return {k: v for k, v in values.items()
            if k not in WORLD_OWN or WORLD_OWN[k].applies_to(controller)}


def _timeline(sweep: Sweep, row: Mapping[str, Any], kind: str, title: str,
              why: str) -> Timeline:
    """A chosen row, traced when it fits the budget and checked against its metrics. A
    user's controller's row is not traced: the report runs no code its table names (the
    module that defines the controller may not even be there)."""
    world = registry.get(row["controller"]).world if row["controller"] in CONTROLLERS else None
    metrics = {m.name: row[m.name] for m in METRICS if m.world is None or m.world == world}
    id = row.get(CELL_ID)
    if row["controller"] not in CONTROLLERS:
        return Timeline(kind, title, True, why + (
            f" Not traced here: {row['controller']} is a user's controller, and a report "
            "runs no code its table names; the command below runs it (add --plot FILE to "
            "draw it)."), _row_parameters(sweep, row), metrics, cell=id)
    try:
        cell = cell_of(sweep, row)
    except ValueError as exc:  # a table from another version, or written by hand
        return Timeline(kind, title, True, f"{why} Its parameters make no cell today ({exc}).",
                        None, metrics, cell=id)
    window = event_window(cell, row["stable_at"])
    work = (cell.duration + 1) * (int(row["created"]) + 1)
    if work > TRACE_BUDGET:
        return Timeline(kind, title, True, why + (
            f" Too large to trace here ({work:,} copy-seconds); the command below runs it "
            "(add --plot FILE to draw it)."), _parameters(cell), metrics, cell=id,
            window=window)
    frame = trace_cell(cell)
    derived = metrics_of(frame, cell)
    # (a world's own metrics come from its run, not from the trace's sums)
    differing = tuple(m.name for m in METRICS
                      if m.world is None and derived[m.name] != metrics[m.name])
    return Timeline(kind, title, True, why, _parameters(cell), metrics, True,
                    not differing, differing, id, window, drawn_trace(frame, cell, window))


def summarize(sweep: Sweep) -> Timelines:
    """The telling cells (``summary.json``'s ``timelines``), each traced once: its drawn
    trace is the chart's data."""
    below, above = boundary_pair(sweep)
    return Timelines((worst_law_mismatch(sweep), below, above, slowest_settling(sweep)),
                     sweep.folder)


def event_window(cell: Cell, stable_at: int | None) -> tuple[int, int]:
    """The seconds a cell's timeline shows: the whole run when it lasts at most
    :data:`MAX_POINTS` seconds; a longer one from :data:`MARGIN` seconds before its first
    death (the start when none) to :data:`MARGIN` seconds after it settles (``stable_at``;
    the end when it never does), within the run."""
    if cell.duration <= MAX_POINTS:
        return 0, cell.duration
    first = min((at for at, _ in cell.deaths if at <= cell.duration), default=0)
    settled = cell.duration if stable_at is None else stable_at
    start = max(0, first - MARGIN)
    return start, max(start, min(cell.duration, settled + MARGIN))


def run_command(folder: str, cell: int) -> str:
    """The command that runs cell ``cell`` of the sweep in ``folder`` again.

    >>> run_command("results/default", 12)
    'reconsim run --from results/default --cell 12'
    """
    return f"reconsim run --from {shlex.quote(folder)} --cell {cell}"


def heading(cell: Cell, id: int | None = None) -> str:
    """A timeline's title, a line: the cell's id (when known), controller, U, G and B.

    >>> heading(Cell(G=20, U=15, B=5), 12)
    'Cell 12: ledger, U = 15, G = 20, B = 5'
    """
    named = f"{cell.controller}, U = {cell.U}, G = {cell.G}, B = {cell.B}"
    return named if id is None else f"Cell {id}: {named}"


# --- drawing ---

def downsample(frame: pl.DataFrame, max_points: int = MAX_POINTS) -> tuple[pl.DataFrame, int]:
    """A trace as drawn: every second when it has at most ``max_points``, else buckets of
    ``k`` whole seconds (t is the first): each count's largest value, the commands, deaths
    and rounds summed. Then only the seconds where something happens or a count changes
    are kept (and the last): drawn as steps, the lines are the same. Returns the frame and
    ``k``."""
    k = 1
    drawn = frame.with_columns(pl.col("round").cast(pl.Int64).alias("rounds"))
    if frame.height > max_points:
        k = math.ceil(frame.height / (max_points // 2))
        drawn = frame.group_by((pl.col("t") // k) * k, maintain_order=True).agg(
            *(pl.col(c).max() for c in COUNTS), *(pl.col(c).sum() for c in EVENTS),
            pl.col("round").sum().cast(pl.Int64).alias("rounds"),
        ).with_columns((pl.col("rounds") > 0).alias("round"))
    changed = pl.any_horizontal(pl.col(c).ne_missing(pl.col(c).shift(1)) for c in COUNTS)
    last = pl.int_range(pl.len()) == pl.len() - 1
    return drawn.filter(changed | pl.col("round") | (pl.col("deaths") > 0) | last), k


def drawn_trace(frame: pl.DataFrame, cell: Cell, window: tuple[int, int] | None = None
                ) -> Drawn:
    """A cell's trace as its chart draws it: the seconds of ``window`` (first and last,
    both drawn; default the whole run), :func:`downsample`d."""
    window = (0, cell.duration) if window is None else window
    shown = frame.filter(pl.col("t").is_between(*window))
    return Drawn(*downsample(shown), cell, window)


def timeline_figure(frame: pl.DataFrame, cell: Cell, name: str, title: str,
                    window: tuple[int, int] | None = None) -> Figure:
    """One cell second by second (``frame``: its trace, :func:`~reconsim.model.trace.
    trace_cell`), the seconds of ``window`` (default the whole run): desired (dashed),
    live, ledger, pending and (with grace) terminating copies as steps; scripted deaths as
    red rules; below, each round's create commands up and delete commands down, the wasted
    ones red, a tick for every round. ``title`` is one line."""
    return drawn_figure(drawn_trace(frame, cell, window), name, title)


def drawn_figure(data: Drawn, name: str, title: str, heading: str | None = None) -> Figure:
    """:func:`timeline_figure` of a trace already drawn (:func:`drawn_trace`): the figure
    named ``title``, its chart titled ``heading`` (default ``title``), a line."""
    drawn, k, cell = data.frame, data.bucket, data.cell
    first, last = data.window
    series: list[Any] = [s for s in SERIES if s != "terminating" or cell.grace > 0]
    columns = ["t", "desired", *series, "rounds", "round", "create_commands", "created",
               "failed_creates", "delete_commands", "deleted", "wasted_deletes", "deaths"]
    drawn = drawn.select(columns).with_columns(
        (-pl.col("delete_commands")).alias("down"), (-pl.col("deleted")).alias("down_ok"))
    x = alt.X("t:Q", title="second" if k == 1 else f"second ({k}-second buckets)",
              scale=alt.Scale(domain=[first, max(first + 1, last)], nice=False))
    highest = drawn.select(pl.max_horizontal("desired", *series).max().alias("copies"),
                           pl.col("create_commands").max(), pl.col("delete_commands").max())
    copies, up, down = (int(v or 0) for v in highest.row(0))
    whole = _whole_axis(0, copies)
    whole_commands = _whole_axis(-down, up)
    second = alt.Tooltip("t:Q", title="second" if k == 1 else f"from second (+{k - 1})")
    lines = alt.Chart().transform_fold(series, as_=["copies", "count"]).mark_line(
        interpolate="step-after", strokeWidth=1.5).encode(
        x=x, y=alt.Y("count:Q", title="copies", axis=whole),
        color=alt.Color("copies:N", scale=alt.Scale(domain=series,
                                                    range=[SERIES[s] for s in series]),
                        legend=alt.Legend(orient="top", title=None)),
        tooltip=[second, *(alt.Tooltip(f"{s}:Q") for s in ["desired", *series])])
    # desired as the step it is (a level line where the cell has no scale schedule)
    desired = alt.Chart().mark_line(color="#222", strokeDash=[5, 3], interpolate="step-after",
                                    strokeWidth=1.2).encode(
        x=x, y=alt.Y("desired:Q", axis=whole))
    deaths = alt.Chart().transform_filter(alt.datum.deaths > 0).mark_rule(
        color=ALARM, strokeWidth=1.5).encode(
        x=x, tooltip=[second, alt.Tooltip("deaths:Q", title="copies killed")])
    # A layer whose filter leaves nothing makes Vega warn (an infinite extent): only
    # layers with marks are drawn.
    def some(column: str) -> bool:
        return bool((drawn[column] > 0).any())

    copies_chart = alt.layer(lines, desired, *[deaths][:some("deaths")]).properties(
        width=WIDTH, height=220)
    command = [second, alt.Tooltip("rounds:Q"), alt.Tooltip("create_commands:Q"),
               alt.Tooltip("created:Q"), alt.Tooltip("failed_creates:Q"),
               alt.Tooltip("delete_commands:Q"), alt.Tooltip("deleted:Q"),
               alt.Tooltip("wasted_deletes:Q")]
    acted = alt.datum.create_commands + alt.datum.delete_commands > 0
    creates = alt.Chart().transform_filter(alt.datum.create_commands > 0).mark_rule(
        color=SERIES["live"], strokeWidth=2).encode(
        x=x, y=alt.Y("create_commands:Q", title="commands", axis=whole_commands),
        y2=alt.datum(0), tooltip=command)
    useful = alt.Chart().transform_filter(alt.datum.deleted > 0).mark_rule(
        color="#888", strokeWidth=2).encode(
        x=x, y=alt.Y("down_ok:Q", axis=whole_commands), y2=alt.datum(0), tooltip=command)
    wasted = alt.Chart().transform_filter(alt.datum.wasted_deletes > 0).mark_rule(
        color=ALARM, strokeWidth=2).encode(
        x=x, y=alt.Y("down:Q", axis=whole_commands), y2="down_ok:Q", tooltip=command)
    rounds = alt.Chart().transform_filter(alt.datum.round & ~acted).mark_tick(
        color="#bbb", thickness=1, size=6).encode(x=x, y=alt.datum(0), tooltip=command)
    idle = bool((drawn["round"] & (drawn["create_commands"] + drawn["delete_commands"] == 0))
                .any())
    layers = [layer for layer, present in ((rounds, idle), (creates, some("create_commands")),
                                           (useful, some("deleted")),
                                           (wasted, some("wasted_deletes"))) if present]
    bottom = alt.layer(*layers).properties(width=WIDTH, height=110)
    chart = alt.vconcat(copies_chart, bottom, data=inline(drawn)).resolve_scale(x="shared")
    note = ("Dashed: desired; red rules: scripted deaths. Below: create commands up, delete "
            "commands down (red: wasted); grey ticks: idle rounds.")
    if (first, last) != (0, cell.duration):
        note += f" Seconds {first:,} to {last:,} of {cell.duration:,}."
    if k > 1:
        note += f" Each point is {k} seconds (the largest count, events summed)."
    return Figure(name, title, finish(chart, heading or title, note),
                  {"bucket": k, "marks": drawn.height + len(series)})


def _whole_axis(lo: int, hi: int) -> alt.Axis:
    """An axis of whole copies or commands: each value labelled when there are few, else
    Vega's ticks with at least 1 between them (never a tick at half a copy)."""
    if hi - lo <= 10:
        return alt.Axis(values=list(range(lo, hi + 1)), format="d")
    return alt.Axis(tickMinStep=1, format="d")




def charts(t: Timelines, context: Context) -> list[Figure]:
    """One timeline per traced cell, from the trace its summary keeps (no query, no trace)."""
    return [drawn_figure(e.drawn, f"timeline_{e.kind}", e.title, heading(e.drawn.cell, e.cell))
            for e in t.cells if e.drawn is not None]


def render(t: Timelines, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """Each telling cell: why it was chosen, its timeline, and whether it gives the table's
    figures (``templates/timelines.html``)."""
    return macro("timelines.html", "body")(t, figures, run_command)


SECTION = Section("timelines", summarize, render, charts,
                  title="Timelines of telling cells", lettered=False)
