"""The event kernel: :mod:`reconsim.model.events` compiled, for controllers that sync on
events (``settle``).

The same rules (E1 to E7) in one flat loop over machine integers: the copies are columns
of one array, the instants due a binary heap of int64 keys (instant, what, order: the
order the reference model's heap pops them in), each beside its payload in one array,
the cache two columns beside the copies'. The controller's hooks (``decide``,
``settle``, ``observe``, ``less``) are compiled into it, one kernel per controller
(:mod:`.specialise`), and a deletion sorts with Go's ``sort.Sort`` step for step
(:mod:`reconsim.model.gosort`'s own functions, compiled here with the entries' columns as
their data).

A second with a death event or a change of desired (``scale``) gets its own entry at its
first instant, as one with a restart or a resync does: there its deaths, then its change
of desired (one that changes the count queues the key; the sync that acts on it writes a
status that differs, E6, and queues it once more), then its restarts; and its event's
window opens (:func:`reconsim.model.rules.begin_event`, the response going to the cell's
columns of ``responses``). Every sync, and E2's bound on an instant's syncs, reads the
desired of the moment. Between instants the live count is constant, and desired between
events' seconds: the loop skips from one second with something due to the next (never
past a death event, change of desired or restart), and the seconds are counted
(:func:`reconsim.model.rules.account`) as long stretches with one live count and one
desired: a stretch ends where live changes, where an event's window opens (desired
changes only there) and at the end of the run.
Inside a ``lag`` window a sync lists each copy as the cache held it at the end of second
``t - extra``: the copy's own state ``g`` earlier, as its events took ``g`` to arrive.

A block of cells shares scratch arrays (the copies, the cache's columns, the heap), passed
to the cell's loop and never rebound there: numba then counts no references inside it
(an array rebound in a loop, as a growing one is, costs two atomic reference counts at
many of its uses: three times the loop's own work, measured). A cell that needs more
room returns for larger arrays and runs again from its start, the same run.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numba
import numpy as np
from numba.np.unsafe.ndarray import to_fixed_tuple
from numpy.typing import NDArray

from reconsim.model.controllers import Controller, ControllerError
from reconsim.model.controllers.definition import (
    ADDED,
    DELETED,
    UPDATED,
    Event,
    Item,
    Outcome,
    Sync,
)
from reconsim.model.copies import BEFORE_RUN

# Go's sort, compiled for each controller with less_at and swap_at below (_PER_CONTROLLER)
from reconsim.model.gosort import (  # noqa: F401 — specialise() reads them by name
    insertion_sort,
    median,
    partial_insertion_sort,
    sift_down,
    sort_range,
)
from reconsim.model.kernels.arrays import (
    UNRUN,
    Int64Array,
    by_controller,
    check_offsets,
    cumulative,
    numbered,
    params_matrix,
    response_outputs,
    take_rows,
)
from reconsim.model.kernels.count import MAX_CORRECTION, copy_into, damped_int, sorted_into
from reconsim.model.kernels.rules import (
    account,
    begin_event,
    capped,
    change_desired,
    create_outcome,
    dies_at,
    end_events,
    ledger_delay,
    most_syncs,
    next_round,
    ready_at,
    runs,
    stale_by,
    start_account,
    write_metrics,
)

# The controller's names, bound by specialise() for each controller (see .specialise).
from reconsim.model.kernels.specialise import (
    HAS_LESS,
    MEMORY_INIT,
    N_PARAMS,
    PARAMS_TYPE,
    beyond_max,
    decide,
    less,
    observe,
    run_rows,
    settle,
    specialise,
)
from reconsim.model.kernels.world import WORLD_OUT_COLUMNS
from reconsim.model.kinds import MAX_COPIES
from reconsim.model.rules import COUNT, FAIL, LOST_REPLY, NEVER

# What is due at an instant, in the order the rules take it when due together.
_READY, _LEAVE, _SECOND, _DELIVER, _RETRY = 0, 1, 2, 3, 4
_ORDER_BITS: Final = 30
_WHAT_BITS: Final = 3
_MS: Final = 1000
# The copies' columns: creation and readiness (ms, and the second a listing shows), the
# ledger delay, the copy's state (terminating from, gone at: NEVER until then), and the
# cache's view (listed: in it and not deleting).
(_BORN, _BORN_S, _READY_AT, _READY_S, _G, _IS_READY, _DELETING, _GONE, _MARKED, _LISTED,
 _C_READY) = range(11)
_N_COLS: Final = 11
#: The result of a cell: done, or a correction beyond the bound, or too many events, or an
#: instant with more syncs than its bound (out[1] its instant, out[2] the bound), or a copy
#: beyond MAX_COPIES (out[1] its second).
_DONE, _BAD, _TOO_MANY, _ENDLESS, _COPIES = 0, 1, 2, 3, 4
#: Or no room in the block's scratch arrays (out[1] the heap's size it needs, out[2] the
#: copies'; 0 for room enough): the block enlarges them and runs the cell again.
_ROOM: Final = 5
# (A row not run to its end keeps arrays.UNRUN: its block stopped on an exception its
# controller's code raised in one of numba's threads, which numba does not always carry
# back; such rows run again one by one, in _run_group.)
#: The scratch arrays' first room: copies (items: one more), and heap entries.
_COPIES_ROOM: Final = 256
_HEAP_ROOM: Final = 4096
_N_OUT: Final = len(WORLD_OUT_COLUMNS)
#: The rows of a cell's changes of desired in its schedules' scratch array (its death
#: events' seconds and counts are rows 0 and 1): their seconds and desired counts.
_SC_AT, _SC_DESIRED = 2, 3


#: An entry's payload, three fields in one int64, one word moving with each key: ``a`` (a
#: copy's number, below MAX_COPIES; an epoch, below MAX_EVENTS restarts; or a flag) from bit
#: 32; ``b`` (a second from BEFORE_RUN to MAX_SECONDS, or -1) less BEFORE_RUN, below 2**24,
#: from bit 8; ``c`` (an event's kind and flag, below 8) in bits 0 to 7.
_A_SHIFT: Final = 32
_B_SHIFT: Final = 8
_B_MASK: Final = (1 << 24) - 1
_C_MASK: Final = (1 << 8) - 1


@numba.njit(cache=True, nogil=True)
def _push(heap: Int64Array, n: int, key: int, a: int, b: int, c: int) -> int:  # noqa: PLR0913, PLR0917
    """Add an entry, its payload ``(a, b, c)``, to the heap of ``n`` (the array has room);
    return the new size."""
    packed = (a << _A_SHIFT) | ((b - BEFORE_RUN) << _B_SHIFT) | c
    i = n
    while i > 0:  # the hole moves up to where the key belongs
        parent = (i - 1) >> 1
        if heap[2 * parent] <= key:
            break
        heap[2 * i] = heap[2 * parent]
        heap[2 * i + 1] = heap[2 * parent + 1]
        i = parent
    heap[2 * i] = key
    heap[2 * i + 1] = packed
    return n + 1


@numba.njit(cache=True, nogil=True)
def _pop(heap: Int64Array, n: int) -> int:
    """Remove the smallest entry, moved to position ``n - 1``; return the new size."""
    last = n - 1
    top_key, top_pay = heap[0], heap[1]
    key, packed = heap[2 * last], heap[2 * last + 1]
    i = 0
    while True:  # the hole at the root moves down to where the last key belongs
        child = 2 * i + 1
        if child >= last:
            break
        # The smaller child, without a branch: position ``last`` still holds ``key``, and
        # choosing it ends the loop as not choosing it would.
        child += heap[2 * child + 2] < heap[2 * child]
        if heap[2 * child] >= key:
            break
        heap[2 * i] = heap[2 * child]
        heap[2 * i + 1] = heap[2 * child + 1]
        i = child
    heap[2 * i] = key
    heap[2 * i + 1] = packed
    heap[2 * last] = top_key
    heap[2 * last + 1] = top_pay
    return last


def less_at(items: Int64Array, i: int, j: int, now: int, p: Any) -> bool:
    """Go's ``Less(i, j)`` of the active entries' columns, with the controller's ``less``
    (the sort itself is :mod:`reconsim.model.gosort`'s, compiled with this binding)."""
    return less(Item(items[0, i], items[1, i], items[2, i], now),
                Item(items[0, j], items[1, j], items[2, j], now), p)


@numba.njit(cache=True, nogil=True)
def swap_at(items: Int64Array, i: int, j: int) -> None:
    """Go's ``Swap(i, j)`` of the active entries' columns."""
    for r in range(3):
        items[r, i], items[r, j] = items[r, j], items[r, i]


@numba.njit(cache=True, nogil=True)
def _new_copy(pods: Int64Array, k: int, born: int, ready_at: int, g: int) -> None:
    """Copy ``k``'s column, cleared, with its creation, readiness and ledger delay (ms)."""
    for r in range(_N_COLS):
        pods[r, k] = 0
    pods[_BORN, k] = born
    pods[_BORN_S, k] = max(0, born // _MS)
    pods[_READY_AT, k] = ready_at
    pods[_READY_S, k] = max(0, ready_at // _MS)
    pods[_G, k] = g
    pods[_DELETING, k] = NEVER
    pods[_GONE, k] = NEVER


@numba.njit(cache=True, nogil=True)
def _no_room(out: Int64Array, row: int, heap: int, copies: int) -> int:
    """Ask the block for scratch arrays with room for ``heap`` entries and ``copies``
    copies (0: as they are), to run the cell again."""
    out[1, row], out[2, row] = heap, copies
    return _ROOM


def _run_cell(  # noqa: PLR0911, PLR0912, PLR0913, PLR0915, PLR0917 — one flat loop
        p: Any, mem: Int64Array, cap: int, gain_pm: int, desired: int, U: int, G: int, B: int,
        duration: int, ledger_base: int, initial: int, B_spread: int, G_spread: int, U_jitter: int,
        seed: int, grace: int, delete_newest: bool, watch: bool, slow_start: bool,
        fail_pm: int, lost_pm: int, ev: Int64Array, n_ev: int, n_sc: int,
        rs_at: Int64Array, n_rs: int,
        faults: Int64Array, fault_left: Int64Array, f_lo: int, f_hi: int,
        lag: Int64Array, w_lo: int, w_hi: int, b_table: Int64Array, b_lo: int, b_hi: int,
        g_table: Int64Array, g_lo: int, g_hi: int, out: Int64Array, row: int,
        pods: Int64Array, items: Int64Array, heap: Int64Array,
        responses: Int64Array, base: int) -> int:
    end_ms = (duration + 1) * _MS
    room = heap.shape[0] >> 1  # heap entries: key and payload side by side
    if initial > pods.shape[1]:
        return _no_room(out, row, 0, initial)
    # The initial copies: created and ready before the run (BEFORE_RUN), in the cache with
    # their times shown as 0, their events long delivered; numbered first on the ledger
    # delay's stream.
    for k in range(initial):
        g = ledger_delay(G, seed, k, G_spread, g_table, g_lo, g_hi)
        _new_copy(pods, k, BEFORE_RUN * _MS, BEFORE_RUN * _MS, g * _MS)
        pods[_IS_READY, k] = 1
        pods[_LISTED, k] = 1
    n_pods = initial
    n_due = 0
    order = 0
    epoch = 0
    copy_into(mem, MEMORY_INIT)
    queued, dirty, running = True, True, False
    # The status last written (E6): active, ready, error, and the desired acted on.
    st_active, st_ready, st_err, st_desired = 0, 0, False, desired
    rounds = created = create_commands = failed = delete_commands = deleted = reads = 0
    deaths_total = 0
    for e in range(n_ev):
        deaths_total += ev[1, e]
    next_periodic, periodic_i = 0, 0
    synced_this_second = False
    live = initial
    # The per-second figures (rules.account), the disturbance's from the first death event
    # on (none: duration + 1), and the windows of the events (death events and changes of
    # desired), each opened at its second's first instant.
    acc = start_account(ev[0, 0] if n_ev > 0 and ev[0, 0] <= duration else duration + 1)
    # The seconds not counted yet, p_lo … t - 1, all with p_live copies and the current
    # desired: counted as one stretch when live changes, an event opens or the run ends.
    p_lo, p_live = 0, initial
    e_next = 0
    s_next = 0  # the next change of desired
    r_next = 0
    # The next second with a death event, a change of desired or a restart (second 0
    # looks at the schedules, and sets it).
    next_stop = 0
    t = 0
    while t <= duration:
        start = t * _MS
        # The second's own entry (its deaths, change of desired, restarts, a resync).
        resync = False
        if t == next_periodic:
            next_periodic = next_round(t, U, U_jitter, seed, periodic_i)
            periodic_i += 1
            resync = True
        # Only where it has something to do: a second is visited for an instant due in it
        # or for these (the loop's end skips to the next), and earlier ones are done.
        if resync or t == next_stop:
            if n_due + 1 >= room:
                return _no_room(out, row, 2 * room, 0)
            order += 1
            n_due = _push(heap, n_due,
                          ((start << _WHAT_BITS | _SECOND) << _ORDER_BITS) | order,
                          1 if resync else 0, 0, 0)
        synced_this_second = False
        while n_due > 0 and (heap[0] >> (_WHAT_BITS + _ORDER_BITS)) < start + _MS:
            now = heap[0] >> (_WHAT_BITS + _ORDER_BITS)
            syncs, most = 0, most_syncs(desired, n_pods)  # E2's bound
            while (n_due > 0 and (heap[0] >> (_WHAT_BITS + _ORDER_BITS)) == now) or queued:
                while n_due > 0 and (heap[0] >> (_WHAT_BITS + _ORDER_BITS)) == now:
                    what = (heap[0] >> _ORDER_BITS) & 7
                    n_due = _pop(heap, n_due)
                    packed = heap[2 * n_due + 1]
                    a = packed >> _A_SHIFT
                    b = ((packed >> _B_SHIFT) & _B_MASK) + BEFORE_RUN
                    c = packed & _C_MASK
                    # room for the events this entry may add (a few per copy touched)
                    if n_due + 4 * n_pods + 16 >= room:
                        return _no_room(out, row, 2 * (n_due + 4 * n_pods + 16), 0)
                    if what == _READY:
                        if pods[_GONE, a] == NEVER:
                            pods[_IS_READY, a] = 1
                            live += 1
                            if now + pods[_G, a] < end_ms:
                                order += 1
                                n_due = _push(heap, n_due, (((now + pods[_G, a]) << 3
                                                                  | _DELIVER) << 30) | order,
                                              a, now // _MS, (pods[_DELETING, a] != NEVER) * 1
                                              + UPDATED * 2)
                    elif what == _LEAVE:
                        if pods[_GONE, a] == NEVER:
                            pods[_GONE, a] = now
                            live -= pods[_IS_READY, a]
                            if now + pods[_G, a] < end_ms:
                                order += 1
                                n_due = _push(heap, n_due, (((now + pods[_G, a]) << 3
                                                                  | _DELIVER) << 30) | order,
                                              a, -1, 1 + DELETED * 2)
                    elif what == _SECOND and t == next_stop:
                        if (e_next < n_ev and ev[0, e_next] == t) or (
                                s_next < n_sc and ev[_SC_AT, s_next] == t):
                            # An event's second (a death event, a change of desired): the
                            # seconds before it are counted in the window before, and its
                            # own window opens (before its deaths and its change of desired,
                            # not after as in the reference: they count nothing in it).
                            if p_lo < t:
                                acc = account(acc, p_lo, t, p_live, desired)
                                p_lo = t
                            acc = begin_event(acc, t, responses, base)
                        for e in range(e_next, n_ev):
                            if ev[0, e] != t:
                                break
                            e_next = e + 1
                            left = ev[1, e]
                            for k in range(n_pods):
                                if left == 0:
                                    break
                                if runs(pods[_READY_AT, k], pods[_GONE, k], now):
                                    left -= 1
                                    pods[_GONE, k] = now
                                    live -= 1
                                    if now + pods[_G, k] < end_ms:
                                        if n_due + 2 >= room:
                                            return _no_room(out, row, 2 * room, 0)
                                        order += 1
                                        n_due = _push(heap, n_due, (((
                                            now + pods[_G, k]) << 3 | _DELIVER) << 30)
                                            | order, k, -1, 1 + DELETED * 2)
                        while e_next < n_ev and ev[0, e_next] < t:
                            e_next += 1
                        # Its change of desired: one that changes the count queues the key.
                        if s_next < n_sc and ev[_SC_AT, s_next] == t:
                            to = ev[_SC_DESIRED, s_next]
                            s_next += 1
                            if to != desired:
                                acc = change_desired(acc, desired, to)
                                desired = to
                                if not dirty:
                                    dirty = True
                                    if not running:
                                        queued = True
                        restart = False
                        while r_next < n_rs and rs_at[r_next] <= t:
                            if rs_at[r_next] == t:
                                restart = True
                            r_next += 1
                        if restart:
                            copy_into(mem, MEMORY_INIT)
                            for k in range(n_pods):
                                pods[_MARKED, k] = 0
                            epoch += 1
                            if not dirty:
                                dirty = True
                                if not running:
                                    queued = True
                        # (in place: an array passed to a function, even inlined, costs
                        # reference counts here)
                        next_stop = NEVER
                        if e_next < n_ev:
                            next_stop = ev[0, e_next]
                        if s_next < n_sc:
                            next_stop = min(next_stop, ev[_SC_AT, s_next])
                        if r_next < n_rs:
                            next_stop = min(next_stop, rs_at[r_next])
                        if a == 1 and not dirty:
                            dirty = True
                            if not running:
                                queued = True
                    elif what == _SECOND:  # a resync alone
                        if a == 1 and not dirty:
                            dirty = True
                            if not running:
                                queued = True
                    elif what == _DELIVER:
                        kind = c >> 1
                        deleting = (c & 1) == 1
                        if kind == DELETED:
                            pods[_LISTED, a] = 0
                        else:
                            pods[_LISTED, a] = 0 if deleting else 1
                            pods[_C_READY, a] = b
                        if kind == DELETED or deleting:
                            marked = pods[_MARKED, a]
                            pods[_MARKED, a] = 0
                            observe(Event(DELETED, now, marked), p, mem)
                        else:
                            observe(Event(kind, now, 0), p, mem)
                        if watch and not dirty:
                            dirty = True
                            if not running:
                                queued = True
                    elif what == _RETRY and a == epoch and not dirty:
                        dirty = True
                        if not running:
                            queued = True
                if not queued:
                    continue
                syncs += 1
                if syncs > most:
                    out[1, row], out[2, row] = now, most
                    return _ENDLESS
                # One sync (E5, E6).
                queued, running, dirty = False, True, False
                n_active = 0
                n_ready = 0
                stale = stale_by(t, lag, w_lo, w_hi)
                if stale == 0:
                    for k in range(n_pods):
                        if pods[_LISTED, k] == 1:
                            items[0, n_active] = k
                            items[1, n_active] = pods[_BORN_S, k]
                            items[2, n_active] = pods[_C_READY, k]
                            if pods[_C_READY, k] >= 0:
                                n_ready += 1
                            n_active += 1
                else:  # the cache as it stood at the end of second t - extra: each copy's
                    # API state g before (the events it received by then)
                    seen_at = (t - stale) * _MS + _MS - 1
                    for k in range(n_pods):
                        if pods[_BORN, k] + G * _MS > seen_at:
                            break  # created too late to be seen, as is every later copy
                            # (created no earlier, its delay G or more)
                        api = seen_at - pods[_G, k]
                        if pods[_BORN, k] > api or pods[_GONE, k] <= api or (
                                pods[_DELETING, k] <= api):
                            continue
                        items[0, n_active] = k
                        items[1, n_active] = pods[_BORN_S, k]
                        items[2, n_active] = -1
                        if pods[_READY_AT, k] <= api and pods[_READY_AT, k] <= pods[_GONE, k]:
                            items[2, n_active] = pods[_READY_S, k]
                            n_ready += 1
                        n_active += 1
                if not synced_this_second:
                    synced_this_second = True
                    rounds += 1
                    reads += ledger_base
                reads += n_active
                diff = decide(Sync(t, now, desired, n_active), p, mem)
                if diff > MAX_CORRECTION or diff < -MAX_CORRECTION:
                    return _BAD
                diff = damped_int(diff, gain_pm)
                diff = capped(diff, cap)
                issued = ok = n_failed = lost = not_found = 0
                if diff != 0:
                    for k in range(n_pods):
                        pods[_MARKED, k] = 0
                if diff > 0:
                    if n_pods + diff > pods.shape[1] or n_due + 2 * diff + 4 >= room:
                        return _no_room(out, row, 2 * (n_due + 2 * diff + 4),
                                        2 * (n_pods + diff))
                    remaining = diff
                    batch = 1 if slow_start else diff
                    while remaining > 0:
                        batch = min(batch, remaining)
                        errors = 0
                        for _ in range(batch):
                            result = create_outcome(t, create_commands, seed, fail_pm,
                                                    lost_pm, faults, fault_left, f_lo, f_hi)
                            create_commands += 1
                            issued += 1
                            if result == FAIL:
                                failed += 1
                                n_failed += 1
                                errors += 1
                                continue
                            k = n_pods
                            if k >= MAX_COPIES:
                                out[1, row] = t
                                return _COPIES
                            n_pods += 1
                            # (in seconds after its creation)
                            ready = ready_at(t, B, seed, k, B_spread, b_table, b_lo, b_hi) - t
                            g = ledger_delay(G, seed, k, G_spread, g_table, g_lo, g_hi)
                            _new_copy(pods, k, now, now + ready * _MS, g * _MS)
                            pods[_C_READY, k] = -1
                            created += 1
                            if now + g * _MS < end_ms:
                                order += 1
                                n_due = _push(heap, n_due, (((now + g * _MS) << 3
                                                                  | _DELIVER) << 30) | order,
                                              k, -1, ADDED * 2)
                            if now + ready * _MS < end_ms:
                                order += 1
                                n_due = _push(heap, n_due, (((now + ready * _MS) << 3
                                                                  | _READY) << 30) | order,
                                              k, 0, 0)
                            if result == LOST_REPLY:
                                lost += 1
                                errors += 1
                            else:
                                ok += 1
                        remaining -= batch
                        if errors > 0 and slow_start:
                            break
                        batch *= 2
                elif diff < 0:
                    take = -diff
                    ordered = HAS_LESS and take < n_active
                    if ordered:
                        sort_range(items, n_active, now, p)
                    for x in range(take):
                        k = items[0, x] if ordered or not delete_newest else items[
                            0, n_active - 1 - x]
                        issued += 1
                        delete_commands += 1
                        if pods[_GONE, k] != NEVER:
                            not_found += 1
                            continue
                        pods[_MARKED, k] = 1
                        if pods[_DELETING, k] == NEVER:
                            deleted += 1
                            pods[_DELETING, k] = now
                            if n_due + 4 >= room:
                                return _no_room(out, row, 2 * room + 8, 0)
                            death = dies_at(now, grace * _MS)
                            if death == now:
                                pods[_GONE, k] = now
                                live -= pods[_IS_READY, k]
                                if now + pods[_G, k] < end_ms:
                                    order += 1
                                    n_due = _push(heap, n_due, (((now + pods[_G, k]) << 3
                                                                      | _DELIVER) << 30)
                                                  | order, k, -1, 1 + DELETED * 2)
                            else:
                                c_ready = pods[_READY_AT, k] // _MS if pods[
                                    _IS_READY, k] == 1 else -1
                                if now + pods[_G, k] < end_ms:
                                    order += 1
                                    n_due = _push(heap, n_due, (((now + pods[_G, k]) << 3
                                                                      | _DELIVER) << 30)
                                                  | order, k, c_ready, 1 + UPDATED * 2)
                                if death < end_ms:
                                    order += 1
                                    n_due = _push(heap, n_due, ((death << 3
                                                                      | _LEAVE) << 30)
                                                  | order, k, 0, 0)
                delay = settle(Outcome(now, diff, issued, ok, n_failed, lost, not_found), p, mem)
                err = delay > 0
                if n_active != st_active or n_ready != st_ready or err != st_err or (
                        desired != st_desired):
                    st_active, st_ready, st_err, st_desired = n_active, n_ready, err, desired
                    if not dirty:
                        dirty = True  # the status write queues the key (running: dirty)
                if err and now + delay < end_ms:
                    if n_due + 2 >= room:
                        return _no_room(out, row, 2 * room, 0)
                    order += 1
                    n_due = _push(heap, n_due, (((now + delay) << 3 | _RETRY) << 30)
                                  | order, epoch, 0, 0)
                running = False
                if dirty:
                    queued = True
                if order >= (1 << _ORDER_BITS) - 1024:
                    return _TOO_MANY
        # The end of second t, and the seconds up to the next instant due (or the next
        # resync, death event, change of desired or restart): live is constant. They join
        # the seconds not counted yet where those have the same live count, else those are
        # counted first (desired changes only at an event's second, which counts them).
        upto = duration
        if n_due > 0:
            upto = min(duration, (heap[0] >> (_WHAT_BITS + _ORDER_BITS)) // _MS - 1)
        upto = min(upto, next_periodic - 1, next_stop - 1)
        upto = max(upto, t)
        if live != p_live:
            if p_lo < t:
                acc = account(acc, p_lo, t, p_live, desired)
                p_lo = t
            p_live = live  # seconds p_lo … upto
        t = upto + 1
    if p_lo <= duration:
        acc = account(acc, p_lo, duration + 1, p_live, desired)
    end_events(acc, duration, responses, base)
    write_metrics(out, row, (rounds, created, delete_commands, deleted, reads, deaths_total,
                             create_commands, failed), acc, duration)
    return _DONE


def _run_block(  # noqa: PLR0913, PLR0917 — numba takes arrays positionally
        lo: int, hi: int, cparams: Int64Array, cap: Int64Array, gain_pm: Int64Array,
        desired: Int64Array, U: Int64Array, G: Int64Array, B: Int64Array,
        duration: Int64Array, ledger_base: Int64Array, initial: Int64Array,
        B_spread: Int64Array,
        G_spread: Int64Array, U_jitter: Int64Array, seed: Int64Array, grace: Int64Array,
        delete_newest: Int64Array, watch: Int64Array, slow_start: Int64Array,
        fail_pm: Int64Array, lost_pm: Int64Array, death_offsets: Int64Array,
        death_at: Int64Array, death_count: Int64Array, scale_offsets: Int64Array,
        scale_at: Int64Array, scale_desired: Int64Array, restart_offsets: Int64Array,
        restart_at: Int64Array, fault_offsets: Int64Array, faults: Int64Array,
        lag_offsets: Int64Array, lag: Int64Array, b_offsets: Int64Array, b_table: Int64Array,
        g_offsets: Int64Array, g_table: Int64Array, out: Int64Array, responses: Int64Array,
        response_base: Int64Array) -> None:
    mem = MEMORY_INIT.copy()
    # Scratch arrays for the block's cells, in _run_cell's arguments: never rebound there,
    # so numba counts no references in its loops.
    pods = np.empty((_N_COLS, _COPIES_ROOM), np.int64)
    items = np.empty((3, _COPIES_ROOM + 1), np.int64)
    heap = np.empty(2 * _HEAP_ROOM, np.int64)
    # and for their schedules, as long as the longest
    n_ev = n_rs = n_f = 1
    for i in range(lo, hi):
        n_ev = max(n_ev, death_offsets[i + 1] - death_offsets[i],
                   scale_offsets[i + 1] - scale_offsets[i])
        n_rs = max(n_rs, restart_offsets[i + 1] - restart_offsets[i])
        n_f = max(n_f, fault_offsets[i + 1] - fault_offsets[i])
    ev = np.empty((4, n_ev), np.int64)  # the death events' rows, then the scale's
    rs_at = np.empty(n_rs, np.int64)
    rs_dummy = np.empty(n_rs, np.int64)
    fault_left = np.empty(n_f, np.int64)
    for i in range(lo, hi):
        p = PARAMS_TYPE(*to_fixed_tuple(cparams[i], N_PARAMS))  # type: ignore[call-arg]
        n_ev = sorted_into(death_at, death_count, death_offsets[i], death_offsets[i + 1],
                           ev[0], ev[1])
        n_sc = scale_offsets[i + 1] - scale_offsets[i]  # sorted by second already
        for k in range(n_sc):
            ev[_SC_AT, k] = scale_at[scale_offsets[i] + k]
            ev[_SC_DESIRED, k] = scale_desired[scale_offsets[i] + k]
        n_rs = sorted_into(restart_at, restart_at, restart_offsets[i], restart_offsets[i + 1],
                           rs_at, rs_dummy)
        f_lo, f_hi = fault_offsets[i], fault_offsets[i + 1]
        while True:
            for f in range(f_lo, f_hi):
                fault_left[f - f_lo] = faults[COUNT, f]
            ended = _run_cell(
            p, mem, cap[i], gain_pm[i], desired[i], U[i], G[i], B[i], duration[i],
            ledger_base[i], initial[i], B_spread[i], G_spread[i], U_jitter[i], seed[i], grace[i],
            delete_newest[i] == 1, watch[i] == 1, slow_start[i] == 1, fail_pm[i],
            lost_pm[i], ev, n_ev, n_sc, rs_at, n_rs, faults, fault_left, f_lo, f_hi, lag,
            lag_offsets[i], lag_offsets[i + 1], b_table, b_offsets[i], b_offsets[i + 1],
            g_table, g_offsets[i], g_offsets[i + 1], out, i, pods, items, heap,
            responses, response_base[i])
            if ended != _ROOM:
                break
            # The cell outgrew the scratch arrays: larger ones, and the cell again from its
            # start (a pure function of its inputs: the same run, with room).
            if out[2, i] > pods.shape[1]:
                size = max(out[2, i], 2 * pods.shape[1])
                pods = np.empty((_N_COLS, size), np.int64)
                items = np.empty((3, size + 1), np.int64)
            if out[1, i] > heap.shape[0] >> 1:
                size = max(out[1, i], heap.shape[0])
                heap = np.empty(2 * size, np.int64)
        if ended != _DONE:
            out[0, i] = -ended


#: Cells per parallel block.
_BLOCK: Final = 64


def _simulate_events(  # noqa: PLR0913, PLR0917 — numba takes arrays positionally
        cparams: Int64Array, cap: Int64Array, gain_pm: Int64Array, desired: Int64Array,
        U: Int64Array, G: Int64Array, B: Int64Array, duration: Int64Array,
        ledger_base: Int64Array, initial: Int64Array, B_spread: Int64Array,
        G_spread: Int64Array,
        U_jitter: Int64Array, seed: Int64Array, grace: Int64Array, delete_newest: Int64Array,
        watch: Int64Array, slow_start: Int64Array, fail_pm: Int64Array, lost_pm: Int64Array,
        death_offsets: Int64Array, death_at: Int64Array, death_count: Int64Array,
        scale_offsets: Int64Array, scale_at: Int64Array, scale_desired: Int64Array,
        restart_offsets: Int64Array, restart_at: Int64Array, fault_offsets: Int64Array,
        faults: Int64Array, lag_offsets: Int64Array, lag: Int64Array, b_offsets: Int64Array,
        b_table: Int64Array, g_offsets: Int64Array, g_table: Int64Array,
        responses: Int64Array, response_base: Int64Array) -> Int64Array:
    n = len(desired)
    out = np.zeros((_N_OUT, n), np.int64)
    out[0, :] = UNRUN  # a cell run to its end writes its own
    for b in numba.prange((n + _BLOCK - 1) // _BLOCK):
        lo = b * _BLOCK
        _run_block(lo, min(n, lo + _BLOCK), cparams, cap, gain_pm, desired, U, G, B,
                   duration, ledger_base, initial, B_spread, G_spread, U_jitter, seed, grace,
                   delete_newest, watch, slow_start, fail_pm, lost_pm, death_offsets,
                   death_at, death_count, scale_offsets, scale_at, scale_desired,
                   restart_offsets, restart_at, fault_offsets, faults, lag_offsets, lag,
                   b_offsets, b_table, g_offsets, g_table, out, responses, response_base)
    return out


#: The functions compiled per controller (:func:`.specialise.specialise`), callees first.
_PER_CONTROLLER: Final = {
    "less_at": {"nogil": True}, "insertion_sort": {"nogil": True},
    "sift_down": {"nogil": True}, "median": {"nogil": True},
    "partial_insertion_sort": {"nogil": True}, "sort_range": {"nogil": True},
    "_run_cell": {"nogil": True}, "_run_block": {"nogil": True},
    "_simulate_events": {"parallel": True}}

#: The arrays :func:`simulate_event_arrays` reads, by the names
#: :func:`reconsim.model.simulate.kernel_inputs` gives them.
EVENT_INPUTS: Final = (
    "controller", "max_per_round", "gain", "desired", "U", "G", "B", "duration",
    "ledger_base", "initial", "B_spread", "G_spread", "U_jitter", "seed", "grace",
    "delete_order",
    "trigger", "slow_start", "fail_rate", "lost_rate", "deaths_offsets", "deaths_at",
    "deaths_count", "scale_offsets", "scale_at", "scale_desired", "restart_at_offsets",
    "restart_at", "create_faults_offsets",
    "create_faults_at", "create_faults_count", "create_faults_kind", "lag_offsets",
    "lag_from", "lag_to", "lag_extra", "B_delays_offsets", "B_delays_value",
    "B_delays_weight", "G_delays_offsets", "G_delays_value", "G_delays_weight")


def simulate_event_arrays(*, controllers: Sequence[Controller],
                          responses: Int64Array | None = None,
                          response_base: Int64Array | None = None,
                          **arrays: NDArray[np.generic]) -> Int64Array:
    """Run a batch of validated cells of controllers that sync on events; an
    ``(n, len(WORLD_OUT_COLUMNS))`` int64 matrix (the world kernel's columns). Takes the
    world kernel's keyword arrays (:data:`EVENT_INPUTS` of them, and each controller
    parameter by its name). Cell ``i``'s responses to its events go to the columns of
    ``responses`` (a C-contiguous int64 matrix of :data:`reconsim.model.rules.RESPONSE_ROWS`
    rows, written in place) from ``response_base[i]`` on; without them, to a throwaway
    buffer (:func:`reconsim.model.kernels.arrays.response_buffers`)."""
    from reconsim.model import params as model_params

    missing = [name for name in EVENT_INPUTS if name not in arrays]
    if missing:
        raise TypeError(f"simulate_event_arrays: missing {', '.join(missing)}")
    a = {name: np.ascontiguousarray(np.asarray(arrays[name]).astype(np.int64))
         for name in EVENT_INPUTS}
    n = len(a["controller"])
    check_offsets(a, n)
    responses, response_base = response_outputs(a, responses, response_base)
    a["delete_order"] = (a["delete_order"] == model_params.DELETE_ORDERS.index("newest")
                         ).astype(np.int64)
    a["trigger"] = (a["trigger"] == model_params.TRIGGERS.index("watch")).astype(np.int64)
    for name in ("B_delays", "G_delays"):  # running sums per cell, before rows are taken
        a[f"{name}_weight"] = cumulative(a[f"{name}_offsets"], a[f"{name}_weight"])
    out = np.empty((n, _N_OUT), np.int64)
    for code, rows in by_controller(a["controller"], None):
        cells = a if rows is None else take_rows(a, rows)
        chosen = {**cells, **{k: (arrays[k] if rows is None else np.asarray(arrays[k])[rows])
                              for k in controllers[code].params}}
        if rows is None:
            out[:] = _run_group(controllers[code], chosen, responses, response_base)
        else:
            with numbered(rows):  # a refusal names the batch's row, not the group's
                out[rows] = _run_group(controllers[code], chosen, responses,
                                       np.ascontiguousarray(response_base[rows]))
    return out


def _records(a: Mapping[str, NDArray[Any]], *names: str) -> Int64Array:
    """A schedule's fields as the rows of one array (one column at least: numba wants one)."""
    if not len(a[names[0]]):
        return np.zeros((len(names), 1), np.int64)
    return np.ascontiguousarray(np.stack([a[n] for n in names]).astype(np.int64))


def _run_group(controller: Controller, a: Mapping[str, NDArray[Any]], responses: Int64Array,
               response_base: Int64Array) -> Int64Array:
    kernel = _kernels(controller)["_simulate_events"]
    cparams = params_matrix(controller, a)
    faults = _records(a, "create_faults_at", "create_faults_kind", "create_faults_count")
    lag = _records(a, "lag_from", "lag_to", "lag_extra")
    b_table = _records(a, "B_delays_value", "B_delays_weight")  # weights as running sums
    g_table = _records(a, "G_delays_value", "G_delays_weight")
    inputs = (cparams, a["max_per_round"], a["gain"], a["desired"], a["U"], a["G"], a["B"],
              a["duration"], a["ledger_base"], a["initial"], a["B_spread"], a["G_spread"],
              a["U_jitter"], a["seed"], a["grace"], a["delete_order"], a["trigger"],
              a["slow_start"], a["fail_rate"], a["lost_rate"], a["deaths_offsets"],
              a["deaths_at"], a["deaths_count"], a["scale_offsets"], a["scale_at"],
              a["scale_desired"], a["restart_at_offsets"], a["restart_at"],
              a["create_faults_offsets"], faults, a["lag_offsets"], lag, a["B_delays_offsets"],
              b_table, a["G_delays_offsets"], g_table)
    made: list[Int64Array] = []  # the kernel makes ``out``, its rows marked unrun

    def run() -> Int64Array:
        out: Int64Array = kernel(*inputs, responses, response_base)
        made.append(out)
        first: Int64Array = out[0]
        return first

    run_rows(kernel, "event kernel", controller, run, lambda row: _kernels(controller)[
        "_run_block"](row, row + 1, *inputs, made[0], responses, response_base))
    out = made[0]
    bad = np.flatnonzero(out[0] == -_BAD)
    if bad.size:
        raise beyond_max(controller, int(bad[0]))
    if (out[0] == -_TOO_MANY).any():
        raise ControllerError(f"controller {controller.name!r}: a cell's events passed the "
                              "event kernel's count; run it on the reference model")
    endless = np.flatnonzero(out[0] == -_ENDLESS)
    if endless.size:
        row = int(endless[0])
        raise controller.endless_instant(int(out[1, row]), int(out[2, row])).at(row)
    beyond = np.flatnonzero(out[0] == -_COPIES)
    if beyond.size:
        row = int(beyond[0])
        raise controller.too_many_copies(int(out[1, row])).at(row)
    return out.T


@functools.cache
def _kernels(controller: Controller) -> dict[str, Any]:
    """The event kernel compiled for ``controller`` (cached on disk: :mod:`.specialise`)."""
    return specialise(globals(), _PER_CONTROLLER, controller)
