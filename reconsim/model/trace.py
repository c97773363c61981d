"""One cell second by second: the reference model's per-second trace, as a polars frame.

:func:`trace` runs :func:`~reconsim.model.reference.run_reference` with an observer and
keeps one row per second t = 0 … duration, taken at the end of the second (after the
world's step 8). Columns:

* ``t`` — the second; ``desired`` — copies that should run in it (the scale schedule's);
* ``live`` — copies running (step 8's sample: ready, not yet dead; terminating ones count);
* ``ledger`` — entries the ledger lists at the end of second t, as it stands (no lag);
* ``pending`` — copies created and not removed that the ledger does not list yet
  (starting, or ready and not yet listed): what a loop that trusts the ledger cannot see,
  whatever the controller remembers;
* ``terminating`` — live copies a delete command has removed, running out their
  ``grace`` (always 0 when grace is 0);
* ``round`` — whether a round ran at t (periodic or watch-triggered);
* ``read`` — entries of this service the round read (stale inside a lag window; without
  ``ledger_base``); null when no round ran;
* ``create_commands``, ``created``, ``failed_creates`` — create commands the round issued,
  copies they created (lost replies included) and commands that failed;
* ``delete_commands``, ``deleted``, ``wasted_deletes`` — delete commands the round
  issued, those that removed a copy, and the rest (the derived figure of
  :data:`reconsim.model.metrics.DERIVED`, ``delete_commands - deleted``: sent to a copy
  already removed, or beyond the entries the read listed);
* ``deaths`` — copies the scripted deaths killed at t (fewer than scheduled when fewer
  were live).

Every metric of :func:`reconsim.run_cell` follows from sums and extremes of these columns
(:func:`metrics_of`); the tests check that they agree for random cells.
"""

from __future__ import annotations

from typing import Any, Final

import polars as pl

from reconsim.model import metrics, rolling
from reconsim.model.controllers import registry
from reconsim.model.copies import after_metrics
from reconsim.model.params import Cell, make_cell, takes_cell_keywords
from reconsim.model.reference import Second, run_reference

#: The trace's columns and their dtypes, in order.
SCHEMA: Final[dict[str, pl.DataType]] = {
    "t": pl.Int64(), "desired": pl.Int64(), "live": pl.Int64(), "ledger": pl.Int64(),
    "pending": pl.Int64(), "terminating": pl.Int64(), "round": pl.Boolean(),
    "read": pl.Int64(), "create_commands": pl.Int64(), "created": pl.Int64(),
    "failed_creates": pl.Int64(), "delete_commands": pl.Int64(), "deleted": pl.Int64(),
    "wasted_deletes": pl.Int64(), "deaths": pl.Int64(),
}

#: The columns read off the reference model, second by second: the others are derived.
_OBSERVED: Final = {name: dtype for name, dtype in SCHEMA.items() if name != "wasted_deletes"}

#: Running totals of the reference model that become per-second columns (column: total).
_PER_SECOND: Final = {"create_commands": "create_commands", "created": "created",
                      "failed_creates": "failed_creates", "delete_commands": "delete_commands",
                      "deleted": "deleted", "deaths": "killed"}


@takes_cell_keywords
def trace(**params: Any) -> pl.DataFrame:
    """One cell second by second: one row per second ``t = 0 … duration`` (columns in the
    module's docstring). Keyword arguments are the fields of :class:`reconsim.Cell`, as
    for :func:`reconsim.run_cell`; a bad value raises ``ValueError`` naming it.

    >>> frame = trace(G=20, duration=60)
    >>> frame.height, int(frame["live"].max()), int(frame["created"].sum())
    (61, 12, 12)
    """
    return trace_cell(make_cell(**params))


def trace_cell(cell: Cell) -> pl.DataFrame:
    """:func:`trace` of a :class:`~reconsim.model.params.Cell`."""
    if registry.get(cell.controller).world == "deployment":
        return _deployment_trace(cell)
    rows: dict[str, list[Any]] = {name: [] for name in _OBSERVED}
    before = dict.fromkeys(_PER_SECOND.values(), 0)

    def observe(s: Second) -> None:
        t = s.t
        ledger = pending = terminating = 0
        for c in s.copies:
            if c.on_ledger(t):
                ledger += 1
            elif c.pending(t):
                pending += 1
            if c.death is not None and c.runs(t):  # removed, running
                terminating += 1
        for column, total in _PER_SECOND.items():
            rows[column].append(s.totals[total] - before[total])
            before[total] = s.totals[total]
        rows["t"].append(t)
        rows["desired"].append(s.desired)
        rows["live"].append(s.live)
        rows["ledger"].append(ledger)
        rows["pending"].append(pending)
        rows["terminating"].append(terminating)
        rows["round"].append(s.read is not None)
        rows["read"].append(None if s.read is None else len(s.read))

    run_reference(cell, on_second=observe)
    return pl.DataFrame(rows, schema=_OBSERVED).with_columns(
        metrics.derived("wasted_deletes")).select(list(SCHEMA))


def _deployment_trace(cell: Cell) -> pl.DataFrame:
    """The trace of a cell of the Deployment world, from its own per-second trace
    (:func:`reconsim.model.deployment.run`): ``live`` its live pods, ``terminating`` its
    pods with a deletion timestamp, ``round`` whether either controller synced; ``ledger``,
    ``pending`` and ``read`` are null (the world reads no ledger)."""
    rows = rolling.run(cell)[0]
    frame = pl.DataFrame(rows).select(
        "t", "desired", "live", pl.lit(None, pl.Int64).alias("ledger"),
        pl.lit(None, pl.Int64).alias("pending"), "terminating",
        ((pl.col("rs_syncs") + pl.col("deploy_syncs")) > 0).alias("round"),
        pl.lit(None, pl.Int64).alias("read"), "create_commands", "created",
        pl.lit(0, pl.Int64).alias("failed_creates"), "delete_commands", "deleted", "deaths")
    return frame.cast(_OBSERVED).with_columns(  # type: ignore[arg-type]
        metrics.derived("wasted_deletes")).select(list(SCHEMA))


def metrics_of(frame: pl.DataFrame, cell: Cell) -> dict[str, Any]:
    """The metrics of :data:`reconsim.METRICS` from sums and extremes of ``cell``'s trace
    (:func:`reconsim.model.metrics.of_run` derives the rest).

    Beyond the trace, ``stable_at`` reads the cell's ``duration``, ``unneeded`` its death
    schedule and its initial copies: it subtracts every scheduled death, also those after
    the end or beyond the live count, which kill nobody and so are not in the trace; the
    disturbance's metrics start at the schedule's first death event. ``ledger_base`` turns
    the read entries into ``reads``.

    >>> cell = Cell(G=20, duration=60)
    >>> metrics_of(trace_cell(cell), cell)["overshoot"]
    6
    """
    over = frame["live"] - frame["desired"]
    rounds = int(frame["round"].sum())
    drifting = frame.filter(pl.col("live") != pl.col("desired"))["t"]
    return metrics.of_run({
        "rounds": rounds,
        "created": int(frame["created"].sum()),
        "delete_commands": int(frame["delete_commands"].sum()),
        "deleted": int(frame["deleted"].sum()),
        "overshoot": max(0, int(over.max())),  # type: ignore[arg-type]
        # (no ledger read in a world of its own: its reads are 0)
        "reads": 0 if registry.get(cell.controller).world is not None
        else int(frame["read"].sum()) + rounds * cell.ledger_base,
        "excess_copy_seconds": int(over.clip(lower_bound=0).sum()),
        "missing_copy_seconds": int((-over).clip(lower_bound=0).sum()),
        "create_commands": int(frame["create_commands"].sum()),
        "failed_creates": int(frame["failed_creates"].sum()),
        "last_drift": int(drifting.max()) if drifting.len() else 0,  # type: ignore[arg-type]
        "raised": int(frame["desired"].diff().clip(lower_bound=0).sum()),
        **_after(frame, cell),
    }, cell, responses_of(frame, cell))


def responses_of(frame: pl.DataFrame, cell: Cell) -> list[dict[str, int | None]]:
    """The responses to ``cell``'s events (:data:`reconsim.model.metrics.RESPONSES`) from
    its trace: each event's window, from its second to the next event's, by filters on
    the rows."""
    seconds = cell.event_seconds()
    out: list[dict[str, int | None]] = []
    for at, end in zip(seconds, [*seconds[1:], cell.duration + 1], strict=False):
        rows = frame.filter((pl.col("t") >= at) & (pl.col("t") < end))
        gap = rows["live"] - rows["desired"]
        drifting = rows.filter(pl.col("live") != pl.col("desired"))["t"]
        last = max(at, int(drifting.max()) if drifting.len() else at)  # type: ignore[arg-type]
        out.append({"at": at, "overshoot": max(0, int(gap.max())),  # type: ignore[arg-type]
                    "undershoot": max(0, -int(gap.min())),  # type: ignore[arg-type]
                    "missing": int((-gap).clip(lower_bound=0).sum()),
                    "settle": None if last == end - 1 else last - at + 1})
    return out


def _after(frame: pl.DataFrame, cell: Cell) -> dict[str, int]:
    """The disturbance's metrics from the rows at and after the first death event, as a run
    counts them (-1 for null)."""
    after = min((at for at, _ in cell.deaths), default=cell.duration + 1)
    rows = frame.filter(pl.col("t") >= after)
    over = rows["live"] - rows["desired"]
    drifting = rows.filter(pl.col("live") != pl.col("desired"))["t"]
    last = int(drifting.max()) if drifting.len() else after  # type: ignore[arg-type]
    return after_metrics(cell.duration, after, max(0, int(over.max() or 0)),  # type: ignore[arg-type]
                         int((-over).clip(lower_bound=0).sum()), last)
