"""The event kernel: :mod:`reconsim.model.events` compiled, for controllers that sync on
events (``settle``).

The same rules (E1 to E7) in one flat loop over machine integers: the copies are columns
of one array, the instants due a binary heap of int64 keys (instant, what, order: the
order the reference model's heap pops them in), each beside its payload in one array,
the cache two columns beside the copies'. The controller's hooks (``decide``,
``settle``, ``observe``, ``less``) are compiled into it, one kernel per controller
(:mod:`.specialise`), and a deletion sorts with Go's ``sort.Sort`` step for step
(:func:`_go_sort`, the iterative form of :mod:`reconsim.model.gosort`: it sorts the same
disjoint ranges the same way). Between instants the live count is constant: the seconds
in between are added up in closed form.
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

from reconsim.model import rng
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
from reconsim.model.kernels.arrays import (
    Int64Array,
    KernelDecisionError,
    by_controller,
    cumulative,
    numbered,
    params_matrix,
    take_rows,
)
from reconsim.model.kernels.count import MAX_CORRECTION, copy_into, damped_int, sorted_into

# The controller's names, bound by specialise() for each controller (see .specialise).
from reconsim.model.kernels.specialise import (
    HAS_LESS,
    MEMORY_INIT,
    N_PARAMS,
    PARAMS_TYPE,
    beyond_max,
    compile_failure,
    decide,
    less,
    noting_compiles,
    observe,
    raised,
    settle,
    specialise,
)
from reconsim.model.kernels.world import WORLD_OUT_COLUMNS, table_u64, uniform_u64
from reconsim.model.kinds import MAX_COPIES, SYNCS_AT_ONCE

# What is due at an instant, in the order the rules take it when due together.
_READY, _LEAVE, _SECOND, _DELIVER, _RETRY = 0, 1, 2, 3, 4
_ORDER_BITS: Final = 30
_WHAT_BITS: Final = 3
_MS: Final = 1000
# The copies' columns: creation and readiness (ms, and the second a listing shows), the
# ledger delay, the copy's state, and the cache's view (listed: in it and not deleting).
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
#: The scratch arrays' first room: copies (items: one more), and heap entries.
_COPIES_ROOM: Final = 256
_HEAP_ROOM: Final = 4096
_N_OUT: Final = len(WORLD_OUT_COLUMNS)


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


def _less(items: Int64Array, i: int, j: int, now: int, p: Any) -> bool:
    return less(Item(items[0, i], items[1, i], items[2, i], now),
                Item(items[0, j], items[1, j], items[2, j], now), p)


@numba.njit(cache=True, nogil=True)
def _swap(items: Int64Array, i: int, j: int) -> None:
    for r in range(3):
        items[r, i], items[r, j] = items[r, j], items[r, i]


def _insertion(items: Int64Array, a: int, b: int, now: int, p: Any) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and _less(items, j, j - 1, now, p):
            _swap(items, j, j - 1)
            j -= 1


def _sift_down(items: Int64Array, lo: int, hi: int, first: int, now: int,  # noqa: PLR0913, PLR0917
               p: Any) -> None:
    root = lo
    while True:
        child = 2 * root + 1
        if child >= hi:
            return
        if child + 1 < hi and _less(items, first + child, first + child + 1, now, p):
            child += 1
        if not _less(items, first + root, first + child, now, p):
            return
        _swap(items, first + root, first + child)
        root = child


def _median(items: Int64Array, a: int, b: int, c: int,  # noqa: PLR0913, PLR0917
            swaps: Int64Array, now: int, p: Any) -> int:
    if _less(items, b, a, now, p):
        swaps[0] += 1
        a, b = b, a
    if _less(items, c, b, now, p):
        swaps[0] += 1
        b, c = c, b
    if _less(items, b, a, now, p):
        swaps[0] += 1
        a, b = b, a
    return b


def _partial_insertion(items: Int64Array, a: int, b: int, now: int, p: Any) -> bool:
    i = a + 1
    for _ in range(5):
        while i < b and not _less(items, i, i - 1, now, p):
            i += 1
        if i == b:
            return True
        if b - a < 50:
            return False
        _swap(items, i, i - 1)
        if i - a >= 2:
            for j in range(i - 1, 0, -1):
                if not _less(items, j, j - 1, now, p):
                    break
                _swap(items, j, j - 1)
        if b - i >= 2:
            for j in range(i + 1, b):
                if not _less(items, j, j - 1, now, p):
                    break
                _swap(items, j, j - 1)
    return False


def _go_sort(items: Int64Array, n: int, now: int, p: Any) -> None:  # noqa: PLR0912, PLR0915
    """Go's ``sort.Sort`` of ``items[:, :n]`` with the controller's ``less``."""
    if n <= 12:  # the loop's first step, without its stack
        _insertion(items, 0, n, now, p)
        return
    limit0 = 0
    while (1 << limit0) <= n:
        limit0 += 1
    stack = np.empty((3, 64 + n), np.int64)
    top = 0
    stack[0, 0], stack[1, 0], stack[2, 0] = 0, n, limit0
    top = 1
    swaps = np.zeros(1, np.int64)
    mask = np.uint64(0xFFFFFFFFFFFFFFFF)
    while top > 0:
        top -= 1
        a, b, limit = stack[0, top], stack[1, top], stack[2, top]
        balanced = partitioned = True
        while True:
            length = b - a
            if length <= 12:
                _insertion(items, a, b, now, p)
                break
            if limit == 0:  # heapsort
                hi = b - a
                for i in range((hi - 1) // 2, -1, -1):
                    _sift_down(items, i, hi, a, now, p)
                for i in range(hi - 1, -1, -1):
                    _swap(items, a, a + i)
                    _sift_down(items, 0, i, a, now, p)
                break
            if not balanced:  # break patterns
                state = np.uint64(length)
                bits = 0
                while (1 << bits) <= length:
                    bits += 1
                modulus = 1 << bits
                middle = a + (length // 4) * 2
                for idx in range(middle - 1, middle + 2):
                    state ^= (state << np.uint64(13)) & mask
                    state ^= state >> np.uint64(7)
                    state ^= (state << np.uint64(17)) & mask
                    other = np.int64(state & np.uint64(modulus - 1))
                    if other >= length:
                        other -= length
                    _swap(items, idx, a + other)
                limit -= 1
            swaps[0] = 0
            i, j, k = a + length // 4, a + length // 4 * 2, a + length // 4 * 3
            if length >= 8:
                if length >= 50:
                    i = _median(items, i - 1, i, i + 1, swaps, now, p)
                    j = _median(items, j - 1, j, j + 1, swaps, now, p)
                    k = _median(items, k - 1, k, k + 1, swaps, now, p)
                j = _median(items, i, j, k, swaps, now, p)
            pivot = j
            increasing = swaps[0] == 0
            if swaps[0] == 12:
                x, y = a, b - 1
                while x < y:
                    _swap(items, x, y)
                    x += 1
                    y -= 1
                pivot = (b - 1) - (pivot - a)
                increasing = True
            if balanced and partitioned and increasing and _partial_insertion(
                    items, a, b, now, p):
                break
            if a > 0 and not _less(items, a - 1, pivot, now, p):  # partition equal
                _swap(items, a, pivot)
                x, y = a + 1, b - 1
                while True:
                    while x <= y and not _less(items, a, x, now, p):
                        x += 1
                    while x <= y and _less(items, a, y, now, p):
                        y -= 1
                    if x > y:
                        break
                    _swap(items, x, y)
                    x += 1
                    y -= 1
                a = x
                continue
            # partition
            _swap(items, a, pivot)
            x, y = a + 1, b - 1
            while x <= y and _less(items, x, a, now, p):
                x += 1
            while x <= y and not _less(items, y, a, now, p):
                y -= 1
            if x > y:
                _swap(items, y, a)
                mid, partitioned = y, True
            else:
                _swap(items, x, y)
                x += 1
                y -= 1
                while True:
                    while x <= y and _less(items, x, a, now, p):
                        x += 1
                    while x <= y and not _less(items, y, a, now, p):
                        y -= 1
                    if x > y:
                        break
                    _swap(items, x, y)
                    x += 1
                    y -= 1
                _swap(items, y, a)
                mid, partitioned = y, False
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                balanced = left >= threshold
                stack[0, top], stack[1, top], stack[2, top] = a, mid, limit
                top += 1
                a = mid + 1
            else:
                balanced = right >= threshold
                stack[0, top], stack[1, top], stack[2, top] = mid + 1, b, limit
                top += 1
                b = mid


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
    pods[_DELETING, k] = -1
    pods[_GONE, k] = -1


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
        fail_pm: int, lost_pm: int, ev: Int64Array, n_ev: int, rs_at: Int64Array, n_rs: int,
        faults: Int64Array, fault_left: Int64Array, f_lo: int, f_hi: int,
        lag: Int64Array, w_lo: int, w_hi: int, b_table: Int64Array, b_lo: int, b_hi: int,
        g_table: Int64Array, g_lo: int, g_hi: int, out: Int64Array, row: int,
        pods: Int64Array, items: Int64Array, heap: Int64Array) -> int:
    end_ms = (duration + 1) * _MS
    room = heap.shape[0] >> 1  # heap entries: key and payload side by side
    if initial > pods.shape[1]:
        return _no_room(out, row, 0, initial)
    # The initial copies: created and ready before the run (BEFORE_RUN), in the cache with
    # their times shown as 0, their events long delivered; numbered first on the ledger
    # delay's stream.
    for k in range(initial):
        g = G
        if g_hi > g_lo:
            g += table_u64(seed, rng.LEDGER_DELAY, k, g_table, g_lo, g_hi)
        elif G_spread > 0:
            g += int(uniform_u64(seed, rng.LEDGER_DELAY, k, G_spread + 1))
        _new_copy(pods, k, BEFORE_RUN * _MS, BEFORE_RUN * _MS, g * _MS)
        pods[_IS_READY, k] = 1
        pods[_LISTED, k] = 1
    n_pods = initial
    n_due = 0
    order = 0
    epoch = 0
    copy_into(mem, MEMORY_INIT)
    queued, dirty, running = True, True, False
    st_active, st_ready, st_err = 0, 0, False
    rounds = created = create_commands = failed = delete_commands = deleted = reads = 0
    overshoot = excess = missing = last_drift = 0
    deaths_total = 0
    for e in range(n_ev):
        deaths_total += ev[1, e]
    next_periodic, periodic_i = 0, 0
    synced_this_second = False
    live = initial
    # The disturbance: seconds from the first death event on (none: after = duration + 1).
    after = ev[0, 0] if n_ev > 0 and ev[0, 0] <= duration else duration + 1
    overshoot_after = missing_after = 0
    last_after = after
    e_next = 0
    r_next = 0
    t = 0
    while t <= duration:
        start = t * _MS
        # The second's own entry (its deaths, restarts, a resync).
        resync = False
        if t == next_periodic:
            z = 0
            if U_jitter > 0:
                z = int(uniform_u64(seed, rng.INTERVAL, periodic_i, 2 * U_jitter + 1))
            next_periodic += max(1, U - U_jitter + z)
            periodic_i += 1
            resync = True
        # Only where it has something to do: a second is visited for an instant due in it
        # or for these (the loop's end skips to the next), and earlier ones are done.
        if resync or (e_next < n_ev and ev[0, e_next] == t) or (
                r_next < n_rs and rs_at[r_next] == t):
            if n_due + 1 >= room:
                return _no_room(out, row, 2 * room, 0)
            order += 1
            n_due = _push(heap, n_due,
                          ((start << _WHAT_BITS | _SECOND) << _ORDER_BITS) | order,
                          1 if resync else 0, 0, 0)
        synced_this_second = False
        while n_due > 0 and (heap[0] >> (_WHAT_BITS + _ORDER_BITS)) < start + _MS:
            now = heap[0] >> (_WHAT_BITS + _ORDER_BITS)
            syncs, most = 0, SYNCS_AT_ONCE + 2 * (desired + n_pods)  # E2's bound
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
                        if pods[_GONE, a] < 0:
                            pods[_IS_READY, a] = 1
                            live += 1
                            if now + pods[_G, a] < end_ms:
                                order += 1
                                n_due = _push(heap, n_due, (((now + pods[_G, a]) << 3
                                                                  | _DELIVER) << 30) | order,
                                              a, now // _MS, (pods[_DELETING, a] >= 0) * 1
                                              + UPDATED * 2)
                    elif what == _LEAVE:
                        if pods[_GONE, a] < 0:
                            pods[_GONE, a] = now
                            live -= pods[_IS_READY, a]
                            if now + pods[_G, a] < end_ms:
                                order += 1
                                n_due = _push(heap, n_due, (((now + pods[_G, a]) << 3
                                                                  | _DELIVER) << 30) | order,
                                              a, -1, 1 + DELETED * 2)
                    elif what == _SECOND:
                        for e in range(e_next, n_ev):
                            if ev[0, e] != t:
                                break
                            e_next = e + 1
                            left = ev[1, e]
                            for k in range(n_pods):
                                if left == 0:
                                    break
                                if pods[_GONE, k] < 0 and pods[_IS_READY, k] == 1:
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
                stale = -1
                for w in range(w_lo, w_hi):
                    if lag[0, w] <= t < lag[1, w]:
                        stale = lag[2, w]
                        break
                if stale < 0:
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
                        if pods[_BORN, k] > api or 0 <= pods[_GONE, k] <= api or (
                                0 <= pods[_DELETING, k] <= api):
                            continue
                        items[0, n_active] = k
                        items[1, n_active] = pods[_BORN_S, k]
                        items[2, n_active] = -1
                        if pods[_READY_AT, k] <= api and (
                                pods[_GONE, k] < 0 or pods[_READY_AT, k] <= pods[_GONE, k]):
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
                if cap > 0:
                    diff = max(-cap, min(cap, diff))
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
                            result = 0  # ok
                            found = False
                            for f in range(f_lo, f_hi):
                                if faults[0, f] <= t and fault_left[f - f_lo] > 0:
                                    fault_left[f - f_lo] -= 1
                                    result = 1 + faults[2, f]  # 1 fail, 2 lost
                                    found = True
                                    break
                            if not found:
                                if fail_pm > 0 and uniform_u64(
                                        seed, rng.FAIL, create_commands, 1000) < fail_pm:
                                    result = 1
                                elif lost_pm > 0 and uniform_u64(
                                        seed, rng.LOST, create_commands, 1000) < lost_pm:
                                    result = 2
                            create_commands += 1
                            issued += 1
                            if result == 1:
                                failed += 1
                                n_failed += 1
                                errors += 1
                                continue
                            k = n_pods
                            if k >= MAX_COPIES:
                                out[1, row] = t
                                return _COPIES
                            n_pods += 1
                            ready = B
                            if b_hi > b_lo:
                                ready += table_u64(seed, rng.STARTUP, k, b_table, b_lo, b_hi)
                            elif B_spread > 0:
                                ready += int(uniform_u64(seed, rng.STARTUP, k, B_spread + 1))
                            g = G
                            if g_hi > g_lo:
                                g += table_u64(seed, rng.LEDGER_DELAY, k, g_table, g_lo, g_hi)
                            elif G_spread > 0:
                                g += int(uniform_u64(seed, rng.LEDGER_DELAY, k, G_spread + 1))
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
                            if result == 2:
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
                        _go_sort(items, n_active, now, p)
                    for x in range(take):
                        k = items[0, x] if ordered or not delete_newest else items[
                            0, n_active - 1 - x]
                        issued += 1
                        delete_commands += 1
                        if pods[_GONE, k] >= 0:
                            not_found += 1
                            continue
                        pods[_MARKED, k] = 1
                        if pods[_DELETING, k] < 0:
                            deleted += 1
                            pods[_DELETING, k] = now
                            if n_due + 4 >= room:
                                return _no_room(out, row, 2 * room + 8, 0)
                            if grace == 0:
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
                                if now + grace * _MS < end_ms:
                                    order += 1
                                    n_due = _push(heap, n_due, (((now + grace * _MS) << 3
                                                                      | _LEAVE) << 30)
                                                  | order, k, 0, 0)
                delay = settle(Outcome(now, diff, issued, ok, n_failed, lost, not_found), p, mem)
                err = delay > 0
                if n_active != st_active or n_ready != st_ready or err != st_err:
                    st_active, st_ready, st_err = n_active, n_ready, err
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
        # The end of second t, and the seconds up to the next instant due: live is constant.
        upto = duration
        if n_due > 0:
            upto = min(duration, (heap[0] >> (_WHAT_BITS + _ORDER_BITS)) // _MS - 1)
        upto = min(upto, next_periodic - 1)
        if e_next < n_ev and ev[0, e_next] - 1 < upto:
            upto = ev[0, e_next] - 1
        if r_next < n_rs and rs_at[r_next] - 1 < upto:
            upto = rs_at[r_next] - 1
        upto = max(upto, t)
        span = upto - t + 1
        gap = live - desired
        overshoot = max(overshoot, gap)
        if gap > 0:
            excess += span * gap
        elif gap < 0:
            missing -= span * gap
        if gap != 0:
            last_drift = upto
        if upto >= after:
            overshoot_after = max(overshoot_after, gap)
            if gap < 0:
                missing_after -= (upto - max(t, after) + 1) * gap
            if gap != 0:
                last_after = upto
        t = upto + 1
    out[0, row] = rounds
    out[1, row] = created
    out[2, row] = delete_commands
    out[3, row] = deleted
    out[4, row] = overshoot
    out[5, row] = -1 if last_drift == duration else last_drift + 1
    out[6, row] = reads
    out[7, row] = excess
    out[8, row] = missing
    out[9, row] = deaths_total
    if after <= duration:
        out[10, row] = overshoot_after
        out[11, row] = missing_after
        out[12, row] = -1 if last_after == duration else last_after - after + 1
    else:
        out[10, row] = out[11, row] = out[12, row] = -1
    out[13, row] = create_commands
    out[14, row] = failed
    return _DONE


def _run_block(  # noqa: PLR0913, PLR0917 — numba takes arrays positionally
        lo: int, hi: int, cparams: Int64Array, cap: Int64Array, gain_pm: Int64Array,
        desired: Int64Array, U: Int64Array, G: Int64Array, B: Int64Array,
        duration: Int64Array, ledger_base: Int64Array, initial: Int64Array,
        B_spread: Int64Array,
        G_spread: Int64Array, U_jitter: Int64Array, seed: Int64Array, grace: Int64Array,
        delete_newest: Int64Array, watch: Int64Array, slow_start: Int64Array,
        fail_pm: Int64Array, lost_pm: Int64Array, death_offsets: Int64Array,
        death_at: Int64Array, death_count: Int64Array, restart_offsets: Int64Array,
        restart_at: Int64Array, fault_offsets: Int64Array, faults: Int64Array,
        lag_offsets: Int64Array, lag: Int64Array, b_offsets: Int64Array, b_table: Int64Array,
        g_offsets: Int64Array, g_table: Int64Array, out: Int64Array) -> None:
    mem = MEMORY_INIT.copy()
    # Scratch arrays for the block's cells, in _run_cell's arguments: never rebound there,
    # so numba counts no references in its loops.
    pods = np.empty((_N_COLS, _COPIES_ROOM), np.int64)
    items = np.empty((3, _COPIES_ROOM + 1), np.int64)
    heap = np.empty(2 * _HEAP_ROOM, np.int64)
    # and for their schedules, as long as the longest
    n_ev = n_rs = n_f = 1
    for i in range(lo, hi):
        n_ev = max(n_ev, death_offsets[i + 1] - death_offsets[i])
        n_rs = max(n_rs, restart_offsets[i + 1] - restart_offsets[i])
        n_f = max(n_f, fault_offsets[i + 1] - fault_offsets[i])
    ev = np.empty((2, n_ev), np.int64)
    rs_at = np.empty(n_rs, np.int64)
    rs_dummy = np.empty(n_rs, np.int64)
    fault_left = np.empty(n_f, np.int64)
    for i in range(lo, hi):
        p = PARAMS_TYPE(*to_fixed_tuple(cparams[i], N_PARAMS))  # type: ignore[call-arg]
        n_ev = sorted_into(death_at, death_count, death_offsets[i], death_offsets[i + 1],
                           ev[0], ev[1])
        n_rs = sorted_into(restart_at, restart_at, restart_offsets[i], restart_offsets[i + 1],
                           rs_at, rs_dummy)
        f_lo, f_hi = fault_offsets[i], fault_offsets[i + 1]
        while True:
            for f in range(f_lo, f_hi):
                fault_left[f - f_lo] = faults[1, f]
            ended = _run_cell(
            p, mem, cap[i], gain_pm[i], desired[i], U[i], G[i], B[i], duration[i],
            ledger_base[i], initial[i], B_spread[i], G_spread[i], U_jitter[i], seed[i], grace[i],
            delete_newest[i] == 1, watch[i] == 1, slow_start[i] == 1, fail_pm[i],
            lost_pm[i], ev, n_ev, rs_at, n_rs, faults, fault_left, f_lo, f_hi, lag,
            lag_offsets[i], lag_offsets[i + 1], b_table, b_offsets[i], b_offsets[i + 1],
            g_table, g_offsets[i], g_offsets[i + 1], out, i, pods, items, heap)
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
        restart_offsets: Int64Array, restart_at: Int64Array, fault_offsets: Int64Array,
        faults: Int64Array, lag_offsets: Int64Array, lag: Int64Array, b_offsets: Int64Array,
        b_table: Int64Array, g_offsets: Int64Array, g_table: Int64Array) -> Int64Array:
    n = len(desired)
    out = np.zeros((_N_OUT, n), np.int64)
    for b in numba.prange((n + _BLOCK - 1) // _BLOCK):
        lo = b * _BLOCK
        _run_block(lo, min(n, lo + _BLOCK), cparams, cap, gain_pm, desired, U, G, B,
                   duration, ledger_base, initial, B_spread, G_spread, U_jitter, seed, grace,
                   delete_newest, watch, slow_start, fail_pm, lost_pm, death_offsets,
                   death_at, death_count, restart_offsets, restart_at, fault_offsets,
                   faults, lag_offsets, lag, b_offsets, b_table, g_offsets, g_table, out)
    return out


#: The functions compiled per controller (:func:`.specialise.specialise`), callees first.
_PER_CONTROLLER: Final = {
    "_less": {"nogil": True}, "_insertion": {"nogil": True}, "_sift_down": {"nogil": True},
    "_median": {"nogil": True}, "_partial_insertion": {"nogil": True},
    "_go_sort": {"nogil": True}, "_run_cell": {"nogil": True}, "_run_block": {"nogil": True},
    "_simulate_events": {"parallel": True}}

#: The arrays :func:`simulate_event_arrays` reads, by the names
#: :func:`reconsim.model.simulate.kernel_inputs` gives them.
EVENT_INPUTS: Final = (
    "controller", "max_per_round", "gain", "desired", "U", "G", "B", "duration",
    "ledger_base", "initial", "B_spread", "G_spread", "U_jitter", "seed", "grace",
    "delete_order",
    "trigger", "slow_start", "fail_rate", "lost_rate", "deaths_offsets", "deaths_at",
    "deaths_count", "restart_at_offsets", "restart_at", "create_faults_offsets",
    "create_faults_at", "create_faults_count", "create_faults_kind", "lag_offsets",
    "lag_from", "lag_to", "lag_extra", "B_delays_offsets", "B_delays_value",
    "B_delays_weight", "G_delays_offsets", "G_delays_value", "G_delays_weight")


def simulate_event_arrays(*, controllers: Sequence[Controller],
                          **arrays: NDArray[np.generic]) -> Int64Array:
    """Run a batch of validated cells of controllers that sync on events, none with lag
    windows; an ``(n, len(WORLD_OUT_COLUMNS))`` int64 matrix (the world kernel's columns).
    Takes the world kernel's keyword arrays (:data:`EVENT_INPUTS` of them, and each
    controller parameter by its name)."""
    from reconsim.model import params as model_params

    a = {name: np.ascontiguousarray(np.asarray(arrays[name]).astype(np.int64))
         for name in EVENT_INPUTS}
    a["delete_order"] = (a["delete_order"] == model_params.DELETE_ORDERS.index("newest")
                         ).astype(np.int64)
    a["trigger"] = (a["trigger"] == model_params.TRIGGERS.index("watch")).astype(np.int64)
    for name in ("B_delays", "G_delays"):  # running sums per cell, before rows are taken
        a[f"{name}_weight"] = cumulative(a[f"{name}_offsets"], a[f"{name}_weight"])
    n = len(a["controller"])
    out = np.empty((n, _N_OUT), np.int64)
    for code, rows in by_controller(a["controller"], None):
        cells = a if rows is None else take_rows(a, rows)
        chosen = {**cells, **{k: (arrays[k] if rows is None else np.asarray(arrays[k])[rows])
                              for k in controllers[code].params}}
        if rows is None:
            out[:] = _run_group(controllers[code], chosen)
        else:
            with numbered(rows):  # a refusal names the batch's row, not the group's
                out[rows] = _run_group(controllers[code], chosen)
    return out


def _records(a: Mapping[str, NDArray[Any]], *names: str) -> Int64Array:
    """A schedule's fields as the rows of one array (one column at least: numba wants one)."""
    if not len(a[names[0]]):
        return np.zeros((len(names), 1), np.int64)
    return np.ascontiguousarray(np.stack([a[n] for n in names]).astype(np.int64))


def _run_group(controller: Controller, a: Mapping[str, NDArray[Any]]) -> Int64Array:
    kernel = _kernels(controller)["_simulate_events"]
    cparams = params_matrix(controller, a)
    faults = _records(a, "create_faults_at", "create_faults_count", "create_faults_kind")
    lag = _records(a, "lag_from", "lag_to", "lag_extra")
    b_table = _records(a, "B_delays_value", "B_delays_weight")  # weights as running sums
    g_table = _records(a, "G_delays_value", "G_delays_weight")
    try:
        with noting_compiles(kernel, "event kernel", controller):
            out = kernel(cparams, a["max_per_round"], a["gain"], a["desired"], a["U"], a["G"],
                         a["B"], a["duration"], a["ledger_base"], a["initial"], a["B_spread"],
                         a["G_spread"], a["U_jitter"], a["seed"], a["grace"],
                         a["delete_order"], a["trigger"], a["slow_start"], a["fail_rate"],
                         a["lost_rate"], a["deaths_offsets"], a["deaths_at"],
                         a["deaths_count"], a["restart_at_offsets"], a["restart_at"],
                         a["create_faults_offsets"], faults, a["lag_offsets"], lag,
                         a["B_delays_offsets"], b_table, a["G_delays_offsets"], g_table)
    except numba.core.errors.NumbaError as exc:
        raise KernelDecisionError(compile_failure(controller, exc)) from None
    except Exception as exc:  # raised by the controller's hooks, in its code
        raise raised(controller, exc) from None
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
    return out.T  # type: ignore[no-any-return]


@functools.cache
def _kernels(controller: Controller) -> dict[str, Any]:
    """The event kernel compiled for ``controller`` (cached on disk: :mod:`.specialise`)."""
    return specialise(globals(), _PER_CONTROLLER, controller)
