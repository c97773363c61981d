"""The world kernel: the richer world's rules on whole batches of cells, one copy a record.

Why a second kernel. :mod:`reconsim.model.kernels.count` is exact because every removal takes
the oldest copies and every copy has the same delays, so dead, ready and listed
copies are prefixes of creation order and three counts are the whole state. Varying
delays (``B_spread``, ``G_spread``, delay tables), newest-first deletes and grace periods break
those prefixes, and stale reads (``lag``), watch triggers and faults need to know
*which* copies a round saw. So this kernel keeps, per copy, the times of
:class:`reconsim.model.reference.Copy` — birth, ready, its delay g, listed, removed, death —
plus two flags (removed by a delete command; remembered by the controller).

Why it is still fast. Nothing the metrics see changes between *event seconds*: a
periodic round, a scripted death, a change of desired (``scale``), and, with ``trigger =
"watch"``, a second at which the read could change. The kernel jumps from one to the
next. The live count changes between them (copies become ready, terminating copies die),
so its changes wait in a *queue* and are consumed when the kernel passes them; each run of
equal live counts is counted as one stretch by the rules' ``account``
(:mod:`reconsim.model.rules`, compiled) when it ends — at a change of the live count, and
at a death event's or a change's second, where desired may change and an event's window
opens (``change_desired``, then ``begin_event``, before that second's deaths), so that a
stretch has one desired and lies in one window. (Counting a run once, not once for each
event second it spans, keeps the shared rules' memory traffic off the seconds the kernel
steps through.) Each second has the desired of the last change at or before it, and
every round sees that one. A queue is a row of per-second sums of changes (seconds past
the run are dropped: nothing reads them) and a bitmap of the seconds that hold one, so
adding a change costs O(1) and the next change is found a 64-second word at a time;
taking a change clears its second, so a cell leaves its queues empty (the read's queue
is drained to the end). It replaced two
binary heaps of (second, ±1): same events, same order of summing, 6% less time on
the world mix (profiled: no part of a cell dominates its cost — reads and decisions,
creates, deletes, sampling and the per-second watch scans take 10-20% each). The
read a round at t makes is, per copy, an interval of seconds:

* outside lag windows the copy is read from ``max(birth + 1, listed)`` (a copy created
  in the round at t is not there when that round reads) until ``removed + g``
  (``removed + 1`` when g = 0 and a delete command removed it: the command comes
  after that second's read, a scripted death before it);
* inside a window with ``extra = x`` the round reads the ledger at the end of second
  ``t - x``, which lists the copy for ``listed <= t - x < removed + g``.

So the size of the unlagged read is a running sum over a second queue of interval
ends, and the ledger's size at the end of each second (for stale reads) a prefix sum
over per-second differences, final once the second is past. A watch trigger at t is a
change of the read between t - 1 and t: where both seconds have the same lag, that is
exactly "some non-empty interval opens or closes at t" — a per-second count of
interval ends, looked up only at the seconds the read's queue holds a change at (every
interval end is queued there) to find the next such second; in watch cells with lag
windows, scanned second by second; where a window opens or closes, the two reads are
compared copy by copy. Delete targets, the pending count (for a controller that
sees it) and scripted deaths walk the copies held, in creation order. Copies that can
matter no more (dead, and off every read the remaining rounds can make, lag included)
are dropped once the copies held have doubled, so the arrays hold roughly the copies
alive or listed. Cost per cell: O(transient rounds x copies held + copies made), plus
O(seconds / 64) for the queues' bitmaps and O(seconds scanned) for cells with lag windows.

Settled cells skip their idle rounds. ``quiet_from`` is the latest second at which any
copy's read membership changes — its ``birth + 1`` and ``listed`` from its creation,
``removed + max(g, 1)`` from its removal — so a read of the ledger as of any second
``r >= quiet_from`` (stale or not) holds exactly the copies listed and never removed, the
same set every time, and no remembered copy is pending there (all are listed) and no
expectation waits (each waits for a listing or a removal + g, all behind). When a round at
s of a steady controller (:attr:`~reconsim.model.controllers.Controller.steady`) corrects
nothing (diff = 0), leaving its memory as it was, and every read from s on looks at
``r >= quiet_from`` (the read at s, and for each lag window reaching past s,
``max(s + 1, from) - extra``), the rounds up to the next scripted death or change of
desired (or the end; a restart, for a controller with a memory of its own) read that same
set with the same desired and decide 0 again, by induction: no copy is created (so no
fault or rate draw happens), none is removed, a restart changes nothing they use, and a
watch trigger cannot fire (its two reads are the same set). So they add one round and
``seen + ledger_base`` reads each, counted in closed form (with ``U_jitter``, only the
interval draws are stepped: they decide how many rounds fall before the next death or
change), and the per-second scan for watch triggers jumps over them (up to that second,
where the kernel stops: a change of desired fires no watch trigger, the next round sees
it). The live count keeps changing on its own queue and is counted as before. The
per-second rows a cell wrote (change counts for watch triggers, ledger differences for lag
windows) are cleared by it up to its ``quiet_from`` (every entry it wrote lies there), not
over its whole duration; the queues' rows are emptied as their changes are consumed (a
death at ``removed + grace`` can lie past ``quiet_from``), and the lag per second is
filled only as far as it is looked at: a settled cell's cost grows with its duration only
by the queues' bitmap words (one per 64 seconds).

Each controller runs on a kernel compiled for it (:mod:`.specialise`: its decision and
what it sees are compile-time constants), so a batch runs one controller's cells after
another's, each in the batch's order, read in place through their row numbers: nothing is
gathered before the kernel or scattered after it. Two layouts measured slower on the world
mix (300,000 cells of three controllers): gathering the inputs grouped by class
(controller, trigger, lag windows or none, U) and scattering the metrics back took 550 ms
a batch (the gather and scatter alone about 90), and reading through the row numbers in
that class order 540 (each cell's inputs then lie far apart in every array: a cache miss
each); the row order, 430. Grouping by class had paid for its gather only while one
kernel ran every controller, whose branches a batch cycling through them mispredicted.
Blocks of cells vary in cost, so the threads take them one at a time.

Random numbers come from :mod:`reconsim.model.rng`'s counter-based streams, so each draw
is a pure function of (seed, stream, counter): no state crosses cells or blocks.

The public entry point takes and returns plain NumPy arrays; polars stays in
:mod:`reconsim.model.simulate`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.np.unsafe.ndarray import to_fixed_tuple
from numpy.typing import NDArray

from reconsim.errors import KernelRefusalError
from reconsim.model import params, rules
from reconsim.model.controllers import Controller, Entry, Round, registry
from reconsim.model.controllers.definition import MAX_RANK
from reconsim.model.copies import BEFORE_RUN
from reconsim.model.kernels.arrays import (
    SCHEDULES,
    UNRUN,
    KernelDecisionError,
    check_offsets,
    controller_params,
    cumulative,
    frozen,
    largest_desired,
    numbered,
    params_matrix,
    response_outputs,
    take_rows,
    worst_extra,
)
from reconsim.model.kernels.count import (
    BEFORE,
    CREATED,
    MAX_CORRECTION,
    MAX_SCRATCH_BYTES,
    NOW,
    OUT_COLUMNS,
    copy_into,
    damped_int,
    memory_changed,
    refuse_unsafe,
    sorted_into,
)
from reconsim.model.kernels.rules import (
    account,
    begin_event,
    capped,
    change_desired,
    create_outcome,
    dies_at,
    end_events,
    ledger_delay,
    listed_at,
    next_round,
    on_ledger,
    pending_at,
    ready_at,
    runs,
    stale_by,
    start_account,
    write_metrics,
)

# The controller's names, bound by specialise() for each controller (see .specialise).
from reconsim.model.kernels.specialise import (
    HAS_MEMORY,
    MEMORY_INIT,
    N_PARAMS,
    PARAMS_TYPE,
    RANKED,
    SEES_PENDING,
    STEADY,
    beyond_max,
    decide,
    rank,
    run_rows,
    specialise,
)
from reconsim.model.rules import FAIL, OK, Account

#: Columns of the integer result matrix returned by :func:`simulate_world_arrays`.
WORLD_OUT_COLUMNS: Final[tuple[str, ...]] = (*OUT_COLUMNS, "create_commands", "failed_creates")
_N_OUT = len(WORLD_OUT_COLUMNS)
#: Cells per parallel block; each block allocates its scratch once.
_BLOCK = 512
#: "Never": a removal or death that has not happened.
_NEVER = rules.NEVER
#: Copies held before the first compaction.
_COMPACT_FROM = 32
#: Rows of the per-second scratch: the unlagged read's change counts; the ledger's size
#: changes, change counts and running size at the end of each second; the lag per second;
#: the pending changes of the live count and of the unlagged read's size (two queues).
_CM, _DE, _CE, _PRE, _XS, _LV, _MV = 0, 1, 2, 3, 4, 5, 6
_N_SECOND_ROWS = 7
#: Rows of a copy's record (a column of the copy scratch): the times of
#: :class:`reconsim.model.reference.Copy`, and two flags (removed by a delete command;
#: remembered by the controller).
_BIRTH, _READY, _G, _LISTED, _REMOVED, _DEATH, _BY_COMMAND, _REMEMBERED = range(8)
_N_COPY_ROWS = 8
#: The two queues of pending changes: their row of the per-second scratch, and their row of
#: the bitmap of seconds that hold one (a bit a second, 64 a word).
_LIVE, _M = 0, 1
_QUEUE_ROW = (_LV, _MV)
_ALL_BITS = np.uint64(0xFFFFFFFFFFFFFFFF)
#: A batch's lists, side by side in the columns of one array (:func:`_batch_lists`): the rows
#: of a lag window, of a fault event, and of a delay table's entry.
_FROM, _TO, _EXTRA = rules.FROM, rules.TO, rules.EXTRA
_AT, _LOST, _COUNT = rules.AT, rules.LOST, rules.COUNT
_VALUE, _CUMULATIVE = rules.VALUE, rules.CUMULATIVE
#: Copies a block's scratch holds at first; a cell that needs more is rerun with double.
_FIRST_CAPACITY = 64
#: How a cell's run ended: done; it needs more copies than its scratch holds; its
#: controller returned a correction beyond the bound.
_DONE, _WIDER, _BAD_CORRECTION, _BAD_RANK = 0, 1, 2, 3  # the refusals last

Int64Array = NDArray[np.int64]
Int64Array2D = NDArray[np.int64]
UInt64Array2D = NDArray[np.uint64]
BoolArray = NDArray[np.bool_]


# Inlined, as the rule it calls is: numba's disk cache of a function compiled on its own
# checks its module's source only, not that of the rules it calls (see .rules.SOURCE_DIGEST).
@numba.njit(cache=True, nogil=True, inline="always")
def _in_read(  # noqa: PLR0913, PLR0917 — numba takes scalars positionally
    t: int, x: int, birth: int, listed: int, removed: int, g: int, by_command: bool,
) -> bool:
    """Whether a round at t (with staleness x, 0 for none) reads this copy."""
    if x > 0:
        return bool(on_ledger(listed, removed, g, t - x))
    if t <= birth or listed > t:
        return False
    if removed == _NEVER:
        return True
    end = removed + 1 if (g == 0 and by_command) else removed + g
    return t < end


@numba.njit(cache=True, nogil=True)
def _fill_lag(  # noqa: PLR0913, PLR0917 — numba takes arrays positionally
    ps: Int64Array2D, filled: int, t: int, lag: Int64Array2D, w_lo: int, w_hi: int,
) -> int:
    """Fill the lag row of the per-second scratch up to second t; return how far it is.
    Window by window, the last listed first, so that the first listed window holding a
    second writes it last (as :func:`~reconsim.model.rules.stale_by` reads them)."""
    if filled >= t:
        return filled
    ps[_XS, filled + 1:t + 1] = 0
    for w in range(w_hi - 1, w_lo - 1, -1):
        lo = max(lag[_FROM, w], filled + 1)
        hi = min(lag[_TO, w], t + 1)
        if lo < hi:
            ps[_XS, lo:hi] = lag[_EXTRA, w]
    return t


@numba.njit(cache=True, nogil=True, inline="always")
def _add(ps: Int64Array2D, row: int, t: int, v: int) -> None:
    """Add v at second t of a per-second row (seconds past its end never matter)."""
    if t < ps.shape[1]:
        ps[row, t] += v


@numba.njit(cache=True, nogil=True, inline="always")
def _mark_removal(  # noqa: PLR0913, PLR0917 — numba takes arrays positionally
    s: int, birth: int, listed: int, g: int, by_command: bool,
    ps: Int64Array2D, bits: UInt64Array2D, duration: int, lagged: bool, watch: bool,
) -> None:
    """A copy is removed at s: close its read intervals (or cancel them if never opened)."""
    m0 = max(birth + 1, listed)
    m1 = s + 1 if (g == 0 and by_command) else s + g
    if m1 > m0:
        _queue(ps, bits, _M, m1, -1, duration)
        if watch:
            _add(ps, _CM, m1, 1)
    else:
        _queue(ps, bits, _M, m0, -1, duration)
        if watch:
            _add(ps, _CM, m0, -1)
    if lagged:
        if s + g > listed:
            _add(ps, _DE, s + g, -1)
            _add(ps, _CE, s + g, 1)
        else:
            _add(ps, _DE, listed, -1)
            _add(ps, _CE, listed, -1)


@numba.njit(cache=True, nogil=True, inline="always")
def _queue(  # noqa: PLR0913, PLR0917 — numba takes arrays positionally
    ps: Int64Array2D, bits: UInt64Array2D, q: int, t: int, v: int, duration: int,
) -> None:
    """Add a change of v at second t to queue q (seconds past the run never matter)."""
    if t <= duration:
        ps[_QUEUE_ROW[q], t] += v
        bits[q, t >> 6] |= np.uint64(1) << np.uint64(t & 63)


@numba.njit(cache=True, nogil=True)
def _next(bits: UInt64Array2D, q: int, t: int, hi: int) -> int:
    """The first second >= t that queue q holds a change at, or hi if none is before hi."""
    if t >= hi:
        return hi
    w = t >> 6
    word = bits[q, w] & (_ALL_BITS << np.uint64(t & 63))
    last = (hi - 1) >> 6
    while word == 0:
        w += 1
        if w > last:
            return hi
        word = bits[q, w]
    u = (w << 6) + int(trailing_zeros(word))  # type: ignore[call-arg]  # numba's intrinsic
    return min(u, hi)


@numba.njit(cache=True, nogil=True, inline="always")
def _consume(ps: Int64Array2D, bits: UInt64Array2D, q: int, t: int) -> int:
    """Remove the change queue q holds at second t; return it."""
    v = ps[_QUEUE_ROW[q], t]
    ps[_QUEUE_ROW[q], t] = 0
    bits[q, t >> 6] &= ~(np.uint64(1) << np.uint64(t & 63))
    return int(v)


@numba.njit(cache=True, nogil=True)
def _drain(ps: Int64Array2D, bits: UInt64Array2D, q: int, lo: int, t: int) -> int:
    """Remove the changes queue q holds at seconds lo .. t (none is before lo); return
    their sum."""
    total = 0
    u = _next(bits, q, lo, t + 1)
    while u <= t:
        total += _consume(ps, bits, q, u)
        u = _next(bits, q, u + 1, t + 1)
    return total


def _ranked(  # noqa: PLR0913, PLR0917 — numba takes scalars positionally
        cp: Int64Array2D, n: int, s: int, r: int, delete_newest: bool, p: Any,
) -> Int64Array | None:
    """The copies the read at ``r`` lists, in the order a deletion at ``s`` takes them: by
    the controller's rank, equal keys oldest (or newest) first; None if a key is 2^62 or
    more in magnitude."""
    order = np.empty(n, np.int64)
    keys = np.empty(n, np.int64)
    m = 0
    for h in range(n):
        i = n - 1 - h if delete_newest else h
        if on_ledger(cp[_LISTED, i], cp[_REMOVED, i], cp[_G, i], r):
            ready = max(0, cp[_READY, i]) if cp[_READY, i] + cp[_G, i] <= r else -1
            order[m] = i  # an initial copy's times before the run show as 0
            key = rank(Entry(s, max(0, cp[_BIRTH, i]), ready), p)
            if key > MAX_RANK or key < -MAX_RANK:
                return None
            keys[m] = key
            m += 1
    return order[:m][np.argsort(keys[:m], kind="mergesort")]


@numba.njit(cache=True, nogil=True, inline="always")
def _sample(  # noqa: PLR0913, PLR0917 — numba takes arrays positionally
    ps: Int64Array2D, bits: UInt64Array2D, lo: int, hi: int, live: int, since: int,
    desired: int, acc: Account,
) -> tuple[int, int, Account]:
    """Pass seconds lo .. hi-1, consuming the live count's queued changes there (none is
    before lo); return the live count at hi - 1, the second its run began and the running
    values. The live count ``live`` has held since second ``since`` (<= lo), uncounted:
    each run of equal live counts that ends here is counted into the running values ``acc``
    (:func:`reconsim.model.rules.account`) as it ends, the last is left to the caller. A
    run is one stretch for :func:`~reconsim.model.rules.account` as long as desired and
    the event window stay the same: the caller counts it (:func:`_count_run`) before
    either changes."""
    t = _next(bits, _LIVE, lo, hi)
    while t < hi:
        change = _consume(ps, bits, _LIVE, t)
        if change != 0:
            if t > since:
                acc = account(acc, since, t, live, desired)
            live += change
            since = t
        t = _next(bits, _LIVE, t + 1, hi)
    return live, since, acc


@numba.njit(cache=True, nogil=True, inline="always")
def _count_run(acc: Account, since: int, t: int, live: int, desired: int) -> Account:
    """The running values ``acc`` with the run of ``live`` copies from second ``since`` to
    ``t - 1`` (if any) counted: the next run begins at ``t``."""
    if t > since:
        acc = account(acc, since, t, live, desired)
    return acc


def _run_cell(  # noqa: PLR0912, PLR0913, PLR0915, PLR0917 — one flat loop is what makes it fast
    p: Any, memory: Int64Array2D, created_listed: bool, cap: int, gain_pm: int,
    desired: int, U: int, G: int, B: int, duration: int, ledger_base: int, initial: int,
    B_spread: int, G_spread: int, U_jitter: int, seed: int, grace: int,
    delete_newest: bool, watch: bool, slow_start: bool, fail_pm: int, lost_pm: int,
    ev: Int64Array2D, n_ev: int, n_sc: int, restarts: Int64Array, n_rs: int,
    lists: Int64Array2D, w_lo: int, w_hi: int, f_lo: int, f_hi: int, fault_left: Int64Array,
    b_lo: int, b_hi: int, g_lo: int, g_hi: int,
    cp: Int64Array2D, ps: Int64Array2D, bits: UInt64Array2D,
    out: Int64Array2D, row: int, responses: Int64Array2D, base: int,
) -> int:
    """Run cell ``row``: :data:`_DONE`, or :data:`_WIDER` if it needs more copies than the
    scratch arrays hold, or :data:`_BAD_CORRECTION` if its controller returned a
    correction beyond :data:`reconsim.model.kinds.MAX_COPIES`, or :data:`_BAD_RANK` if its
    ``rank`` returned a key of 2^62 or more in magnitude (the cell's ``out[0]`` is then the
    code, negated).

    ``p`` holds its controller's parameters, ``memory`` is scratch for its memory (rows
    :data:`~reconsim.model.kernels.count.NOW` and ``BEFORE``; the controller is the one
    this function was specialised for: :mod:`.specialise`).

    Its death events are rows 0 and 1 of ``ev`` (at, count: the first ``n_ev`` columns,
    sorted), its changes of desired rows 2 and 3 (at, desired: the first ``n_sc``, sorted);
    ``desired`` is its desired before the first change. Its lag windows are
    columns ``[w_lo, w_hi)`` of ``lists`` (rows from, to, extra), its fault events columns
    ``[f_lo, f_hi)`` (rows at, lost; ``fault_left`` from index 0: their counts left), its
    delay tables columns ``[b_lo, b_hi)`` and ``[g_lo, g_hi)`` (rows value, cumulative
    weight; none: the uniform spread). Each column of ``cp`` is a copy held; ``ps`` holds
    the per-second rows (the two queues among them), ``bits`` the queues' bitmaps. The metrics
    go to column ``row`` of ``out``, the responses to its events to columns ``base`` on of
    ``responses``.

    Few array arguments, one exit from the loop over seconds: numba passes each array as
    a struct of seven words and counts its references, and each of three more array
    arguments (or a return from inside the loop) cost the cell loop 1-2 % (6 % for the
    return) in one measurement.
    """
    capacity = cp.shape[1]
    copy_into(memory[NOW], MEMORY_INIT)
    n_lag = w_hi - w_lo
    max_extra = 0
    for w in range(w_lo, w_hi):
        max_extra = max(max_extra, lists[_EXTRA, w])
    deaths_total = 0
    for j in range(n_ev):
        deaths_total += ev[1, j]
    # Per-second arrays over 0 .. duration, as differences (d_) or change counts (c_):
    # live copies; the unlagged read (M: membership at a round's read point); the ledger
    # at the end of a second (E, what stale reads see); E's running total; the lag per
    # second (watch cells with lag windows only, filled as far as looked at). The rows of
    # differences and change counts come in zeroed and are left zeroed: every entry a cell
    # writes there lies at or before its `quiet_from`, which it clears at the end; the
    # queues' rows (live count, unlagged read) are emptied by consuming their changes.
    lagged = n_lag > 0
    m_from = 0  # the unlagged read's queue holds no change before this second
    lag_per_second = watch and lagged
    xs_filled = -1  # ps[_XS] holds the lag of seconds 0 .. xs_filled
    n = 0  # copies held (in creation order)
    compact_at = _COMPACT_FROM
    # copies ever made, the initial ones first: the counter of streams STARTUP and LEDGER_DELAY
    k_made = initial
    exp_active = False
    exp_set = 0
    exp_seen = 0  # expectations are observed by a read of the end of this second on
    p_rs = 0
    i_ev = 0
    next_periodic = 0
    periodic_i = 0
    i_sc = 0
    rounds = created = commands = deleted = reads = create_commands = failed = 0
    live = initial
    since = 0  # the live count has been `live` from this second on, not counted yet
    swept = -1  # seconds 0 .. swept are sampled
    m_run = initial  # the unlagged read's size at the last read
    e_filled = -1  # pre_E holds E's size for seconds 0 .. e_filled
    quiet_from = 0  # no copy's read membership changes from this second on (see top)
    quiet_until = 0  # no round is triggered before this second (settled up to it)
    # The per-second figures (rules.account); the disturbance's are over the seconds from
    # the first death event on (none: from duration + 1, past the end).
    acc = start_account(ev[0, 0] if n_ev > 0 and ev[0, 0] <= duration else duration + 1)
    # The initial copies: the first of creation order, created, ready and listed before
    # the run (BEFORE_RUN), numbered first on the ledger delay's stream; live and read
    # from second 0 on, without queued changes.
    if initial > capacity:
        return _WIDER
    for k in range(initial):
        g = ledger_delay(G, seed, k, G_spread, lists, g_lo, g_hi)
        cp[_BIRTH, n] = BEFORE_RUN
        cp[_READY, n] = BEFORE_RUN
        cp[_G, n] = g
        cp[_LISTED, n] = BEFORE_RUN + g
        cp[_REMOVED, n] = _NEVER
        cp[_DEATH, n] = _NEVER
        cp[_BY_COMMAND, n] = 0
        cp[_REMEMBERED, n] = 0
        n += 1
    refused = _DONE  # or why the cell stopped midway
    s = 0
    while s <= duration:
        # Sample seconds before s: nothing can change them any more. (None of them holds an
        # event or a change of desired: the loop stops at each, and counts the run so far.)
        live, since, acc = _sample(ps, bits, swept + 1, s, live, since, desired, acc)
        swept = s - 1
        # 0. A change of desired takes effect; an event (a change, a death event) opens its
        # window.
        event = i_ev < n_ev and ev[0, i_ev] == s
        if i_sc < n_sc and ev[2, i_sc] == s:
            acc = _count_run(acc, since, s, live, desired)
            since = s
            while i_sc < n_sc and ev[2, i_sc] == s:
                acc = change_desired(acc, desired, ev[3, i_sc])
                desired = ev[3, i_sc]
                i_sc += 1
            event = True
        if event:
            acc = _count_run(acc, since, s, live, desired)
            since = s
            acc = begin_event(acc, s, responses, base)
        # 1. Scripted deaths: the oldest copies that run die (terminating ones included).
        kill = 0
        while i_ev < n_ev and ev[0, i_ev] == s:
            kill += ev[1, i_ev]
            i_ev += 1
        i = 0
        while kill > 0 and i < n:
            if runs(cp[_READY, i], cp[_DEATH, i], s):
                if cp[_DEATH, i] != _NEVER:  # a terminating copy: its later death is undone
                    _queue(ps, bits, _LIVE, cp[_DEATH, i], 1, duration)
                _queue(ps, bits, _LIVE, s, -1, duration)
                cp[_DEATH, i] = s
                if cp[_REMOVED, i] == _NEVER:
                    cp[_REMOVED, i] = s
                    cp[_BY_COMMAND, i] = 0
                    quiet_from = max(quiet_from, s + max(cp[_G, i], 1))
                    _mark_removal(s, cp[_BIRTH, i], cp[_LISTED, i], cp[_G, i], False, ps, bits,
                                  duration, lagged, watch)
                kill -= 1
            i += 1
        # 2. Restarts wipe the controller's memory.
        while p_rs < n_rs and restarts[p_rs] <= s:
            for i in range(n):
                cp[_REMEMBERED, i] = 0
            exp_active = False
            copy_into(memory[NOW], MEMORY_INIT)
            p_rs += 1
        # 3. A round: a periodic round time, or (watch) a read that differs from t - 1's.
        if lag_per_second:
            xs_filled = _fill_lag(ps, xs_filled, s, lists, w_lo, w_hi)
            x = ps[_XS, s]
        else:
            x = stale_by(s, lists, w_lo, w_hi)
        run = s == next_periodic
        if run:
            next_periodic = next_round(s, U, U_jitter, seed, periodic_i)
            periodic_i += 1
        elif watch:
            x_before = ps[_XS, s - 1] if lag_per_second else 0
            if x != x_before:  # a lag window opens or closes: compare copy by copy
                for i in range(n):
                    birth, listed, removed, g = (cp[_BIRTH, i], cp[_LISTED, i],
                                                 cp[_REMOVED, i], cp[_G, i])
                    by_command = cp[_BY_COMMAND, i] != 0
                    if _in_read(s, x, birth, listed, removed, g, by_command) != _in_read(
                            s - 1, x_before, birth, listed, removed, g, by_command):
                        run = True
                        break
            elif x == 0:
                run = ps[_CM, s] != 0
            else:
                run = s - x >= 0 and ps[_CE, s - x] != 0
        if run:
            rounds += 1
            # 4. The read, as of second r.
            r = s - x
            if x == 0:
                m_run += _drain(ps, bits, _M, m_from, s)
                m_from = s + 1
                seen = m_run
            elif r < 0:
                seen = initial  # the ledger before the run: the initial copies
            else:
                while e_filled < r:
                    e_filled += 1
                    before = ps[_PRE, e_filled - 1] if e_filled else initial
                    ps[_PRE, e_filled] = ps[_DE, e_filled] + before
                seen = ps[_PRE, r]
            reads += seen + ledger_base
            # 5. The decision: the controller's, on what the round lets it see.
            pending = 0
            if SEES_PENDING:  # its creations that answered and are not read yet
                for i in range(n):
                    if cp[_REMEMBERED, i] and pending_at(cp[_LISTED, i], cp[_REMOVED, i], r):
                        pending += 1
            unobserved = exp_active and r < exp_seen
            if HAS_MEMORY and STEADY:
                copy_into(memory[BEFORE], memory[NOW])
            diff = decide(Round(s, desired, seen, pending, 1 if unobserved else 0,
                                exp_set if exp_active else -1), p, memory[NOW])
            if diff > MAX_CORRECTION or diff < -MAX_CORRECTION:
                refused = _BAD_CORRECTION
                break
            if gain_pm < 1000:
                diff = damped_int(diff, gain_pm)
            diff = capped(diff, cap)
            if diff > 0:  # 6. Creates, in slow-start batches if enabled.
                exp_seen = -_NEVER
                remaining = diff
                batch = 1 if slow_start else diff
                while remaining > 0:
                    batch = min(batch, remaining)
                    error = False
                    for _ in range(batch):
                        kind = create_outcome(s, create_commands, seed, fail_pm, lost_pm,
                                              lists, fault_left, f_lo, f_hi)
                        create_commands += 1
                        if kind == FAIL:  # nothing is created
                            failed += 1
                            error = True
                            continue
                        if n == capacity:
                            return _WIDER
                        ready = ready_at(s, B, seed, k_made, B_spread, lists, b_lo, b_hi)
                        g = ledger_delay(G, seed, k_made, G_spread, lists, g_lo, g_hi)
                        listed = listed_at(s, ready, g, created_listed)
                        cp[_BIRTH, n] = s
                        cp[_READY, n] = ready
                        cp[_G, n] = g
                        cp[_LISTED, n] = listed
                        quiet_from = max(quiet_from, s + 1, listed)
                        cp[_REMOVED, n] = _NEVER
                        cp[_DEATH, n] = _NEVER
                        cp[_BY_COMMAND, n] = 0
                        cp[_REMEMBERED, n] = 1 if kind == OK else 0
                        _queue(ps, bits, _LIVE, ready, 1, duration)
                        _queue(ps, bits, _M, max(s + 1, listed), 1, duration)
                        if watch:
                            _add(ps, _CM, max(s + 1, listed), 1)
                        if lagged:
                            _add(ps, _DE, listed, 1)
                            _add(ps, _CE, listed, 1)
                        if kind == OK:  # expectations wait for the creations that answered
                            exp_seen = max(exp_seen, listed)
                        else:
                            error = True
                        n += 1
                        k_made += 1
                        created += 1
                    remaining -= batch
                    if error and slow_start:
                        break
                    batch *= 2
                exp_active, exp_set = True, s
            elif diff < 0:  # 7. Deletes to the oldest or newest entries it read, or
                commands -= diff  # to those the controller's rank puts first
                hit = min(-diff, seen)
                exp_seen = -_NEVER
                if RANKED:
                    ranked = _ranked(cp, n, s, r, delete_newest, p)
                    if ranked is None:
                        refused = _BAD_RANK
                        break
                    targets = ranked
                for h in range(n):
                    if hit == 0:
                        break
                    if RANKED:
                        i = targets[h]
                    else:
                        i = n - 1 - h if delete_newest else h
                        if not on_ledger(cp[_LISTED, i], cp[_REMOVED, i], cp[_G, i], r):
                            continue
                    hit -= 1
                    if cp[_REMOVED, i] == _NEVER:
                        death = dies_at(s, grace)
                        cp[_REMOVED, i] = s
                        cp[_DEATH, i] = death
                        cp[_BY_COMMAND, i] = 1
                        quiet_from = max(quiet_from, s + max(cp[_G, i], 1))
                        _queue(ps, bits, _LIVE, max(cp[_READY, i], death), -1, duration)
                        _mark_removal(s, cp[_BIRTH, i], cp[_LISTED, i], cp[_G, i], True, ps, bits,
                                      duration, lagged, watch)
                        deleted += 1
                    exp_seen = max(exp_seen, cp[_REMOVED, i] + cp[_G, i])
                exp_active, exp_set = True, s
            elif STEADY and not (HAS_MEMORY and memory_changed(memory[NOW], memory[BEFORE])):
                # settled? then skip the idle rounds up to the next death or change of
                # desired (see top)
                oldest = r  # the oldest second a read at s or later can look at
                for w in range(w_lo, w_hi):
                    if lists[_TO, w] > s + 1:
                        oldest = min(oldest, max(s + 1, lists[_FROM, w]) - lists[_EXTRA, w])
                if oldest >= quiet_from:
                    end = min(ev[0, i_ev], duration + 1) if i_ev < n_ev else duration + 1
                    if i_sc < n_sc:  # a change of desired: a round may correct again
                        end = min(end, ev[2, i_sc])
                    if HAS_MEMORY and p_rs < n_rs:  # a restart resets its memory
                        end = min(end, restarts[p_rs])
                    idle = 0
                    if U_jitter == 0:
                        if next_periodic < end:
                            idle = (end - 1 - next_periodic) // U + 1
                            next_periodic += idle * U
                            periodic_i += idle
                    else:
                        while next_periodic < end:
                            next_periodic = next_round(next_periodic, U, U_jitter, seed,
                                                       periodic_i)
                            periodic_i += 1
                            idle += 1
                    rounds += idle
                    reads += idle * (seen + ledger_base)
                    quiet_until = end
        if n >= compact_at:
            # Drop copies no later read, death, pending count or watch check can involve
            # (amortised: only once the copies held have doubled since the last time).
            kept = 0
            for i in range(n):
                if not (cp[_DEATH, i] <= s and cp[_REMOVED, i] + cp[_G, i] + max_extra + 1 <= s):
                    if kept != i:
                        cp[_BIRTH, kept] = cp[_BIRTH, i]
                        cp[_READY, kept] = cp[_READY, i]
                        cp[_G, kept] = cp[_G, i]
                        cp[_LISTED, kept] = cp[_LISTED, i]
                        cp[_REMOVED, kept] = cp[_REMOVED, i]
                        cp[_DEATH, kept] = cp[_DEATH, i]
                        cp[_BY_COMMAND, kept] = cp[_BY_COMMAND, i]
                        cp[_REMEMBERED, kept] = cp[_REMEMBERED, i]
                    kept += 1
            n = kept
            compact_at = max(_COMPACT_FROM, 2 * n)
        # 8. Sample the live count (at the next step, with the seconds up to it); find the
        # next second at which a round can run, a copy can die or desired changes.
        nxt = min(next_periodic, duration + 1)
        if i_ev < n_ev:
            nxt = min(nxt, ev[0, i_ev])
        if i_sc < n_sc:
            nxt = min(nxt, ev[2, i_sc])
        if watch and quiet_until < nxt:  # the first second whose read may differ
            if not lag_per_second:  # only where the unlagged read's queue holds a change
                t = _next(bits, _M, s + 1, nxt)
                while t < nxt:
                    if ps[_CM, t] != 0:
                        nxt = t
                        break
                    t = _next(bits, _M, t + 1, nxt)
            else:
                xs_filled = _fill_lag(ps, xs_filled, nxt - 1, lists, w_lo, w_hi)
                for t in range(s + 1, nxt):
                    if ps[_XS, t] != ps[_XS, t - 1]:
                        changed = True  # a window opens or closes: checked copy by copy
                    elif ps[_XS, t] == 0:
                        changed = ps[_CM, t] != 0
                    else:
                        changed = t - ps[_XS, t] >= 0 and ps[_CE, t - ps[_XS, t]] != 0
                    if changed:
                        nxt = t
                        break
        s = nxt
    if refused != _DONE:  # (out of the loop by a break: a return there costs the loop time)
        return refused
    live, since, acc = _sample(ps, bits, swept + 1, duration + 1, live, since, desired, acc)
    acc = _count_run(acc, since, duration + 1, live, desired)
    end_events(acc, duration, responses, base)
    _drain(ps, bits, _M, m_from, duration)  # leave the queues empty for the next cell
    written = min(quiet_from + 1, ps.shape[1])
    if watch:
        ps[_CM, :written] = 0
    if lagged:
        ps[_DE, :written] = 0
        ps[_CE, :written] = 0
    write_metrics(out, row, (rounds, created, commands, deleted, reads, deaths_total,
                             create_commands, failed), acc, duration)
    return _DONE


def _simulate_world(  # noqa: PLR0913, PLR0917 — numba takes arrays positionally
    cparams: Int64Array2D, rows: Int64Array, out: Int64Array2D, responses: Int64Array2D,
    response_base: Int64Array, created_listed: BoolArray, cap: Int64Array,
    gain_pm: Int64Array, desired: Int64Array, U: Int64Array, G: Int64Array,
    B: Int64Array, duration: Int64Array, ledger_base: Int64Array, initial: Int64Array,
    B_spread: Int64Array, G_spread: Int64Array, U_jitter: Int64Array, seed: Int64Array,
    grace: Int64Array, delete_newest: BoolArray, watch: BoolArray, slow_start: BoolArray,
    fail_pm: Int64Array, lost_pm: Int64Array,
    death_offsets: Int64Array, death_at: Int64Array, death_count: Int64Array,
    scale_offsets: Int64Array, scale_at: Int64Array, scale_desired: Int64Array,
    restart_offsets: Int64Array, restart_at: Int64Array,
    lag_offsets: Int64Array, fault_offsets: Int64Array, b_offsets: Int64Array,
    g_offsets: Int64Array, lists: Int64Array2D,
) -> None:
    """Run the cells ``rows`` of the batch (in that order), each into its column of ``out``
    (a metric a row), the responses to its events into ``responses`` from column
    ``response_base[i]`` on (``i`` its row); a cell whose controller returned a correction
    beyond the bound has -1 rounds. ``cparams`` holds the controller parameters of each of
    ``rows``, a row each (the controller is the one this function was specialised for). The
    inputs are the whole batch's, read through ``rows``: no part of the batch is gathered.
    A cell's lag windows, fault events and delay tables are columns of ``lists``
    (:func:`_batch_lists`), from its offset to the next cell's."""
    n = rows.shape[0]
    n_blocks = (n + _BLOCK - 1) // _BLOCK
    for b in numba.prange(n_blocks):
        lo = b * _BLOCK
        hi = min(n, lo + _BLOCK)
        max_ev = 1
        max_rs = 1
        max_faults = 1
        max_seconds = 1
        for j in range(lo, hi):
            i = rows[j]
            max_seconds = max(max_seconds, duration[i] + 1)
            max_ev = max(max_ev, death_offsets[i + 1] - death_offsets[i],
                         scale_offsets[i + 1] - scale_offsets[i])
            max_rs = max(max_rs, restart_offsets[i + 1] - restart_offsets[i])
            max_faults = max(max_faults, fault_offsets[i + 1] - fault_offsets[i])
        ev = np.empty((4, max_ev), np.int64)  # death events (at, count), changes (at, desired)
        rs_at = np.empty(max_rs, np.int64)
        rs_dummy = np.empty(max_rs, np.int64)
        fault_left = np.empty(max_faults, np.int64)
        capacity = _FIRST_CAPACITY
        cp = np.empty((_N_COPY_ROWS, capacity), np.int64)
        per_second = np.zeros((_N_SECOND_ROWS, max_seconds), np.int64)
        bits = np.zeros((2, (max_seconds + 63) // 64), np.uint64)
        memory = np.empty((2, MEMORY_INIT.shape[0]), np.int64)
        for j in range(lo, hi):
            i = rows[j]
            p = PARAMS_TYPE(*to_fixed_tuple(cparams[j], N_PARAMS))  # type: ignore[call-arg]
            # Deaths in one second commute (together they kill min(total, live) of the
            # oldest live copies), so only their order in time matters.
            n_ev = sorted_into(death_at, death_count, death_offsets[i], death_offsets[i + 1],
                                ev[0], ev[1])
            n_sc = scale_offsets[i + 1] - scale_offsets[i]  # sorted already (the kind's rule)
            for k in range(n_sc):
                ev[2, k] = scale_at[scale_offsets[i] + k]
                ev[3, k] = scale_desired[scale_offsets[i] + k]
            n_rs = sorted_into(restart_at, restart_at, restart_offsets[i],
                                restart_offsets[i + 1], rs_at, rs_dummy)
            w_lo, w_hi = lag_offsets[i], lag_offsets[i + 1]
            f_lo, f_hi = fault_offsets[i], fault_offsets[i + 1]
            while True:
                for f in range(f_lo, f_hi):
                    fault_left[f - f_lo] = lists[_COUNT, f]
                ended = _run_cell(
                    p, memory, created_listed[i], cap[i], gain_pm[i], desired[i],
                    U[i], G[i], B[i], duration[i], ledger_base[i], initial[i], B_spread[i],
                    G_spread[i],
                    U_jitter[i], seed[i], grace[i], delete_newest[i], watch[i], slow_start[i],
                    fail_pm[i], lost_pm[i], ev, n_ev, n_sc, rs_at, n_rs, lists, w_lo, w_hi,
                    f_lo, f_hi, fault_left, b_offsets[i], b_offsets[i + 1],
                    g_offsets[i], g_offsets[i + 1], cp, per_second, bits, out, i,
                    responses, response_base[i],
                )
                if ended >= _BAD_CORRECTION:  # refused: _BAD_CORRECTION or _BAD_RANK
                    out[0, i] = -ended
                    per_second[:] = 0  # it stopped midway: its entries are not cleared
                    bits[:] = 0
                    break
                if ended == _DONE:
                    break
                capacity *= 2  # the cell holds more copies at once: run it again, wider
                per_second[:] = 0  # as it stopped midway, it did not clear its entries
                bits[:] = 0
                cp = np.empty((_N_COPY_ROWS, capacity), np.int64)


#: The functions compiled per controller (:func:`.specialise.specialise`), callees first:
#: the deletion ranking, the cell loop, then the batch loop on one thread and on all of them.
_PER_CONTROLLER: Final = {"_ranked": {"nogil": True}, "_run_cell": {"nogil": True},
                          "_simulate_world": {},
                          "_simulate_world@parallel": {"parallel": True}}
#: Batches smaller than this run on one thread.
PARALLEL_MIN_CELLS: Final = 8 * _BLOCK

#: The keyword arrays :func:`simulate_world_arrays` takes, in the kernel's order: one per
#: parameter of :class:`reconsim.model.params.Cell`, as its kind encodes it
#: (:meth:`reconsim.model.kinds.Kind.arrays`).
WORLD_INPUTS: Final[tuple[str, ...]] = (
    "controller", "observe", "max_per_round", "gain", "desired", "U", "G", "B",
    "duration", "ledger_base", "initial", "B_spread", "G_spread", "U_jitter", "seed",
    "grace", "delete_order", "trigger", "slow_start", "fail_rate", "lost_rate",
    "deaths_offsets", "deaths_at", "deaths_count", "scale_offsets", "scale_at",
    "scale_desired", "restart_at_offsets", "restart_at",
    "lag_offsets", "lag_from", "lag_to", "lag_extra",
    "create_faults_offsets", "create_faults_at", "create_faults_count", "create_faults_kind",
    "B_delays_offsets", "B_delays_value", "B_delays_weight",
    "G_delays_offsets", "G_delays_value", "G_delays_weight",
)
#: The inputs the specialised kernel takes after the controller's parameters, the rows to
#: run and the metrics' matrix, and before the lists (:func:`_batch_lists`).
_KERNEL_INPUTS: Final = WORLD_INPUTS[1:WORLD_INPUTS.index("lag_offsets")]
#: Inputs the kernel reads as booleans, with the code that means true.
_FLAGS: Final = {
    "observe": CREATED,
    "delete_order": params.DELETE_ORDERS.index("newest"),
    "trigger": params.TRIGGERS.index("watch"),
    "slow_start": 1,
    "create_faults_kind": params.FAULT_KINDS.index("lost"),
}


#: Bytes of scratch a copy takes: its six times and two flags.
_BYTES_PER_COPY: Final = 8 * _N_COPY_ROWS
#: Bytes of scratch a second takes: its per-second rows and its two bits.
_BYTES_PER_SECOND: Final = 8 * _N_SECOND_ROWS + 1


def _refuse_copies(a: Mapping[str, NDArray[Any]]) -> None:
    """Raise :class:`~reconsim.errors.KernelRefusalError` for a cell whose copies might not fit
    its scratch: this kernel holds a record per copy, and a cell creates at most
    ``desired`` copies a round (``a["desired"]``: the largest the cell will have), one
    round a second at most with jitter or watch triggers (the capacity doubles as it grows,
    so twice that)."""
    every_second = a["trigger"].astype(bool) | (a["U_jitter"].astype(np.int64) > 0)
    U = np.where(every_second, 1, np.maximum(a["U"], 1)).astype(np.float64)
    duration = a["duration"].astype(np.float64)
    copies = ((np.floor(duration / U) + 1) * a["desired"].astype(np.float64)
              + a["initial"].astype(np.float64))
    scratch = 2 * _BYTES_PER_COPY * copies + _BYTES_PER_SECOND * (duration + 1)
    if not len(scratch) or scratch.max() < MAX_SCRATCH_BYTES:
        return
    i = int(np.argmax(scratch >= MAX_SCRATCH_BYTES))
    raise KernelRefusalError(
        i, f"(desired {a['desired'][i]} at most, U {a['U'][i]}, duration "
        f"{a['duration'][i]}) may create {copies[i]:.3g} copies, {scratch[i] / 2**30:.3g} GiB "
        f"of the world kernel's scratch, above the {MAX_SCRATCH_BYTES / 2**30:g} GiB a cell "
        "may take")


def simulate_world_arrays(  # noqa: PLR0913 — the batch's options, and its arrays
    *, controllers: Sequence[Controller] | None = None, parallel: bool | None = None,
    rows: Int64Array | None = None, out: Int64Array2D | None = None,
    responses: Int64Array2D | None = None, response_base: Int64Array | None = None,
    **arrays: NDArray[np.generic],
) -> Int64Array:
    """Run a batch of validated cells in the world model; an ``(n, len(WORLD_OUT_COLUMNS))``
    int64 matrix.

    Takes :data:`WORLD_INPUTS` as keywords, as :func:`reconsim.model.simulate.kernel_inputs`
    gives them: those of :func:`reconsim.model.kernels.count.simulate_arrays` (a cell's changes
    of desired among them: ``scale_at`` and ``scale_desired`` over ``scale_offsets``, in
    increasing ``at``), plus the richer world's parameters — ``fail_rate`` and ``lost_rate`` in
    thousandths, ``delete_order``, ``trigger`` and ``create_faults_kind`` as codes (their index
    in the choices), ``slow_start`` as 0 or 1 — and the lag windows and create faults of cell
    ``i`` as the slices ``[lag_offsets[i]:lag_offsets[i + 1]]`` and
    ``[create_faults_offsets[i]:create_faults_offsets[i + 1]]`` of their arrays, in listed order
    (order matters for both: the first window holding t applies, the first fault event with
    count left is used). ``controller`` holds each cell's index in ``controllers`` (default:
    every known controller, whose index is its code,
    :func:`~reconsim.model.controllers.registry.known`), and each of their parameters is one
    more keyword array, by its name (its values matter only in the rows of its controller).

    ``rows`` runs only those cells of the batch (the others may be of any world: they are
    neither run nor checked), read in place: a part of a batch is not gathered. The metrics
    land in ``out``, a metric a row and a cell a column (``(len(WORLD_OUT_COLUMNS), n)``,
    made when not given; with ``rows``, the other cells' columns are left as they are),
    and the result is ``out.T``, a cell a row.

    Each cell's responses to its events (:func:`reconsim.model.rules.begin_event`: a column
    per death event or change of desired within the run, in order; the ``responses`` metric
    counts them) are written into ``responses`` (an int64 matrix of
    :data:`~reconsim.model.rules.RESPONSE_ROWS` rows) from column ``response_base[i]`` on,
    ``i`` the cell's index in the batch; both as
    :func:`reconsim.model.kernels.arrays.response_buffers` makes them, which gives a
    throwaway buffer when they are not given.
    """
    missing = [name for name in WORLD_INPUTS if name not in arrays]
    if missing:
        raise TypeError(f"simulate_world_arrays: missing {', '.join(missing)}")
    n = len(arrays["controller"])
    check_offsets(arrays, n, {**SCHEDULES, "lag": "lag_from",
                              "create_faults": "create_faults_at",
                              "B_delays": "B_delays_value", "G_delays": "G_delays_value"})
    if out is None:
        out = np.empty((_N_OUT, n), np.int64) if rows is None else np.zeros((_N_OUT, n),
                                                                            np.int64)
    if out.shape != (_N_OUT, n) or out.dtype != np.int64 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous int64 matrix of shape {(_N_OUT, n)}")
    controllers = registry.known() if controllers is None else controllers
    names = (*WORLD_INPUTS, *(p for p in controller_params(controllers) if p in arrays))
    # Every input read-only, as numba compiles the kernel for them, once here.
    a = {name: frozen(np.asarray(arrays[name]) == _FLAGS[name], np.bool_) if name in _FLAGS
         else frozen(arrays[name]) for name in names}
    for name in ("B_delays", "G_delays"):
        a[f"{name}_cumulative"] = frozen(cumulative(a[f"{name}_offsets"],
                                                    a.pop(f"{name}_weight")))
    _refuse(a, rows)
    todo = running_order(a, None if rows is None else np.asarray(rows, np.int64))
    if not len(todo):
        return out.T
    responses, response_base = response_outputs(a, responses, response_base, todo)
    if parallel is None:  # threads only where there are several, for a batch worth them
        parallel = len(todo) >= PARALLEL_MIN_CELLS and numba.get_num_threads() > 1
    inputs = (out, responses, response_base, *(a[name] for name in _KERNEL_INPUTS),
              *_batch_lists(a))
    # Each controller's cells, one run of the running order, on its own kernel; blocks
    # handed out one at a time, as some cost more than others.
    codes = np.asarray(a["controller"])[todo]
    edges = [0, *(np.flatnonzero(codes[1:] != codes[:-1]) + 1), len(todo)]
    with numba.parallel_chunksize(1):
        for lo, hi in itertools.pairwise(edges):
            _run_group(controllers[int(codes[lo])], a, frozen(todo[lo:hi]), inputs, parallel)
    return out.T


def _refuse(a: Mapping[str, NDArray[Any]], rows: Int64Array | None) -> None:
    """Raise :class:`~reconsim.errors.KernelRefusalError` for the first of ``rows`` (None:
    every cell) whose figures could pass int64 or whose scratch would be too large. The
    whole batch is checked first, in a few reductions; only where some cell fails are
    ``rows`` looked at alone."""
    try:
        _refuse_cells(a)
    except KernelRefusalError:
        if rows is None:
            raise
        chosen = np.sort(np.asarray(rows, np.int64))
        with numbered(chosen):
            _refuse_cells(take_rows(dict(a), chosen))


def _refuse_cells(a: Mapping[str, NDArray[Any]]) -> None:
    """:func:`_refuse` of every cell of ``a``."""
    # The count kernel's bounds, read for the worst this world allows: a round every
    # second where rounds are jittered or watch-triggered, the longest delays. Creates per
    # round stay at most `desired` (lost and failed commands add none), so the bounds hold;
    # with a scale schedule, the largest desired the cell will have.
    top = largest_desired(a)
    refuse_unsafe(
        desired=top, U=np.where(a["trigger"] | (a["U_jitter"] > 0), 1, a["U"]),
        G=a["G"] + worst_extra(a, "G"), B=a["B"] + worst_extra(a, "B") + a["grace"],
        duration=a["duration"], ledger_base=a["ledger_base"],
        deaths_offsets=a["deaths_offsets"], deaths_count=a["deaths_count"],
        restart_at_offsets=a["restart_at_offsets"], initial=a["initial"])
    _refuse_copies({**a, "desired": top})


#: A batch's lists as :func:`_batch_lists` lays them: each kind's value arrays, by the row of
#: ``lists`` they fill.
_LIST_ROWS: Final = (
    ("lag", {_FROM: "lag_from", _TO: "lag_to", _EXTRA: "lag_extra"}),
    ("create_faults", {_AT: "create_faults_at", _LOST: "create_faults_kind",
                       _COUNT: "create_faults_count"}),
    ("B_delays", {_VALUE: "B_delays_value", _CUMULATIVE: "B_delays_cumulative"}),
    ("G_delays", {_VALUE: "G_delays_value", _CUMULATIVE: "G_delays_cumulative"}),
)


def _batch_lists(a: Mapping[str, NDArray[np.generic]]) -> tuple[Int64Array, ...]:
    """The batch's lag windows, fault events, B delay tables and G delay tables, in that
    order, side by side in the columns of one array (rows :data:`_FROM` .. :data:`_EXTRA`,
    :data:`_AT` .. :data:`_COUNT`, :data:`_VALUE` and :data:`_CUMULATIVE`; a row a kind does
    not use is zero), after each kind's offsets into its columns: one array argument for a
    cell's run instead of nine."""
    sizes = [len(a[next(iter(fields.values()))]) for _, fields in _LIST_ROWS]
    lists = np.zeros((3, sum(sizes)), np.int64)
    offsets = []
    start = 0
    for (kind, fields), size in zip(_LIST_ROWS, sizes, strict=True):
        for row, name in fields.items():
            lists[row, start:start + size] = a[name]
        offsets.append(frozen(a[f"{kind}_offsets"] + start))
        start += size
    return (*offsets, frozen(lists))


def _run_group(controller: Controller, a: Mapping[str, NDArray[np.generic]],
               rows: Int64Array, inputs: tuple[Int64Array, ...], parallel: bool) -> None:
    """The cells ``rows`` of the batch, all of ``controller``, on its specialised kernel.
    ``inputs`` are what the kernel takes after the rows: the metrics' matrix (``out``,
    whose columns ``rows`` receive them), the responses' matrix and each cell's first
    column of it (:func:`~reconsim.model.kernels.arrays.response_outputs`), the arrays
    :data:`_KERNEL_INPUTS` names and :func:`_batch_lists`; ``a`` holds the controller's
    parameters. Every array but ``out`` is read-only already (:func:`frozen`), as the
    kernel was compiled for. A row its threads left unrun runs again alone
    (:func:`~reconsim.model.kernels.specialise.run_rows`)."""
    cparams = params_matrix(controller, a, rows)
    kernels = _kernels(controller)
    kernel = kernels["_simulate_world@parallel" if parallel else "_simulate_world"]
    out = inputs[0]

    def run() -> Int64Array:
        out[0, rows] = UNRUN
        kernel(cparams, rows, *inputs)
        first: Int64Array = out[0, rows]
        return first

    run_rows(kernel, "world kernel", controller, run,
             lambda j: kernels["_simulate_world"](cparams[j:j + 1], rows[j:j + 1], *inputs))
    refused = out[0, rows]
    bad = np.flatnonzero(refused < 0)
    if len(bad):
        row = int(rows[bad[0]])
        if refused[bad[0]] == -_BAD_RANK:
            raise KernelDecisionError(
                f"controller {controller.name!r}: rank returned a key of 2^62 or more in "
                "magnitude", row)
        raise beyond_max(controller, row)


@functools.cache
def _kernels(controller: Controller) -> dict[str, Any]:
    """The world kernel compiled for ``controller`` (cached on disk: :mod:`.specialise`)."""
    return specialise(globals(), _PER_CONTROLLER, controller)


def running_order(a: Mapping[str, NDArray[np.generic]],
                  rows: Int64Array | None = None) -> Int64Array:
    """``rows`` of the batch ``a`` (None: every cell) in the order
    :func:`simulate_world_arrays` runs them: each controller's cells side by side (each
    controller runs on a kernel of its own), in the batch's order within each."""
    codes = np.asarray(a["controller"])
    if rows is None:
        rows = np.arange(len(codes), dtype=np.int64)
    else:
        codes = codes[rows]
    if len(codes) < 2 or bool((codes[1:] >= codes[:-1]).all()):
        return rows
    return rows[np.argsort(codes, kind="stable")]
