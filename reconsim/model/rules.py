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
* Lag windows (the ``lag`` parameter): rows :data:`FROM`, :data:`TO` and :data:`EXTRA`.
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
#: Syncs one instant of an event-driven cell may run beyond 2 x (desired + the copies created
#: before it): with more its key is still queued and the cell is refused, as one whose syncs
#: never let time pass (:func:`most_syncs`; docs/model.md, "Controllers that sync on events").
SYNCS_AT_ONCE: Final = 100


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


# --- The per-second figures, accounted alike by every simulator. A run's running values
# are one tuple of ints (:data:`Account`: a value, which a kernel keeps in registers where an
# array would go to memory at every stretch); :func:`start_account` makes it, and each
# function that counts returns the new one. A simulator hands :func:`account` each stretch
# of seconds with one live count and one desired count, and opens an event's window with
# :func:`begin_event` at each second that holds a death event or a change of desired. The
# event windows' responses go to a matrix of :data:`RESPONSE_ROWS` rows, a column an event.
#: The running values' slots: overshoot, excess and missing copy-seconds and the last
#: second off desired over the whole run; the disturbance's, over the seconds from the
#: first death event (``AFTER``) on; the events counted so far, and the open window's
#: second, overshoot, undershoot, missing copy-seconds and last second off desired; the
#: increases of desired so far.
(OVERSHOOT, EXCESS, MISSING, LAST_DRIFT, AFTER, AFTER_OVER, AFTER_MISSING, AFTER_DRIFT,
 EVENTS, EVENT_AT, EVENT_OVER, EVENT_UNDER, EVENT_MISSING, EVENT_DRIFT, RAISED,
 ACCOUNT_SLOTS) = range(16)
#: A response's rows: the event's second, and over its window its overshoot above desired,
#: its undershoot below it, its missing copy-seconds and its time to settle (-1: null).
R_AT, R_OVERSHOOT, R_UNDERSHOOT, R_MISSING, R_SETTLE, RESPONSE_ROWS = range(6)

#: A run's running values, one int a slot in the order above.
Account = tuple[int, int, int, int, int, int, int, int, int, int, int, int, int, int, int]


def start_account(after: int) -> Account:
    """The running values of a run whose first death event is at second ``after``
    (``duration + 1`` when none is within the run): all 0 but ``AFTER`` and
    ``AFTER_DRIFT``."""
    return (0, 0, 0, 0, after, 0, 0, after, 0, 0, 0, 0, 0, 0, 0)


def account(acc: Account, lo: int, hi: int, live: int, desired: int) -> Account:
    """The running values ``acc`` with seconds ``lo … hi - 1`` (``lo < hi``) counted in,
    each with ``live`` copies running and ``desired`` wanted: the whole run's, the
    disturbance's where the seconds reach ``AFTER``, and the open event window's (all of
    the seconds lie in one window: a simulator opens each at its second)."""
    gap = live - desired
    if gap == 0:
        return acc
    (overshoot, excess, missing, last_drift, after, after_over, after_missing, after_drift,
     events, event_at, event_over, event_under, event_missing, event_drift, raised) = acc
    n = hi - lo
    last_drift = hi - 1
    if gap > 0:
        excess += gap * n
        overshoot = max(overshoot, gap)
    else:
        missing -= gap * n
    if hi > after:
        if gap > 0:
            after_over = max(after_over, gap)
        else:
            after_missing -= gap * (hi - max(lo, after))
        after_drift = hi - 1
    if events > 0:
        if gap > 0:
            event_over = max(event_over, gap)
        else:
            event_under = max(event_under, -gap)
            event_missing -= gap * n
        event_drift = hi - 1
    return (overshoot, excess, missing, last_drift, after, after_over, after_missing,
            after_drift, events, event_at, event_over, event_under, event_missing,
            event_drift, raised)


def _close_event(acc: Account, end: int, responses: Int64Array, col: int) -> None:
    """Write the open window's response, the window ending at second ``end``, into column
    ``col`` of ``responses``: its settling time as ``settle_after``'s (1 + its last second
    off desired, its own second counted as one, minus its second), -1 (null) when that
    last second is ``end``: not settled before the next event, or the end of the run."""
    responses[R_AT, col] = acc[EVENT_AT]
    responses[R_OVERSHOOT, col] = acc[EVENT_OVER]
    responses[R_UNDERSHOOT, col] = acc[EVENT_UNDER]
    responses[R_MISSING, col] = acc[EVENT_MISSING]
    responses[R_SETTLE, col] = -1 if acc[EVENT_DRIFT] == end else \
        acc[EVENT_DRIFT] - acc[EVENT_AT] + 1


def begin_event(acc: Account, t: int, responses: Int64Array, base: int) -> Account:
    """The running values with the window of an event at second ``t`` opened (before any
    of its seconds is counted), the one before it closed into column ``base + k`` of
    ``responses`` (``k`` its number among the run's events, from 0)."""
    events = acc[EVENTS]
    if events > 0:
        _close_event(acc, t - 1, responses, base + events - 1)
    return (acc[OVERSHOOT], acc[EXCESS], acc[MISSING], acc[LAST_DRIFT], acc[AFTER],
            acc[AFTER_OVER], acc[AFTER_MISSING], acc[AFTER_DRIFT], events + 1, t, 0, 0, 0, t,
            acc[RAISED])


def end_events(acc: Account, duration: int, responses: Int64Array, base: int) -> None:
    """Close the last event's window at the end of the run (second ``duration``)."""
    if acc[EVENTS] > 0:
        _close_event(acc, duration, responses, base + acc[EVENTS] - 1)


def change_desired(acc: Account, desired: int, to: int) -> Account:
    """The running values with a change of desired from ``desired`` to ``to`` counted:
    in ``RAISED`` where it increases."""
    if to <= desired:
        return acc
    return (acc[OVERSHOOT], acc[EXCESS], acc[MISSING], acc[LAST_DRIFT], acc[AFTER],
            acc[AFTER_OVER], acc[AFTER_MISSING], acc[AFTER_DRIFT], acc[EVENTS], acc[EVENT_AT],
            acc[EVENT_OVER], acc[EVENT_UNDER], acc[EVENT_MISSING], acc[EVENT_DRIFT],
            acc[RAISED] + to - desired)


def after_figures(duration: int, after: int, overshoot: int, missing: int,
                  last_drift: int) -> tuple[int, int, int]:
    """The disturbance's figures (``overshoot_after``, ``missing_after``, ``settle_after``)
    from their running values over seconds ``after`` .. ``duration``, ``after`` the first
    death event's second (``last_drift``: the last of those seconds with live != desired,
    else ``after``): -1 for null (:mod:`reconsim.model.metrics`), all three when ``after``
    is past the end, and ``settle_after`` when the run ends off desired.

    >>> after_figures(900, 300, 2, 7, 340), after_figures(900, 300, 2, 7, 900)
    ((2, 7, 41), (2, 7, -1))
    >>> after_figures(900, 901, 0, 0, 901)
    (-1, -1, -1)
    """
    if after > duration:
        return -1, -1, -1
    return overshoot, missing, -1 if last_drift == duration else last_drift - after + 1


def write_metrics(out: Int64Array, row: int, counts: Sequence[int] | Any,
                  acc: Account, duration: int) -> None:
    """Write a cell's raw counts into column ``row`` of ``out`` (a metric a row, in the
    order of the kernels' output columns): ``counts`` holds rounds, created, delete
    commands, deleted, reads, deaths, then (where ``out`` has rows for them) create
    commands and failed creates; the per-second figures, the last second off desired
    (``last_drift``, whence :mod:`reconsim.model.metrics` derives ``stable_at``), the
    disturbance's three (all -1, null, when ``AFTER`` is past the end), the increases of
    desired and the number of events come from the running values ``acc``."""
    out[0, row] = counts[0]
    out[1, row] = counts[1]
    out[2, row] = counts[2]
    out[3, row] = counts[3]
    out[4, row] = acc[OVERSHOOT]
    out[5, row] = acc[LAST_DRIFT]
    out[6, row] = counts[4]
    out[7, row] = acc[EXCESS]
    out[8, row] = acc[MISSING]
    out[9, row] = counts[5]
    out[10, row], out[11, row], out[12, row] = after_figures(
        duration, acc[AFTER], acc[AFTER_OVER], acc[AFTER_MISSING], acc[AFTER_DRIFT])
    out[13, row] = acc[RAISED]
    out[14, row] = acc[EVENTS]
    if out.shape[0] > 15:
        out[15, row] = counts[6]
        out[16, row] = counts[7]


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


# --- A copy's life and a round's times: when a copy is ready, how late the ledger hears of
# it, when it runs, when a deleted one dies; when the next periodic round runs, how stale a
# read is. The rounds' worlds count in seconds; the event worlds keep their instants in
# milliseconds and hand a rule times of one unit (or convert, as ``ready_at``'s callers do).

#: "Never": a second after every run's end, for a removal or a death that has not happened.
NEVER: Final = 1 << 62
#: A lag window's rows (the ``lag`` parameter's windows, as :func:`lag_table` lays them).
FROM, TO, EXTRA = 0, 1, 2


def ready_at(t: int, B: int, seed: int, k: int, spread: int,  # noqa: PLR0913, PLR0917
             table: Int64Array, lo: int, hi: int) -> int:
    """The second copy ``k``, created at second ``t``, becomes ready: ``B`` later, plus
    its extra startup delay (:func:`extra_delay` on the
    :data:`~reconsim.model.rng.STARTUP` stream: the B delay table in columns ``lo … hi -
    1`` of ``table``, else uniform in ``0 … spread``).

    >>> ready_at(10, 3, 7, 0, 0, delay_table(()), 0, 0)
    13
    >>> ready_at(10, 3, 7, 0, 0, delay_table(((5, 1),)), 0, 1)
    18
    """
    return t + B + extra_delay(seed, rng.STARTUP, k, spread, table, lo, hi)


def ledger_delay(G: int, seed: int, k: int, spread: int,  # noqa: PLR0913, PLR0917
                 table: Int64Array, lo: int, hi: int) -> int:
    """Copy ``k``'s ledger delay ``g``, the seconds each change of it takes to reach the
    ledger: ``G`` plus its extra delay (:func:`extra_delay` on the
    :data:`~reconsim.model.rng.LEDGER_DELAY` stream, the G delay table or ``spread``).

    >>> ledger_delay(4, 7, 0, 0, delay_table(((2, 1),)), 0, 1)
    6
    """
    return G + extra_delay(seed, rng.LEDGER_DELAY, k, spread, table, lo, hi)


def runs(ready: int, death: int, t: int) -> bool:
    """Whether a copy runs, and counts as live, at ``t``: from its ``ready`` second up to
    its ``death`` (:data:`NEVER` while it has none): a terminating copy runs until it dies.
    A scripted death of ``count`` copies at ``t`` takes the first ``count`` copies, in
    creation order, that run at ``t``, terminating ones included.

    >>> runs(3, NEVER, 3), runs(3, NEVER, 2), runs(3, 5, 4), runs(3, 5, 5), runs(6, 5, 6)
    (True, False, True, False, False)
    """
    return ready <= t < death


def dies_at(t: int, grace: int) -> int:
    """When a copy dies that a delete command at ``t`` found not yet removed: ``grace``
    later (it is terminating meanwhile, and runs if it was ready). Seconds or milliseconds
    alike, ``t`` and ``grace`` in the same unit.

    >>> dies_at(10, 30), dies_at(10, 0)
    (40, 10)
    """
    return t + grace


def on_ledger(listed: int, removed: int, g: int, r: int) -> bool:
    """Whether the ledger lists a copy at (the end of) second ``r``: from its ``listed``
    second until ``g`` after its ``removed`` one (:data:`NEVER` while it is not removed).

    >>> on_ledger(5, NEVER, 2, 5), on_ledger(5, NEVER, 2, 4), on_ledger(5, 8, 2, 9)
    (True, False, True)
    >>> on_ledger(5, 8, 2, 10)
    False
    """
    return listed <= r and r - g < removed


def pending_at(listed: int, removed: int, r: int) -> bool:
    """Whether a creation the controller remembers is pending to a round that observes
    second ``r``: not listed by then, and not removed (:data:`NEVER`: not yet) by then.

    >>> pending_at(5, NEVER, 4), pending_at(5, NEVER, 5), pending_at(5, 3, 4)
    (True, False, False)
    """
    return r < listed and r < removed


def next_round(t: int, U: int, U_jitter: int, seed: int, i: int) -> int:
    """The second of the periodic round after round ``i`` of the schedule (from 0), which
    is at second ``t``: ``U`` later, moved by draw ``i`` of the
    :data:`~reconsim.model.rng.INTERVAL` stream, uniform in ``-U_jitter … U_jitter`` (no
    draw without jitter), and one second later at least.

    >>> next_round(0, 10, 0, 7, 0), next_round(20, 1, 0, 7, 3)
    (10, 21)
    >>> next_round(0, 10, 3, 7, 0) == 10 - 3 + rng.uniform(7, rng.INTERVAL, 0, 7)
    True
    """
    if U_jitter == 0:
        return t + max(1, U)
    return t + max(1, U - U_jitter + int(uniform(seed, rng.INTERVAL, i, 2 * U_jitter + 1)))


def stale_by(t: int, lag: Int64Array, lo: int, hi: int) -> int:
    """How many seconds stale a read at second ``t`` is: the ``extra`` of the first lag
    window (columns ``lo … hi - 1`` of ``lag``, in listed order) that holds ``t``
    (``from <= t < to``); 0 outside every window (a window's ``extra`` is 1 or more).

    >>> lag = lag_table(((0, 10, 3), (5, 20, 7)))
    >>> [stale_by(t, lag, 0, 2) for t in (0, 9, 10, 20)]
    [3, 3, 7, 0]
    """
    for w in range(lo, hi):
        if lag[FROM, w] <= t < lag[TO, w]:
            return int(lag[EXTRA, w])
    return 0


def capped(diff: int, cap: int) -> int:
    """A round's correction ``diff`` capped at ``cap`` copies either way
    (``max_per_round``; 0: no cap), after damping.

    >>> capped(7, 3), capped(-7, 3), capped(2, 3), capped(-7, 0)
    (3, -3, 2, -7)
    """
    if cap > 0:
        return max(-cap, min(cap, diff))
    return diff


def most_syncs(desired: int, made: int) -> int:
    """The most syncs one instant of an event-driven cell may run, with ``desired`` copies
    wanted and ``made`` copies created before it (initial ones included): beyond
    :data:`SYNCS_AT_ONCE` + 2 x (desired + made) its key is still
    queued, and the cell is refused as one whose syncs never let time pass.

    >>> most_syncs(3, 2) == SYNCS_AT_ONCE + 10
    True
    """
    return SYNCS_AT_ONCE + 2 * (desired + made)


def lag_table(windows: Sequence[tuple[int, int, int]]) -> Int64Array:
    """A cell's lag windows (``(from, to, extra)``) as rows :data:`FROM`, :data:`TO` and
    :data:`EXTRA`, in listed order (a column of zeros for none: an array needs one)."""
    table = np.zeros((3, max(1, len(windows))), np.int64)
    for w, window in enumerate(windows):
        table[:, w] = window
    return table
