"""The world kernel: issue 8's rules on whole batches of cells, one copy a record.

Why a second kernel. :mod:`reconsim.kernel` is exact because every removal takes
the oldest copies and every copy has the same delays, so dead, ready and listed
copies are prefixes of creation order and three counts are the whole state. Varying
delays (``B_spread``, ``G_spread``), newest-first deletes and grace periods break
those prefixes, and stale reads (``lag``), watch triggers and faults need to know
*which* copies a round saw. So this kernel keeps, per copy, the times of
:class:`reconsim.reference.Copy` — birth, ready, its delay g, listed, removed, death —
plus two flags (removed by a delete command; remembered by the controller).

Why it is still fast. Nothing changes between *event seconds*: a periodic round, a
scripted death, a copy becoming ready or dying, and, with ``trigger = "watch"``, a
second at which the read could change. The kernel jumps from one to the next and adds
the per-second metrics up over the gaps, as the count kernel does. The read a round
at t would make is, per copy, an interval of seconds:

* outside lag windows the copy is read from ``max(birth + 1, listed)`` (a copy created
  in the round at t is not there when that round reads) until ``removed + g``
  (``removed + 1`` when g = 0 and a delete command removed it: the command comes
  after that second's read, a scripted death before it);
* inside a window with ``extra = x`` the round reads the ledger at the end of second
  ``t - x``, which lists the copy for ``listed <= t - x < removed + g``.

So the read can change only where one of those bounds falls, or where a lag window
opens or closes: those seconds are event seconds, and at each one the kernel compares
the reads at t and t - 1 copy by copy, exactly. Copies that can matter no more (dead,
and off every read the remaining rounds can make, lag included) are dropped from the
arrays after each round, so the arrays hold roughly the copies alive or listed.
Cost per cell is O(event seconds x copies held), not O(duration x copies ever made).

Random numbers come from :mod:`reconsim.rng`'s counter-based streams, so each draw
is a pure function of (seed, stream, counter): no state crosses cells or blocks.

The public entry point takes and returns plain NumPy arrays; polars stays in
:mod:`reconsim.simulate`.
"""

from __future__ import annotations

from typing import Final

import numba
import numpy as np
from numpy.typing import NDArray

from reconsim import rng
from reconsim.kernel import EXPECTATIONS, INTENT, OUT_COLUMNS, _sorted_into

#: :func:`reconsim.rng.splitmix64`, compiled: the same source on unsigned 64-bit integers.
splitmix64_u64 = numba.njit(cache=True, nogil=True)(rng.splitmix64)

#: Columns of the integer result matrix returned by :func:`simulate_world_arrays`.
WORLD_OUT_COLUMNS: Final[tuple[str, ...]] = (*OUT_COLUMNS, "create_commands", "failed_creates")
_N_OUT = len(WORLD_OUT_COLUMNS)
#: Cells per parallel block; each block allocates its scratch once.
_BLOCK = 512
#: "Never": a removal or death that has not happened.
_NEVER = 1 << 62
#: Copies a block's scratch holds at first; a cell that needs more is rerun with double.
_FIRST_CAPACITY = 64

Int64Array = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@numba.njit(cache=True, nogil=True)
def uniform_u64(seed: int, stream: int, k: int, n: int) -> np.int64:
    """:func:`reconsim.rng.uniform` in machine integers: draw ``k`` of ``stream`` mod ``n``."""
    x = (np.uint64(seed) << np.uint64(32)) | (np.uint64(stream) << np.uint64(28)) \
        | np.uint64(k)
    return np.int64(splitmix64_u64(x) % np.uint64(n))  # type: ignore[arg-type]


@numba.njit(cache=True, nogil=True)
def _extra(t: int, lag_from: Int64Array, lag_to: Int64Array, lag_extra: Int64Array) -> int:
    """The extra staleness of a read at t: the first listed window holding t, else 0."""
    for w in range(lag_from.shape[0]):
        if lag_from[w] <= t < lag_to[w]:
            return int(lag_extra[w])
    return 0


@numba.njit(cache=True, nogil=True)
def _in_read(  # noqa: PLR0913, PLR0917 — numba takes scalars positionally
    t: int, x: int, birth: int, listed: int, removed: int, g: int, by_command: bool,
) -> bool:
    """Whether a round at t (with staleness x, 0 for none) reads this copy."""
    if x > 0:
        r = t - x
        return listed <= r and (removed == _NEVER or r < removed + g)
    if t <= birth or listed > t:
        return False
    if removed == _NEVER:
        return True
    end = removed + 1 if (g == 0 and by_command) else removed + g
    return t < end


@numba.njit(cache=True, nogil=True)
def _run_cell(  # noqa: PLR0912, PLR0913, PLR0915, PLR0917 — one flat loop is what makes it fast
    controller: int, created_listed: bool, cap: int, ttl: int, gain_pm: int,
    desired: int, U: int, G: int, B: int, duration: int, ledger_base: int,
    B_spread: int, G_spread: int, U_jitter: int, seed: int, grace: int,
    delete_newest: bool, watch: bool, slow_start: bool, fail_pm: int, lost_pm: int,
    ev_at: Int64Array, ev_count: Int64Array, n_ev: int, restarts: Int64Array, n_rs: int,
    lag_from: Int64Array, lag_to: Int64Array, lag_extra: Int64Array,
    fault_at: Int64Array, fault_lost: BoolArray, fault_left: Int64Array,
    c_birth: Int64Array, c_ready: Int64Array, c_g: Int64Array, c_listed: Int64Array,
    c_removed: Int64Array, c_death: Int64Array, c_by_command: BoolArray,
    c_remembered: BoolArray, sel: Int64Array, out: Int64Array,
) -> bool:
    """Run one cell; False if it needs more copies than the scratch arrays hold."""
    capacity = c_birth.shape[0]
    n_lag = lag_from.shape[0]
    n_faults = fault_at.shape[0]
    max_extra = 0
    for w in range(n_lag):
        max_extra = max(max_extra, lag_extra[w])
    deaths_total = 0
    for j in range(n_ev):
        deaths_total += ev_count[j]
    n = 0  # copies held (in creation order)
    k_made = 0  # copies ever created: the counter of streams STARTUP and LEDGER_DELAY
    exp_active = False
    exp_set = 0
    exp_seen = 0  # expectations are observed by a read of the end of this second on
    p_rs = 0
    i_ev = 0
    next_periodic = 0
    periodic_i = 0
    rounds = created = commands = deleted = reads = create_commands = failed = 0
    overshoot = excess = missing = 0
    last_drift = 0
    prev = 0
    live = 0
    s = 0
    while s <= duration:
        if s > prev:  # seconds prev .. s-1 all had `live` copies
            gap = live - desired
            if gap > 0:
                excess += gap * (s - prev)
                overshoot = max(overshoot, gap)
            elif gap < 0:
                missing -= gap * (s - prev)
            if gap != 0:
                last_drift = s - 1
        # 1. Scripted deaths: the oldest live copies die (terminating ones included).
        kill = 0
        while i_ev < n_ev and ev_at[i_ev] == s:
            kill += ev_count[i_ev]
            i_ev += 1
        i = 0
        while kill > 0 and i < n:
            if c_ready[i] <= s < c_death[i]:
                c_death[i] = s
                if c_removed[i] == _NEVER:
                    c_removed[i] = s
                    c_by_command[i] = False
                kill -= 1
            i += 1
        # 2. Restarts wipe the controller's memory.
        while p_rs < n_rs and restarts[p_rs] <= s:
            for i in range(n):
                c_remembered[i] = False
            exp_active = False
            p_rs += 1
        # 3. A round: a periodic round time, or (watch) a read that differs from t - 1's.
        x = _extra(s, lag_from, lag_to, lag_extra)
        run = s == next_periodic
        if run:
            step = U
            if U_jitter > 0:
                step = U - U_jitter + int(uniform_u64(seed, rng.INTERVAL, periodic_i,
                                                      2 * U_jitter + 1))
            next_periodic += max(1, step)
            periodic_i += 1
        elif watch:
            x_before = _extra(s - 1, lag_from, lag_to, lag_extra)
            for i in range(n):
                if _in_read(s, x, c_birth[i], c_listed[i], c_removed[i], c_g[i],
                            c_by_command[i]) != _in_read(
                        s - 1, x_before, c_birth[i], c_listed[i], c_removed[i], c_g[i],
                        c_by_command[i]):
                    run = True
                    break
        if run:
            rounds += 1
            # 4. The read, as of second r.
            r = s - x
            seen = 0
            pending = 0
            for i in range(n):
                removed_by_r = c_removed[i] <= r
                if c_listed[i] <= r and not (c_removed[i] <= r - c_g[i]):
                    sel[seen] = i
                    seen += 1
                elif c_remembered[i] and not removed_by_r and c_listed[i] > r:
                    pending += 1
            reads += seen + ledger_base
            # 5. The decision.
            diff = desired - seen
            if controller == INTENT:
                diff -= pending
            elif controller == EXPECTATIONS and exp_active and r < exp_seen \
                    and s - exp_set < ttl:
                diff = 0
            if gain_pm < 1000 and diff != 0:  # ceil(gain x |diff|), in exact thousandths
                magnitude = (abs(diff) * gain_pm + 999) // 1000
                diff = magnitude if diff > 0 else -magnitude
            if cap > 0:
                diff = max(-cap, min(cap, diff))
            if diff > 0:  # 6. Creates, in slow-start batches if enabled.
                exp_seen = -_NEVER
                remaining = diff
                batch = 1 if slow_start else diff
                while remaining > 0:
                    batch = min(batch, remaining)
                    error = False
                    for _ in range(batch):
                        kind = 0  # 0 ok, 1 fail, 2 lost
                        scripted = False
                        for f in range(n_faults):
                            if fault_at[f] <= s and fault_left[f] > 0:
                                fault_left[f] -= 1
                                kind = 2 if fault_lost[f] else 1
                                scripted = True
                                break
                        if not scripted:
                            if fail_pm > 0 and uniform_u64(
                                    seed, rng.FAIL, create_commands, 1000) < fail_pm:
                                kind = 1
                            elif lost_pm > 0 and uniform_u64(
                                    seed, rng.LOST, create_commands, 1000) < lost_pm:
                                kind = 2
                        create_commands += 1
                        if kind == 1:  # nothing is created
                            failed += 1
                            error = True
                            continue
                        if n == capacity:
                            return False
                        ready = s + B
                        if B_spread > 0:
                            ready += int(uniform_u64(seed, rng.STARTUP, k_made, B_spread + 1))
                        g = G
                        if G_spread > 0:
                            g += int(uniform_u64(seed, rng.LEDGER_DELAY, k_made, G_spread + 1))
                        c_birth[n] = s
                        c_ready[n] = ready
                        c_g[n] = g
                        c_listed[n] = (s if created_listed else ready) + g
                        c_removed[n] = _NEVER
                        c_death[n] = _NEVER
                        c_by_command[n] = False
                        c_remembered[n] = kind == 0
                        if kind == 0:  # expectations wait for the creations that answered
                            exp_seen = max(exp_seen, c_listed[n])
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
            elif diff < 0:  # 7. Deletes to the oldest or newest entries it read.
                commands -= diff
                hit = min(-diff, seen)
                exp_seen = -_NEVER
                for h in range(hit):
                    i = sel[seen - 1 - h] if delete_newest else sel[h]
                    if c_removed[i] == _NEVER:
                        c_removed[i] = s
                        c_death[i] = s + grace
                        c_by_command[i] = True
                        deleted += 1
                    exp_seen = max(exp_seen, c_removed[i] + c_g[i])
                exp_active, exp_set = True, s
            # Drop copies no later read, death, pending count or watch check can involve.
            kept = 0
            for i in range(n):
                if not (c_death[i] <= s and c_removed[i] + c_g[i] + max_extra + 1 <= s):
                    if kept != i:
                        c_birth[kept] = c_birth[i]
                        c_ready[kept] = c_ready[i]
                        c_g[kept] = c_g[i]
                        c_listed[kept] = c_listed[i]
                        c_removed[kept] = c_removed[i]
                        c_death[kept] = c_death[i]
                        c_by_command[kept] = c_by_command[i]
                        c_remembered[kept] = c_remembered[i]
                    kept += 1
            n = kept
        # 8. Sample the live count; find the next second at which anything can change.
        live = 0
        nxt = next_periodic
        if i_ev < n_ev:
            nxt = min(nxt, ev_at[i_ev])
        x_next = _extra(s + 1, lag_from, lag_to, lag_extra) if watch else 0
        for i in range(n):
            ready = c_ready[i]
            death = c_death[i]
            if ready <= s < death:
                live += 1
            if ready > s:
                nxt = min(nxt, ready)
            if s < death < nxt:
                nxt = death
            if watch:
                removed = c_removed[i]
                if x_next > 0:
                    start = c_listed[i] + x_next
                    end = removed + c_g[i] + x_next
                else:
                    start = max(c_birth[i] + 1, c_listed[i])
                    end = removed + (1 if (c_g[i] == 0 and c_by_command[i]) else c_g[i])
                if s < start < nxt:
                    nxt = start
                if removed != _NEVER and s < end < nxt:
                    nxt = end
        if watch:
            for w in range(n_lag):
                if s < lag_from[w] < nxt:
                    nxt = lag_from[w]
                if s < lag_to[w] < nxt:
                    nxt = lag_to[w]
        prev = s
        s = nxt
    # seconds prev .. duration
    gap = live - desired
    span = duration + 1 - prev
    if gap > 0:
        excess += gap * span
        overshoot = max(overshoot, gap)
    elif gap < 0:
        missing -= gap * span
    if gap != 0:
        last_drift = duration
    out[0] = rounds
    out[1] = created
    out[2] = commands
    out[3] = deleted
    out[4] = overshoot
    out[5] = -1 if last_drift == duration else last_drift + 1
    out[6] = reads
    out[7] = excess
    out[8] = missing
    out[9] = deaths_total
    out[10] = create_commands
    out[11] = failed
    return True


def _simulate_world(  # noqa: PLR0913, PLR0917 — numba takes arrays positionally
    controller: Int64Array, created_listed: BoolArray, cap: Int64Array,
    ttl: Int64Array, gain_pm: Int64Array, desired: Int64Array, U: Int64Array, G: Int64Array,
    B: Int64Array, duration: Int64Array, ledger_base: Int64Array,
    B_spread: Int64Array, G_spread: Int64Array, U_jitter: Int64Array, seed: Int64Array,
    grace: Int64Array, delete_newest: BoolArray, watch: BoolArray, slow_start: BoolArray,
    fail_pm: Int64Array, lost_pm: Int64Array,
    death_offsets: Int64Array, death_at: Int64Array, death_count: Int64Array,
    restart_offsets: Int64Array, restart_at: Int64Array,
    lag_offsets: Int64Array, lag_from: Int64Array, lag_to: Int64Array, lag_extra: Int64Array,
    fault_offsets: Int64Array, fault_at: Int64Array, fault_count: Int64Array,
    fault_lost: BoolArray,
) -> Int64Array:
    n = controller.shape[0]
    out = np.empty((n, _N_OUT), np.int64)
    n_blocks = (n + _BLOCK - 1) // _BLOCK
    for b in numba.prange(n_blocks):
        lo = b * _BLOCK
        hi = min(n, lo + _BLOCK)
        max_ev = 1
        max_rs = 1
        max_faults = 1
        for i in range(lo, hi):
            max_ev = max(max_ev, death_offsets[i + 1] - death_offsets[i])
            max_rs = max(max_rs, restart_offsets[i + 1] - restart_offsets[i])
            max_faults = max(max_faults, fault_offsets[i + 1] - fault_offsets[i])
        ev_at = np.empty(max_ev, np.int64)
        ev_count = np.empty(max_ev, np.int64)
        rs_at = np.empty(max_rs, np.int64)
        rs_dummy = np.empty(max_rs, np.int64)
        fault_left = np.empty(max_faults, np.int64)
        capacity = _FIRST_CAPACITY
        c_birth = np.empty(capacity, np.int64)
        c_ready = np.empty(capacity, np.int64)
        c_g = np.empty(capacity, np.int64)
        c_listed = np.empty(capacity, np.int64)
        c_removed = np.empty(capacity, np.int64)
        c_death = np.empty(capacity, np.int64)
        c_by_command = np.empty(capacity, np.bool_)
        c_remembered = np.empty(capacity, np.bool_)
        sel = np.empty(capacity, np.int64)
        for i in range(lo, hi):
            # Deaths in one second commute (together they kill min(total, live) of the
            # oldest live copies), so only their order in time matters.
            n_ev = _sorted_into(death_at, death_count, death_offsets[i], death_offsets[i + 1],
                                ev_at, ev_count)
            n_rs = _sorted_into(restart_at, restart_at, restart_offsets[i],
                                restart_offsets[i + 1], rs_at, rs_dummy)
            w_lo, w_hi = lag_offsets[i], lag_offsets[i + 1]
            f_lo, f_hi = fault_offsets[i], fault_offsets[i + 1]
            while True:
                fault_left[:f_hi - f_lo] = fault_count[f_lo:f_hi]
                done = _run_cell(
                    controller[i], created_listed[i], cap[i], ttl[i], gain_pm[i], desired[i],
                    U[i], G[i], B[i], duration[i], ledger_base[i], B_spread[i], G_spread[i],
                    U_jitter[i], seed[i], grace[i], delete_newest[i], watch[i], slow_start[i],
                    fail_pm[i], lost_pm[i], ev_at, ev_count, n_ev, rs_at, n_rs,
                    lag_from[w_lo:w_hi], lag_to[w_lo:w_hi], lag_extra[w_lo:w_hi],
                    fault_at[f_lo:f_hi], fault_lost[f_lo:f_hi], fault_left[:f_hi - f_lo],
                    c_birth, c_ready, c_g, c_listed, c_removed, c_death, c_by_command,
                    c_remembered, sel, out[i],
                )
                if done:
                    break
                capacity *= 2  # the cell holds more copies at once: run it again, wider
                c_birth = np.empty(capacity, np.int64)
                c_ready = np.empty(capacity, np.int64)
                c_g = np.empty(capacity, np.int64)
                c_listed = np.empty(capacity, np.int64)
                c_removed = np.empty(capacity, np.int64)
                c_death = np.empty(capacity, np.int64)
                c_by_command = np.empty(capacity, np.bool_)
                c_remembered = np.empty(capacity, np.bool_)
                sel = np.empty(capacity, np.int64)
    return out


_simulate_world_parallel = numba.njit(cache=True, parallel=True)(_simulate_world)
_simulate_world_serial = numba.njit(cache=True)(_simulate_world)
#: Batches smaller than this run on one thread.
PARALLEL_MIN_CELLS: Final = 8 * _BLOCK

#: The keyword arrays :func:`simulate_world_arrays` takes, in the kernel's order.
WORLD_INPUTS: Final[tuple[str, ...]] = (
    "controller", "created_listed", "cap", "ttl", "gain_pm", "desired", "U", "G", "B",
    "duration", "ledger_base", "B_spread", "G_spread", "U_jitter", "seed", "grace",
    "delete_newest", "watch", "slow_start", "fail_pm", "lost_pm",
    "death_offsets", "death_at", "death_count", "restart_offsets", "restart_at",
    "lag_offsets", "lag_from", "lag_to", "lag_extra",
    "fault_offsets", "fault_at", "fault_count", "fault_lost",
)
_BOOL_INPUTS = frozenset({"created_listed", "delete_newest", "watch", "slow_start", "fault_lost"})


def simulate_world_arrays(
    *, parallel: bool | None = None, **arrays: NDArray[np.generic],
) -> Int64Array:
    """Run a batch of validated cells in the world model; an ``(n, len(WORLD_OUT_COLUMNS))``
    int64 matrix.

    Takes :data:`WORLD_INPUTS` as keywords: those of
    :func:`reconsim.kernel.simulate_arrays`, plus issue 8's parameters — ``fail_pm`` and
    ``lost_pm`` in thousandths, ``delete_newest`` / ``watch`` / ``slow_start`` as
    booleans — and the lag windows and create faults of cell ``i`` as the slices
    ``[lag_offsets[i]:lag_offsets[i + 1]]`` and ``[fault_offsets[i]:fault_offsets[i + 1]]``
    of their arrays, in listed order (order matters for both: the first window holding t
    applies, the first fault event with count left is used).
    """
    missing = [name for name in WORLD_INPUTS if name not in arrays]
    if missing:
        raise TypeError(f"simulate_world_arrays: missing {', '.join(missing)}")
    n = len(arrays["controller"])
    for name, values in (("death", "death_at"), ("restart", "restart_at"), ("lag", "lag_from"),
                         ("fault", "fault_at")):
        offsets = arrays[f"{name}_offsets"]
        if len(offsets) != n + 1 or offsets[0] != 0 or offsets[-1] != len(arrays[values]):
            raise ValueError(f"{name}_offsets must run from 0 to the number of {name} "
                             "values, one entry per cell + 1")
    args = [np.ascontiguousarray(arrays[name], np.bool_ if name in _BOOL_INPUTS else np.int64)
            for name in WORLD_INPUTS]
    if parallel is None:
        parallel = n >= PARALLEL_MIN_CELLS
    run = _simulate_world_parallel if parallel else _simulate_world_serial
    return run(*args)  # type: ignore[arg-type]
