"""The world's rules that every simulator applies alike, each written once as a plain
integer function.

The reference models (:mod:`reconsim.model.reference`, :mod:`reconsim.model.events`) call
these functions as Python; the kernels call the very same functions compiled by numba
(:mod:`reconsim.model.kernels.rules`), with :func:`uniform` bound to the same draw in
machine integers. The simulators keep their own loops and bookkeeping — the references
stay a readable statement of the rules in order, the kernels stay fast — but what a rule
decides is stated here alone.

Tables are arrays of rows, as the kernels hold them for a whole batch: a cell's entries
are the columns ``lo … hi - 1``.

* A delay table (:mod:`reconsim.model.delays`): rows :data:`VALUE` and :data:`CUMULATIVE`
  (each entry's weight added to those of the cell's entries before it).
* Scripted create faults (the ``create_faults`` parameter): rows :data:`AT`,
  :data:`LOST` (1 for a lost reply, 0 for a failure) and :data:`COUNT`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from reconsim.model import rng
from reconsim.model.rng import uniform

#: A delay table's rows.
VALUE, CUMULATIVE = 0, 1
#: A fault schedule's rows.
AT, LOST, COUNT = 0, 1, 2
#: The outcomes of a create command: its copy is created and the reply arrives; nothing is
#: created (the command failed); the copy is created but the reply is lost.
OK: Final = 0
FAIL: Final = 1
LOST_REPLY: Final = 2

Int64Array = NDArray[np.int64]


def extra_delay(seed: int, stream: int, k: int, spread: int,  # noqa: PLR0913, PLR0917
                table: Int64Array, lo: int, hi: int) -> int:
    """Copy ``k``'s extra delay on ``stream`` (:data:`~reconsim.model.rng.STARTUP` or
    :data:`~reconsim.model.rng.LEDGER_DELAY`): drawn from the delay table in columns
    ``lo … hi - 1`` of ``table`` where it has entries — draw ``k`` modulo the total weight
    ``T``, then the first entry whose cumulative weight is above it — else uniform in
    ``0 … spread``.

    >>> table = delay_table(((2, 1), (5, 3)))
    >>> [extra_delay(7, rng.STARTUP, k, 0, table, 0, 2) for k in range(6)]
    [5, 2, 5, 2, 2, 2]
    >>> extra_delay(7, rng.STARTUP, 0, 5, table, 0, 0) == rng.uniform(7, rng.STARTUP, 0, 6)
    True
    """
    if hi > lo:
        r = uniform(seed, stream, k, int(table[CUMULATIVE, hi - 1]))
        a, b = lo, hi - 1
        while a < b:  # the first entry whose cumulative weight is above r
            m = (a + b) // 2
            if table[CUMULATIVE, m] > r:
                b = m
            else:
                a = m + 1
        return int(table[VALUE, a])
    if spread > 0:
        return int(uniform(seed, stream, k, spread + 1))
    return 0


def create_outcome(t: int, j: int, seed: int, fail_pm: int, lost_pm: int,  # noqa: PLR0913, PLR0917
                   faults: Int64Array, left: Int64Array, lo: int, hi: int) -> int:
    """What comes of create command ``j`` (every create command of the cell counted from 0),
    issued at second ``t``: :data:`OK`, :data:`FAIL` or :data:`LOST_REPLY`.

    The first scripted fault event (columns ``lo … hi - 1`` of ``faults``, in listed order)
    that is due (its second at or before ``t``) and has commands left (``left[f - lo]``,
    which this decrements) takes it; else it fails with probability ``fail_pm`` / 1000
    (draw ``j`` of the :data:`~reconsim.model.rng.FAIL` stream below ``fail_pm``), else its
    reply is lost with probability ``lost_pm`` / 1000 (draw ``j`` of
    :data:`~reconsim.model.rng.LOST`).

    >>> faults, left = fault_table(((0, 1, "lost"),))
    >>> [create_outcome(5, j, 7, 0, 0, faults, left, 0, 1) for j in range(2)]
    [2, 0]
    """
    for f in range(lo, hi):
        if faults[AT, f] <= t and left[f - lo] > 0:
            left[f - lo] -= 1
            return LOST_REPLY if faults[LOST, f] else FAIL
    if fail_pm > 0 and uniform(seed, rng.FAIL, j, 1000) < fail_pm:
        return FAIL
    if lost_pm > 0 and uniform(seed, rng.LOST, j, 1000) < lost_pm:
        return LOST_REPLY
    return OK


def listed_at(birth: int, ready: int, g: int, created_listed: bool) -> int:
    """The second a copy is first listed on the ledger: ``g`` after it became ready, or
    after it was created where the ledger lists copies as they are created (``observe =
    "created"``)."""
    return (birth if created_listed else ready) + g


def stable_at(last_drift: int, duration: int) -> int:
    """``stable_at`` as the kernels report it: 1 + the last second with live != desired,
    or -1 (null) when that second is the run's last."""
    return -1 if last_drift == duration else last_drift + 1


def write_metrics(out: Int64Array, row: int, counts: Sequence[int] | Any,  # noqa: PLR0913, PLR0917
                  last_drift: int, duration: int, after: int, after_over: int,
                  after_missing: int, after_drift: int) -> None:
    """Write a cell's raw counts into column ``row`` of ``out`` (a metric a row, in the
    order of the kernels' output columns): ``counts`` holds rounds, created, delete
    commands, deleted, overshoot, reads, excess and missing copy-seconds, deaths, then
    (where ``out`` has rows for them) create commands and failed creates; ``stable_at``
    comes from ``last_drift``; the disturbance's three from its running values over
    seconds ``after`` … ``duration`` (``after_drift``: the last of them off desired), all
    -1 (null) when ``after`` is past the end."""
    out[0, row] = counts[0]
    out[1, row] = counts[1]
    out[2, row] = counts[2]
    out[3, row] = counts[3]
    out[4, row] = counts[4]
    out[5, row] = stable_at(last_drift, duration)
    out[6, row] = counts[5]
    out[7, row] = counts[6]
    out[8, row] = counts[7]
    out[9, row] = counts[8]
    if after <= duration:
        out[10, row] = after_over
        out[11, row] = after_missing
        out[12, row] = -1 if after_drift == duration else after_drift - after + 1
    else:
        out[10, row] = out[11, row] = out[12, row] = -1
    if out.shape[0] > 13:
        out[13, row] = counts[9]
        out[14, row] = counts[10]


def delay_table(entries: Sequence[tuple[int, int]]) -> Int64Array:
    """A cell's delay table (``(value, weight)`` entries) as rows :data:`VALUE` and
    :data:`CUMULATIVE`, its entries in columns ``0 … len(entries) - 1`` (a column of zeros
    for an empty table: an array needs one)."""
    if not entries:
        return np.zeros((2, 1), np.int64)
    values = np.array([v for v, _ in entries], np.int64)
    return np.stack([values, np.cumsum([w for _, w in entries], dtype=np.int64)])


def fault_table(events: Sequence[tuple[int, int, str]]) -> tuple[Int64Array, Int64Array]:
    """A cell's scripted fault events (``(at, count, kind)``) as rows :data:`AT`,
    :data:`LOST` and :data:`COUNT`, and the commands each has left (its count)."""
    table = np.zeros((3, max(1, len(events))), np.int64)
    for f, (at, count, kind) in enumerate(events):
        table[:, f] = (at, 1 if kind == "lost" else 0, count)
    return table, table[COUNT].copy()
