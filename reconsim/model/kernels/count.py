"""The fast kernel: the model on whole batches of cells, as counts, round by round.

Why counts suffice. Every removal in the model takes the *oldest* copies: a
scripted death kills the oldest live copies, a delete command goes to the
oldest ledger entries. By induction the dead copies are always a prefix of
creation order, so "which copies are dead" is one number ``D``. The same
ordering makes "ready" a prefix (``R``, copies created at least B seconds
ago) and the ledger at second t exactly the copies that existed — ready ones,
or with observe="created" all created ones — and had not died at the end of
second t - G: the index range ``[D(t-G), C(t-L))`` with ``L = G + B`` (ready)
or ``L = G`` (created). So a cell's whole state is three cumulative counts
(created ``C``, ready ``R``, dead ``D``) and their histories, and the rules of
:mod:`reconsim.model.reference` become (the ``initial`` copies are the first of creation
order, ready and listed before the run: ``C`` and ``R`` start at ``initial``, and so does
``C(t-L)`` for ``t < L``; deaths take them first, so the dead prefix stays a prefix):

* seen     = C(t-L) - D(t-G)                     (initial while t < L)
* pending  = C - max(D, C(t-L), C(restart))      (remembered, alive, not yet listed)
* live     = max(0, R - D)                       (observe="created" may delete unready copies)
* a death of ``count`` at s: D += min(count, live)
* ``k`` delete commands hit indices [D(t-G), D(t-G) + min(k, seen)); those >= D die.
* expectations set at s are observed at s + L (creations), or G after the last
  targeted copy died (deletions).

A change of desired (``scale``) is an event like a death: it moves no copy, and the
deletes a step down asks for go to the oldest ledger entries like any others, so the dead
prefix stays a prefix. Desired is that of the second: a change at s applies from s's
start, so the round at s and the seconds from s on see it.

Nothing changes between the seconds where a round runs, a cohort becomes
ready, a death is scheduled or desired changes, so the kernel jumps from one such second
to the next and hands each gap — one live count, one desired, inside one event's window —
to the shared accounting (:func:`reconsim.model.rules.account`). At an event's second
(a death event, a change, or both: one event) the change takes effect first, then the
event's window opens (:func:`~reconsim.model.rules.begin_event`), then the deaths
strike, then the round runs, if one is due.

The controller's decision is its definition's (:mod:`reconsim.model.controllers`),
compiled into a kernel of its own (:mod:`.specialise`), on the round these counts make.

Settled cells skip their idle rounds. A round at s of a steady controller
(:attr:`~reconsim.model.controllers.Controller.steady`) that corrects nothing (diff = 0)
and leaves its memory as it was, while every cohort is listed (``C(s-L) = C``) and every
death is on the ledger (``D(s-G) = D``), leaves a state that only an event (a scripted
death or a change of desired) can change: the next rounds read the same ``seen = C - D``
and the same desired (no copy is created, none dies before the next death event),
nothing is pending (``C - max(D, C(t-L), ...) = 0``) and nothing unobserved
(expectations wait for at most ``s' + L`` or a death + G, both behind), so a steady
decision is 0 again, by induction, and a restart meanwhile changes nothing it uses (the
kernel applies it at the next round it steps, as before) — but for a controller with a
memory of its own, whose restart resets it: its idle rounds end there. So the ``k``
rounds before the next event or the end each add one round and ``seen + ledger_base``
reads, in closed form: ``k`` of them at once. Cohorts still becoming ready
(observe="created") change only the live count, which the gaps count as before. A cell's
cost follows its transients (rounds until it settles after the start and after each
event), not its duration: O(transient rounds + events + restarts).
No seed-001 cell is known that never settles (G 0-90, U 5-90, B 1-10, desired 3-12,
every controller: all settle within 720 s, even over 50,000 s).

The public entry point takes and returns plain NumPy arrays; polars stays in
:mod:`reconsim.model.simulate`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

import numba
import numpy as np
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array
from numba.np.unsafe.ndarray import to_fixed_tuple
from numpy.typing import NDArray

from reconsim.errors import KernelRefusalError
from reconsim.model import params
from reconsim.model.controllers import Controller, Round, registry
from reconsim.model.kernels.arrays import (
    UNRUN,
    by_controller,
    check_offsets,
    frozen,
    largest_desired,
    params_matrix,
    response_outputs,
)
from reconsim.model.kernels.rules import (
    account,
    begin_event,
    capped,
    change_desired,
    end_events,
    start_account,
    write_metrics,
)

# The controller's names, bound by specialise() for each controller (see .specialise).
from reconsim.model.kernels.specialise import (
    HAS_MEMORY,
    MEMORY_INIT,
    N_PARAMS,
    PARAMS_TYPE,
    STEADY,
    beyond_max,
    decide,
    run_rows,
    specialise,
)

#: Columns of the integer result matrix returned by :func:`simulate_arrays`.
OUT_COLUMNS: Final[tuple[str, ...]] = (
    "rounds",
    "created",
    "delete_commands",
    "deleted",
    "overshoot",
    "last_drift",  # the last second with live != desired (metrics: stable_at)
    "reads",
    "excess_copy_seconds",
    "missing_copy_seconds",
    "deaths_total",
    "overshoot_after",  # -1 stands for null (no death event within the run), and below
    "missing_after",
    "settle_after",
    "raised",  # the increases of desired during the run
    "responses",  # the events within the run: responses written (rules.begin_event)
)
_N_OUT = len(OUT_COLUMNS)
#: Cells per parallel block; each block allocates its scratch once.
_BLOCK = 2048

Int64Array = NDArray[np.int64]
Int64Array2D = NDArray[np.int64]
#: Rows of a cell's history scratch: the cohorts (a round that created, the created count
#: after it) and the dead history (a second the dead count changed, the count after it).
_HIST_T, _HIST_C, _DH_T, _DH_D = range(4)
#: Rows of a cell's event scratch: its death events (second, count), sorted, its changes
#: of desired (second, desired), in their (increasing) order, and its restarts, sorted (one
#: array for all three: each array a cell's run is passed costs its reference counts).
_EV_AT, _EV_COUNT, _SC_AT, _SC_DESIRED, _RS_AT, _EV_ROWS = range(6)


#: The ``observe`` code of "created", in :data:`reconsim.model.params.OBSERVE` order.
CREATED = params.OBSERVE.index("created")
#: The largest correction a round may make.
MAX_CORRECTION: Final = params.MAX_COPIES

#: The damped correction, the very function the reference model calls, compiled.
damped_int = numba.njit(cache=True, nogil=True)(params.damped)


@numba.njit(cache=True, nogil=True)
def sorted_into(  # noqa: PLR0913, PLR0917 — numba takes arrays positionally
    src_at: Int64Array, src_val: Int64Array, lo: int, hi: int,
    dst_at: Int64Array, dst_val: Int64Array,
) -> int:
    """Copy events lo..hi-1 into dst sorted by time (stable insertion sort: lists are short)."""
    n = 0
    for j in range(lo, hi):
        k = n
        while k > 0 and dst_at[k - 1] > src_at[j]:
            dst_at[k] = dst_at[k - 1]
            dst_val[k] = dst_val[k - 1]
            k -= 1
        dst_at[k] = src_at[j]
        dst_val[k] = src_val[j]
        n += 1
    return n


def _borrowed_view(typingctx: Any, array: Any) -> Any:
    """The typing and the code of :func:`borrowed`."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        source = make_array(array)(context, builder, value=args[0])  # type: ignore[no-untyped-call]
        view = make_array(array)(context, builder)  # type: ignore[no-untyped-call]
        populate_array(view, data=source.data, shape=source.shape,  # type: ignore[no-untyped-call]
                       strides=source.strides, itemsize=source.itemsize, meminfo=None)
        return view._getvalue()

    return array(array), codegen


#: ``borrowed(array)``, in compiled code: ``array`` as a borrowed view, the same data,
#: shape and strides without a reference count (a null meminfo), for the cell loop to pass
#: and slice at no cost while the array's owner keeps it alive. numba counts a reference at
#: every array a function takes and every slice it makes, an atomic operation each (two
#: per cell and array, two per event a rule writes: measured, 15 % of the count kernel's
#: time on the default sweep): a borrowed view's counts are no-ops. One must not outlive
#: its owner, nor leave the kernel.
borrowed: Callable[[NDArray[Any]], NDArray[Any]] = intrinsic(_borrowed_view)  # type: ignore[assignment]


#: Rows of a cell's memory scratch: the controller's memory, and its copy before a round
#: (to tell whether a round that corrected nothing changed it).
NOW, BEFORE = 0, 1


@numba.njit(cache=True, nogil=True, inline="always")
def copy_into(dst: Any, src: Any) -> None:
    """``dst[:] = src`` for arrays of one length, as a loop: numba's slice assignment
    checks the shapes with an error message whose string formatting takes seconds to
    compile in every process that compiles a kernel."""
    for k in range(dst.shape[0]):
        dst[k] = src[k]


@numba.njit(cache=True, nogil=True)
def first_above(a: Int64Array, n: int, x: int) -> int:
    """The first index ``i < n`` with ``a[i] > x`` (``n`` if none), ``a[:n]`` ascending:
    ``np.searchsorted(a[:n], x, side="right")`` by bisection (numba's searchsorted compiles
    comparisons for every dtype, a second or two in every cold process)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] > x:
            hi = mid
        else:
            lo = mid + 1
    return lo


@numba.njit(cache=True, nogil=True, inline="always")
def memory_changed(mem: Int64Array, before: Int64Array) -> bool:
    """Whether a round changed the controller's memory."""
    for k in range(mem.shape[0]):  # noqa: SIM110 — numba compiles a loop, not a generator
        if mem[k] != before[k]:
            return True
    return False


def _run_cell(  # noqa: PLR0912, PLR0913, PLR0915, PLR0917 — one flat loop is what makes it fast
    p: Any, memory: Int64Array2D, created_listed: bool, cap: int,
    gain_pm: int, desired: int, U: int, G: int, B: int, duration: int, ledger_base: int,
    initial: int, ev: Int64Array2D, n_ev: int, n_sc: int, n_rs: int,
    hs: Int64Array2D, responses: Int64Array2D, base: int,
    out: Int64Array2D, row: int,
) -> bool:
    """Run cell ``row`` into column ``row`` of ``out`` (a metric a row) and its responses
    into columns ``base …`` of ``responses``; False if its controller returned a correction
    beyond :data:`reconsim.model.kinds.MAX_COPIES`. Its death events are the first ``n_ev``
    columns of ``ev``'s rows _EV_AT, _EV_COUNT, sorted, its changes of desired the first
    ``n_sc`` of rows _SC_AT, _SC_DESIRED, its restarts the first ``n_rs`` of row _RS_AT,
    sorted; ``hs`` is scratch for its histories (rows
    _HIST_T, _HIST_C, _DH_T, _DH_D); ``p`` holds its
    controller's parameters, ``memory`` is scratch for its memory (rows :data:`NOW`,
    :data:`BEFORE`; the controller is the one this function was specialised for:
    :mod:`.specialise`). Few array arguments, one exit from the loop: numba passes each
    array as a struct and counts its references, which costs more than a settled cell's
    rounds, and a return from inside the loop slowed all of it."""
    deaths_total = 0
    for j in range(n_ev):
        deaths_total += ev[_EV_COUNT, j]
    L = G if created_listed else G + B  # seconds from creation to listed
    # Cohorts: hs[_HIST_T, j] is a round that created, hs[_HIST_C, j] the created count
    # after it.
    # Dead history: hs[_DH_D, j] is the dead count after a change at second hs[_DH_T, j].
    n_hist = 0
    n_dh = 0
    # The initial copies are the first of creation order, created, ready and listed before
    # the run: C, R and C(t - L) start at `initial` (no cohort needed: nothing waits for them).
    C = initial  # created so far, the initial copies included
    R = initial  # ready so far (a prefix of creation order)
    D = 0  # dead so far (a prefix too)
    C_restart = 0  # created before the controller's last restart: forgotten
    exp_active = False  # expectations: recorded and not yet wiped
    exp_set = 0  # ... the round that recorded them
    exp_seen = 0  # ... the second from which they are all observed
    p_ready = 0  # first cohort not yet ready
    p_seen = 0  # first cohort created after t - L
    p_dead = 0  # first dead-history entry after t - G
    p_rs = 0  # first restart not yet applied
    C_lag = initial  # C at the end of second t - L
    D_lag = 0  # D at the end of second t - G
    next_round = 0
    rounds = created = commands = deleted = reads = 0
    prev = 0
    live = 0
    big = duration + 1
    # The next death event's second, the next change's and the next event's (big: none).
    i_ev = 0  # first death event not yet applied
    i_sc = 0  # first change of desired not yet applied
    next_death = ev[_EV_AT, 0] if n_ev > 0 else big
    next_change = ev[_SC_AT, 0] if n_sc > 0 else big
    next_event = min(next_death, next_change)
    # The disturbance: seconds from the first death event on (none: after = big).
    acc = start_account(min(next_death, big))  # the running values (rules.account)
    bad_correction = False
    while True:
        s = next_round if next_round <= duration else big
        if p_ready < n_hist and hs[_HIST_T, p_ready] + B < s:
            s = hs[_HIST_T, p_ready] + B
        s = min(s, next_event)
        if s > duration:
            break
        if s > prev:  # seconds prev .. s-1 all had `live` copies and one desired
            acc = account(acc, prev, s, live, desired)
        if s == next_event:
            # An event's second (a death event, a change of desired or both: one event):
            # the change takes effect, then the event's window opens; the deaths below.
            if s == next_change:
                acc = change_desired(acc, desired, ev[_SC_DESIRED, i_sc])
                desired = ev[_SC_DESIRED, i_sc]
                i_sc += 1
                next_change = ev[_SC_AT, i_sc] if i_sc < n_sc else big
            acc = begin_event(acc, s, responses, base)
        while p_ready < n_hist and hs[_HIST_T, p_ready] + B <= s:
            R = hs[_HIST_C, p_ready]
            p_ready += 1
        if s == next_death:
            kill = 0
            while i_ev < n_ev and ev[_EV_AT, i_ev] == s:
                kill += ev[_EV_COUNT, i_ev]
                i_ev += 1
            next_death = ev[_EV_AT, i_ev] if i_ev < n_ev else big
            kill = min(kill, max(0, R - D))
            if kill > 0:
                D += kill
                hs[_DH_T, n_dh] = s
                hs[_DH_D, n_dh] = D
                n_dh += 1
        next_event = min(next_death, next_change)
        if s == next_round:
            rounds += 1
            next_round += U
            while p_rs < n_rs and ev[_RS_AT, p_rs] <= s:
                C_restart = C
                exp_active = False
                copy_into(memory[NOW], MEMORY_INIT)
                p_rs += 1
            while p_seen < n_hist and hs[_HIST_T, p_seen] <= s - L:
                C_lag = hs[_HIST_C, p_seen]
                p_seen += 1
            while p_dead < n_dh and hs[_DH_T, p_dead] <= s - G:
                D_lag = hs[_DH_D, p_dead]
                p_dead += 1
            seen = C_lag - D_lag
            reads += seen + ledger_base
            # The controller's decision: its pending creations are those made since the
            # last restart, after the listed prefix and not dead.
            if HAS_MEMORY and STEADY:
                copy_into(memory[BEFORE], memory[NOW])
            diff = decide(Round(s, desired, seen, C - max(D, C_lag, C_restart),
                                1 if exp_active and s < exp_seen else 0,
                                exp_set if exp_active else -1), p, memory[NOW])
            if diff > MAX_CORRECTION or diff < -MAX_CORRECTION:
                bad_correction = True
                break
            diff = capped(damped_int(diff, gain_pm), cap)
            if diff > 0:
                C += diff
                created += diff
                hs[_HIST_T, n_hist] = s
                hs[_HIST_C, n_hist] = C
                n_hist += 1
                if B == 0:
                    R = C
                    p_ready = n_hist
                exp_active, exp_set, exp_seen = True, s, s + L
            elif diff < 0:
                commands -= diff
                hit = min(-diff, seen)
                top = D_lag + hit
                if top > D:  # some targets were alive: they die now
                    deleted += top - D
                    D = top
                    hs[_DH_T, n_dh] = s
                    hs[_DH_D, n_dh] = D
                    n_dh += 1
                    last_death = s
                elif hit > 0:  # all were dead already: when did the last of them die?
                    last_death = hs[_DH_T, first_above(hs[_DH_D], n_dh, top - 1)]
                else:
                    last_death = s - G
                exp_active, exp_set, exp_seen = True, s, last_death + G
            elif STEADY and p_seen == n_hist and p_dead == n_dh and not (
                    HAS_MEMORY and memory_changed(memory[NOW], memory[BEFORE])):
                # Settled: see the module's docstring. The rounds before the next event
                # (a death event or a change of desired) or the end read `seen` copies
                # each and do nothing.
                end = min(next_event, big)
                if HAS_MEMORY and p_rs < n_rs:  # a restart resets its memory
                    end = min(end, ev[_RS_AT, p_rs])
                idle = (end - 1 - s) // U
                if idle > 0:
                    rounds += idle
                    reads += idle * (seen + ledger_base)
                    next_round += idle * U
        live = max(0, R - D)
        prev = s
    if bad_correction:  # (out of the loop by a break: a return there costs the loop time)
        return False
    acc = account(acc, prev, duration + 1, live, desired)  # seconds prev .. duration
    end_events(acc, duration, responses, base)
    # (create commands and failed creates too, which `out` has no rows for: numba types
    # write_metrics' reads of them even where it skips them)
    write_metrics(out, row, (rounds, created, commands, deleted, reads, deaths_total, created, 0),
                  acc, duration)
    return True


def _simulate(  # noqa: PLR0913, PLR0917 — numba takes arrays positionally
    rows: Int64Array, out: Int64Array2D, responses: Int64Array2D, response_base: Int64Array,
    cparams: Int64Array2D, observe: Int64Array,
    max_per_round: Int64Array, gain: Int64Array, desired: Int64Array, U: Int64Array,
    G: Int64Array, B: Int64Array, duration: Int64Array, ledger_base: Int64Array,
    initial: Int64Array, death_offsets: Int64Array, death_at: Int64Array, death_count: Int64Array,
    scale_offsets: Int64Array, scale_at: Int64Array, scale_desired: Int64Array,
    restart_offsets: Int64Array, restart_at: Int64Array,
) -> None:
    """Run the cells ``rows`` of the batch into their columns of ``out`` (a metric a row)
    and their responses into ``responses`` (cell ``i``'s from column ``response_base[i]``);
    a cell whose controller returned a correction beyond the bound gets -1 rounds.
    ``cparams`` holds each cell's controller parameters, a row per cell (the controller is
    the one this function was specialised for). The cells are read in place, through
    ``rows``: a batch of several controllers is not gathered per controller."""
    n = rows.shape[0]
    n_blocks = (n + _BLOCK - 1) // _BLOCK
    for b in numba.prange(n_blocks):
        lo = b * _BLOCK
        hi = min(n, lo + _BLOCK)
        max_rounds = 1
        max_ev = 1
        max_rs = 1
        for j in range(lo, hi):
            i = rows[j]
            max_rounds = max(max_rounds, duration[i] // U[i] + 1)
            max_ev = max(max_ev, death_offsets[i + 1] - death_offsets[i],
                         scale_offsets[i + 1] - scale_offsets[i])
            max_rs = max(max_rs, restart_offsets[i + 1] - restart_offsets[i])
        hs = np.empty((4, max_rounds + max_ev), np.int64)
        ev = np.empty((_EV_ROWS, max(max_ev, max_rs)), np.int64)
        memory = np.empty((2, MEMORY_INIT.shape[0]), np.int64)
        for j in range(lo, hi):
            i = rows[j]
            # The cell's arrays as borrowed views (their owners live through the loop: the
            # batch's arrays the caller's, the scratch this block's, used at every cell)
            cell_memory, cell_ev = borrowed(memory), borrowed(ev)
            copy_into(cell_memory[NOW], MEMORY_INIT)
            # Events in one second commute — together they kill min(total, live) — so only
            # their order in time matters.
            n_ev = sorted_into(death_at, death_count, death_offsets[i], death_offsets[i + 1],
                                cell_ev[_EV_AT], cell_ev[_EV_COUNT])
            # The changes of desired come in increasing order (the Scale kind's check).
            n_sc = scale_offsets[i + 1] - scale_offsets[i]
            for k in range(n_sc):
                cell_ev[_SC_AT, k] = scale_at[scale_offsets[i] + k]
                cell_ev[_SC_DESIRED, k] = scale_desired[scale_offsets[i] + k]
            n_rs = sorted_into(restart_at, restart_at, restart_offsets[i],
                                restart_offsets[i + 1], cell_ev[_RS_AT], cell_ev[_RS_AT])
            p = PARAMS_TYPE(*to_fixed_tuple(borrowed(cparams)[i], N_PARAMS))  # type: ignore[call-arg]
            if not _run_cell(
                p, cell_memory,
                observe[i] == CREATED, max_per_round[i], gain[i], desired[i], U[i], G[i], B[i],
                duration[i], ledger_base[i], initial[i], cell_ev, n_ev, n_sc, n_rs, borrowed(hs),
                borrowed(responses), response_base[i], borrowed(out), i,
            ):
                out[0, i] = -1


#: One cell's scratch (its block allocates its largest cell's) above this is refused: the
#: parameters' bounds keep it under 40 MB (32 bytes a round, 32 bytes a death event).
MAX_SCRATCH_BYTES: Final = 1 << 30
#: Every count the kernel keeps must stay below this: int64's range with a factor-2 margin,
#: so that the float bounds below cannot round past it.
COUNT_LIMIT: Final = 2.0**62


def refuse_unsafe(  # noqa: PLR0913
    *, desired: Int64Array, U: Int64Array, G: Int64Array, B: Int64Array,
    duration: Int64Array, ledger_base: Int64Array, deaths_offsets: Int64Array,
    deaths_count: Int64Array, restart_at_offsets: Int64Array, initial: Int64Array,
) -> None:
    """Raise :class:`~reconsim.errors.KernelRefusalError` (a ``ValueError``) for a cell whose
    scratch cannot be allocated or whose counts could pass int64, before anything runs: an
    error, never a wrong number.

    ``desired`` is each cell's largest over its run (with a scale schedule:
    :func:`~reconsim.model.kernels.arrays.largest_desired`). Bounds, in floats: a cell runs
    ``R = duration // U + 1`` rounds and creates at most ``desired`` copies a round, so at
    most ``C = R x desired + initial`` copies exist, are live or are listed. Reads, delete
    commands and excess copy-seconds are at most ``(duration + 1) x (C + ledger_base +
    desired)``; a damped round multiplies at most
    ``C + desired`` by 1000; the deaths a second adds up are at most the schedule's total.
    The parameters' bounds (:data:`reconsim.model.params.MAX_SECONDS`, ``MAX_COPIES``,
    ``MAX_EVENTS``) keep every checked cell far inside both limits.
    """
    if not len(desired):
        return
    # First over the columns' extremes (a few reductions): a batch whose largest duration,
    # smallest period, largest counts ... pass together needs no look at single cells.
    n_ev = deaths_offsets[1:] - deaths_offsets[:-1]  # np.diff, at a tenth of its cost
    n_rs = restart_at_offsets[1:] - restart_at_offsets[:-1]
    top = _first if len(desired) == 1 else _largest  # (one cell: its values, at once)
    extremes = {name: top(a) for name, a in (
        ("desired", desired), ("G", G), ("B", B), ("duration", duration),
        ("ledger_base", ledger_base), ("n_ev", n_ev), ("n_rs", n_rs), ("initial", initial))}
    extremes["U"] = float(max(1, U[0] if len(U) == 1 else U.min()))
    extremes["deaths"] = extremes["n_ev"] * (_largest(deaths_count) if len(deaths_count)
                                             else 0.0)
    if _unsafe(**extremes) < 1:
        return
    # Then cell by cell, to name the first cell that does not fit.
    cells = {"desired": desired, "U": np.maximum(U, 1), "G": G, "B": B, "duration": duration,
             "ledger_base": ledger_base, "n_ev": n_ev, "n_rs": n_rs, "initial": initial}
    total = np.concatenate(([0.0], np.cumsum(deaths_count.astype(np.float64))))
    unsafe = _unsafe(**{k: v.astype(np.float64) for k, v in cells.items()},
                     deaths=total[deaths_offsets[1:]] - total[deaths_offsets[:-1]])
    if unsafe.max() < 1:
        return
    i = int(np.argmax(unsafe >= 1))
    rounds = int(duration[i]) // max(1, int(U[i])) + 1
    scratch = 8 * (4 * rounds + 4 * int(n_ev[i]) + 2 * int(n_rs[i]))
    if scratch >= MAX_SCRATCH_BYTES:
        raise KernelRefusalError(
            i, f"(duration {duration[i]}, U {U[i]}, {n_ev[i]} death events) "
            f"needs {scratch / 2**30:.3g} GiB of scratch, above the "
            f"{MAX_SCRATCH_BYTES / 2**30:g} GiB a cell may take")
    worst = float(_worst(float(desired[i]), float(max(1, U[i])), float(G[i]), float(B[i]),
                         float(duration[i]), float(ledger_base[i]),
                         float(total[deaths_offsets[i + 1]] - total[deaths_offsets[i]]),
                         float(initial[i])))
    raise KernelRefusalError(
        i, f"(desired {desired[i]}, U {U[i]}, duration {duration[i]}, "
        f"ledger_base {ledger_base[i]}) could count up to {worst:.3g}, past int64: "
        "its figures would be wrong")


def _first(a: NDArray[Any]) -> float:
    return float(a[0])


def _largest(a: NDArray[Any]) -> float:
    return float(a.max())


def _worst(  # noqa: PLR0913, PLR0917 — the parameters the bound reads, scalars or arrays
    desired: Any, U: Any, G: Any, B: Any, duration: Any, ledger_base: Any, deaths: Any,
    initial: Any,
) -> Any:
    """The largest count a cell can reach (floats, scalars or arrays): see refuse_unsafe."""
    seconds = duration + 1
    copies = (np.floor(duration / U) + 1) * desired + initial
    return np.maximum.reduce([seconds * (copies + ledger_base + desired),
                              1000 * (copies + desired), deaths + copies + desired,
                              seconds + U + G + B])


def _unsafe(  # noqa: PLR0913 — the parameters the bounds read
    *, desired: Any, U: Any, G: Any, B: Any, duration: Any, ledger_base: Any, n_ev: Any,
    n_rs: Any, deaths: Any, initial: Any,
) -> Any:
    """Per cell, >= 1 when its scratch or its counts do not fit (floats, arrays)."""
    rounds = np.floor(duration / U) + 1
    scratch = 8 * (4 * rounds + 4 * n_ev + 2 * n_rs)
    worst = _worst(desired, U, G, B, duration, ledger_base, deaths, initial)
    return np.maximum(scratch / MAX_SCRATCH_BYTES, worst / COUNT_LIMIT)


#: The functions compiled per controller (:func:`.specialise.specialise`), callees first.
#: One batch loop, two compilations: threads pay off only on batches large enough to hide
#: the cost of waking them (and of their spinning afterwards, which slows polars on 2 cores).
_PER_CONTROLLER: Final = {"_run_cell": {"nogil": True}, "_simulate": {},
                          "_simulate@parallel": {"parallel": True}}
#: Batches smaller than this run on one thread.
PARALLEL_MIN_CELLS: Final = 8 * _BLOCK


def set_threads(n: int) -> None:
    """Let the kernel use ``n`` threads in this process (1 when processes share the cores)."""
    numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))  # type: ignore[attr-defined]


#: The keyword arrays :func:`simulate_arrays` takes besides the controllers' parameters:
#: those of seed 001's world, the controller's code first.
COUNT_INPUTS: Final[tuple[str, ...]] = (
    "controller", "observe", "max_per_round", "gain", "desired", "U", "G", "B", "duration",
    "ledger_base", "initial", "deaths_offsets", "deaths_at", "deaths_count", "scale_offsets",
    "scale_at", "scale_desired", "restart_at_offsets", "restart_at")


def simulate_arrays(
    *, controllers: Sequence[Controller] | None = None, parallel: bool | None = None,
    responses: Int64Array2D | None = None, response_base: Int64Array | None = None,
    **arrays: NDArray[np.integer],
) -> Int64Array:
    """Run a batch of validated cells; return an ``(n, len(OUT_COLUMNS))`` int64 matrix.

    One keyword per name of :data:`COUNT_INPUTS`, as each parameter's kind encodes it
    (:meth:`reconsim.model.kinds.Kind.arrays`): ``controller`` holds each cell's index in
    ``controllers`` (default: every known controller, whose index is its code,
    :func:`~reconsim.model.controllers.registry.known`), ``observe`` a code (:data:`CREATED`),
    ``max_per_round`` is 0 for no cap, ``gain`` counts thousandths (1000: undamped). Cell
    ``i``'s death events are ``deaths_at[deaths_offsets[i]:deaths_offsets[i + 1]]`` (and the
    same slice of ``deaths_count``), its restarts likewise, both in any order; its changes of
    desired ``scale_at`` and ``scale_desired`` over ``scale_offsets``, in increasing ``at``.
    Each parameter of the controllers is one more keyword array, by its name. ``parallel`` picks
    the threaded or the one-thread compilation (default: threaded for a large batch, where numba
    has more than one thread). Cell ``i``'s responses to its events are written into
    ``responses`` (an int64 matrix of :data:`reconsim.model.rules.RESPONSE_ROWS` rows) from
    column ``response_base[i]`` on (default: a throwaway buffer,
    :func:`~reconsim.model.kernels.arrays.response_buffers`).
    """
    missing = [name for name in COUNT_INPUTS if name not in arrays]
    if missing:
        raise TypeError(f"simulate_arrays: missing {', '.join(missing)}")
    controllers = registry.known() if controllers is None else controllers
    wanted = (*COUNT_INPUTS, *(p for c in controllers for p in c.params))
    a = {name: frozen(arrays[name]) for name in dict.fromkeys(wanted) if name in arrays}
    n = len(a["controller"])
    check_offsets(a, n)
    if len(a["scale_desired"]) != len(a["scale_at"]):
        raise ValueError("scale_desired must hold one value per scale_at")
    responses, response_base = response_outputs(a, responses, response_base)
    refuse_unsafe(desired=largest_desired(a),
                  U=a["U"], G=a["G"], B=a["B"], duration=a["duration"],
                  ledger_base=a["ledger_base"], deaths_offsets=a["deaths_offsets"],
                  deaths_count=a["deaths_count"], restart_at_offsets=a["restart_at_offsets"],
                  initial=a["initial"])
    if parallel is None:  # threads only where there are several, for a batch worth them
        parallel = n >= PARALLEL_MIN_CELLS and numba.get_num_threads() > 1
    out = np.empty((_N_OUT, n), np.int64)  # a metric a row: columns for polars
    codes = a["controller"]
    order = None if not n or (codes == codes[0]).all() else np.argsort(codes, kind="stable")
    inputs = [a[name] for name in COUNT_INPUTS[1:]]
    for code, rows in by_controller(codes, order):
        controller = controllers[code]
        _run_group(controller, rows, (out, responses, response_base,
                                      params_matrix(controller, a), *inputs), parallel)
    bad = np.flatnonzero(out[0] < 0)  # (one look over the batch, not one per controller)
    if len(bad):
        raise beyond_max(controllers[int(codes[bad[0]])], int(bad[0]))
    return out.T


def _run_group(controller: Controller, rows: Int64Array | None,
               inputs: tuple[Int64Array, ...], parallel: bool) -> None:
    """The cells ``rows`` of the batch (None: all), all of ``controller``, on its
    specialised kernel (:func:`~reconsim.model.kernels.specialise.run_rows`: a row its
    threads left unrun runs again alone); ``inputs`` are what the kernel takes after them
    (``out`` first)."""
    kernels = _kernels(controller)
    kernel = kernels["_simulate@parallel" if parallel else "_simulate"]
    out = inputs[0]
    cells = np.arange(out.shape[1], dtype=np.int64) if rows is None else rows
    columns = slice(None) if rows is None else rows  # (all of them: a view, not gathered)

    def run() -> Int64Array:
        out[0, columns] = UNRUN
        kernel(cells, *inputs)
        first: Int64Array = out[0, columns]
        return first

    run_rows(kernel, "count kernel", controller, run,
             lambda j: kernels["_simulate"](cells[j:j + 1], *inputs))


@functools.cache
def _kernels(controller: Controller) -> dict[str, Any]:
    """The count kernel compiled for ``controller`` (cached on disk: :mod:`.specialise`)."""
    return specialise(globals(), _PER_CONTROLLER, controller)
