"""The Deployment kernel: :mod:`reconsim.model.deployment` compiled, a batch of cells at a
time.

The same rules (D1-D6, R1-R4, C1-C9, client-go's queues Q1-Q5) in one flat loop over
machine integers, instant by instant on the nanosecond clock: the pods are rows of one
array (their state in the API and in the pod cache beside it), the ReplicaSets columns of
another (their spec, annotations and status in the API, their expectations, and the view
the running ``syncDeployment`` holds of them), the Deployment a row of integers (its
conditions in their order, times in ns), the events due five lanes each already in the
order of the reference model's heap, (instant, kind, order), so that the earliest of their
first entries is the heap's first (see :func:`_push`). The rules on numbers are
:mod:`reconsim.model.deployment_rules`' functions, compiled; a ReplicaSet's pods are
ranked with Go's ``sort.Sort`` (:mod:`reconsim.model.gosort`'s own functions, compiled here
with the listed pods' fields and their age ranks as their data).

Two facts of the world keep the state small. Deployment and ReplicaSet events reach their
caches at the instant they are written, before the next sync: a sync reads the API's own
ReplicaSets and Deployment, and a delivery only queues keys (their order is kept). The
pod cache lags: each pod event carries its snapshot (ready second, deleting) and is
delivered ``G`` s later, in order.

The per-second trace is sampled from counts kept as pods change (per ReplicaSet: pods in
the API, live, terminating, truly available — a pod turning Ready waits in a queue until
its ready second + minReadySeconds), and folded into the metrics as it goes
(:func:`reconsim.model.deployment_rules.add_seconds`): the seconds up to the next one with
something due repeat a row, folded at once. A ReplicaSet's cached pods are in uid order
(its pods reach the cache in the order they were created, all G s late): a sync reads
them, between bounds kept for each ReplicaSet, only to choose the pods it deletes; the
counts it reads (the pods listed, the ready ones, the available ones) are kept as the
cache changes, the pods turned ready in the cache waiting in a queue, in the order they
turned ready, until minReadySeconds have passed at a sync.

As it goes it also counts the figures every world has (overshoot, copy-seconds,
``stable_at``, rounds, the disturbance's and each event's response) with the rules every
simulator shares (:mod:`reconsim.model.kernels.rules`), fed as
:func:`reconsim.model.rolling.metrics_of` feeds them from the trace.

A block of cells shares its scratch arrays, passed to a cell's loop (compiled without
reference counting) as views that own nothing (see :func:`_unowned`); the threads take
the blocks one at a time. A cell that needs more room (pods, lanes) returns for larger
arrays and runs again from its start, the same run. Refusals
(:class:`~reconsim.errors.KernelRefusalError`, naming the cell's row): more than 10
rollouts (the revision history's cleanup, which the model leaves out), none, out of order,
counts or seconds out of a cell's range, and a proportional scale over a max-replicas
annotation of 0 (where the reference model divides by zero).
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import numba
import numpy as np
from llvmlite import ir as llvm_ir  # type: ignore[import-untyped]
from numba.core import types as nb_types
from numba.core.extending import intrinsic
from numba.np.numpy_support import carray
from numpy.typing import NDArray

from reconsim.errors import KernelRefusalError
from reconsim.model import deployment_rules, gosort, workqueue
from reconsim.model.deployment import (
    BURST_REPLICAS,
    EXPECTATIONS_TIMEOUT,
    MAX_RETRIES,
    PRE_HISTORY,
    PROGRESS_DEADLINE,
    REVISION_HISTORY_LIMIT,
    TRACE_COLUMNS,
    Scenario,
    int_or_percent,
)
from reconsim.model.deployment import METRIC_COLUMNS as _METRIC_COLUMNS
from reconsim.model.kernels import rules as shared_rules
from reconsim.model.kernels.arrays import response_outputs
from reconsim.model.kernels.rules import (
    account,
    begin_event,
    change_desired,
    end_events,
    rebound,
    start_account,
    write_metrics,
)
from reconsim.model.kernels.world import WORLD_OUT_COLUMNS
from reconsim.model.kinds import MAX_COPIES
from reconsim.model.kinds import MAX_SECONDS as KIND_MAX_SECONDS

Int64Array = NDArray[np.int64]

#: The metric rows :func:`simulate_deployment_arrays` writes, in ``metrics.csv``'s order
#: (``id`` left out; -1 for a null).
DEPLOYMENT_OUT_COLUMNS: Final = _METRIC_COLUMNS[1:]
#: The rows of the figures every world has (``shared``), as the world kernel writes them
#: (:func:`reconsim.model.rules.write_metrics`; -1 for a null): counted as
#: :func:`reconsim.model.rolling.metrics_of` counts them from the trace.
SHARED_OUT_COLUMNS: Final = WORLD_OUT_COLUMNS
#: The trace columns a trace buffer holds, in the data set's order (``t`` first).
DEPLOYMENT_TRACE_COLUMNS: Final = TRACE_COLUMNS
#: The arrays :func:`simulate_deployment_arrays` reads: one value per cell, except the
#: lists (``NAME_offsets``: cell i's entries are ``offsets[i] … offsets[i + 1] - 1`` of
#: the list's value arrays). ``max_surge`` and ``max_unavailable`` are a count or a
#: percentage (``*_percent`` 1: ``25, 1`` is "25%"), resolved against each moment's
#: desired count as the controller does; ``start`` 0 is settled, 1 cold; ``rollouts_at``
#: the seconds the template changes (at least one, in order); ``scale_at`` and
#: ``scale_desired`` the changes of spec.replicas (in order); ``deaths_at`` and
#: ``deaths_count`` the deaths.
DEPLOYMENT_INPUTS: Final = (
    "desired", "G", "B", "min_ready_seconds", "grace", "max_surge", "max_surge_percent",
    "max_unavailable", "max_unavailable_percent", "start", "duration", "rollouts_offsets",
    "rollouts_at", "scale_offsets", "scale_at", "scale_desired", "deaths_offsets",
    "deaths_at", "deaths_count")
#: The starts, as ``start`` numbers them.
STARTS: Final = ("settled", "cold")
#: The most ReplicaSets a cell may have (a first template and its rollouts): beyond the
#: revision history's limit the controller would clean up, which the model does not do.
MAX_REPLICASETS: Final = REVISION_HISTORY_LIMIT + 1
#: The largest count (desired, a scale's, a death event's, a budget) and the largest
#: duration, G, B, grace and minReadySeconds a cell may have: a cell's own bounds
#: (:mod:`reconsim.model.kinds`), far from where a time in nanoseconds or a count of events
#: would pass int64.
MAX_COUNT: Final = MAX_COPIES
MAX_SECONDS: Final = KIND_MAX_SECONDS

_S: Final = workqueue.SECOND
_NOT: Final = deployment_rules.NOT_READY
_NONE: Final = -1  # an absent annotation or revision
_NEVER: Final = 1 << 62

# --- the compiled rules --------------------------------------------------------------


#: A digest of the sources the kernel compiles: part of the name of each function it
#: compiles from another module (numba's disk cache checks only that module's source, so an
#: edit here would otherwise load a function compiled with the old helpers bound).
_DIGEST: Final = hashlib.sha256("".join(
    inspect.getsource(m) for m in (deployment_rules, gosort, workqueue)).encode()
    + Path(__file__).read_bytes() + shared_rules.SOURCE_DIGEST.encode()).hexdigest()[:8]


def _jit(function: Any, inline: Literal["never", "always"] = "never", **bound: Any) -> Any:
    """``function`` compiled with the names ``bound`` rebound in its globals; inlined at
    numba's level where asked (see the note on the events due)."""
    copy = rebound(function, {**function.__globals__, **bound}, f"deployment_{_DIGEST}")
    return numba.njit(cache=True, nogil=True, inline=inline)(copy)


def _jit_nrt(function: Any, nrt: bool, **bound: Any) -> Any:
    """:func:`_jit` with numba's reference counting on or off, whoever calls it (a function
    compiled apart otherwise takes its caller's setting, and a cell's loop has it off)."""
    copy = rebound(function, {**function.__globals__, **bound}, f"deployment_{_DIGEST}")
    options: dict[str, Any] = {"_nrt": nrt}  # (an option numba's type stubs do not list)
    return numba.njit(cache=True, nogil=True, **options)(copy)


def _kernel(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """Compile a function of this module that calls the rules of other modules (inlined,
    or linked into its machine code) under a name holding :data:`_DIGEST`: numba's disk
    cache of it is keyed by this file alone, and so would keep the code of old rules."""
    def compiled(function: Any) -> Any:
        copy = rebound(function, globals(), f"deployment_{_DIGEST}")
        return numba.njit(cache=True, nogil=True, **options)(copy)
    return compiled


_A: Final[Literal["always"]] = "always"
_scaled = _jit(deployment_rules.scaled, _A)
_go_round = _jit(deployment_rules.go_round, _A)
_surge = _jit(deployment_rules.fencepost_surge, _A, scaled=_scaled)
_unavailable = _jit(deployment_rules.fencepost_unavailable, _A, scaled=_scaled)
_new_rs_new_replicas = _jit(deployment_rules.new_rs_new_replicas, _A)
_max_scaled_down = _jit(deployment_rules.max_scaled_down, _A)
_proportion = _jit(deployment_rules.proportion, _A, go_round=_go_round)
_age_rank = _jit(deployment_rules.age_rank, _A)
_ranked_less = _jit(deployment_rules.ranked_less, _A)
_exponential_delay = _jit(workqueue.exponential_delay, _A)
_duration_from_tokens = _jit(workqueue.duration_from_tokens, _A)
_tokens_from_duration = _jit(workqueue.tokens_from_duration, _A)
_reserve = _jit(workqueue.reserve, _A, duration_from_tokens=_duration_from_tokens,
                tokens_from_duration=_tokens_from_duration)
_start_metrics = _jit(deployment_rules.start_metrics)
_rollout_done = _jit(deployment_rules.rollout_done, _A)
_add_seconds = _jit(deployment_rules.add_seconds, _A, rollout_done=_rollout_done)
_end_metrics = _jit(deployment_rules.end_metrics, rollout_done=_rollout_done)


# Go's sort over the ranked pods' columns (uid, created, ready and their age ranks):
# gosort's functions, compiled with this less_at and swap_at.
def _less_at(items: Int64Array, i: int, j: int, now: int, p: Any) -> bool:
    return bool(_ranked_less(items[i, 0], items[i, 1], items[i, 2], items[i, 3], items[i, 4],
                             items[j, 0], items[j, 1], items[j, 2], items[j, 3], items[j, 4]))


def _swap_at(items: Int64Array, i: int, j: int) -> None:
    for r in range(5):
        items[i, r], items[j, r] = items[j, r], items[i, r]


# (inlined in the sort's functions: a comparison is a few loads, less than a call that
# passes the array)
_sort_scope: dict[str, Any] = {"less_at": _jit(_less_at, _A), "swap_at": _jit(_swap_at, _A)}
# (with reference counting where the sort allocates its stack, sort_range, only)
for _name in ("insertion_sort", "sift_down", "median", "partial_insertion_sort",
              "sort_range"):
    _sort_scope[_name] = _jit_nrt(getattr(gosort, _name), _name == "sort_range",
                                  **_sort_scope)
_sort_pods = _sort_scope["sort_range"]


# --- the state's layout --------------------------------------------------------------

# The pods' fields (pod uid k in row k): owner (ReplicaSet index), creation second,
# ready second (_NOT), deletion flag, gone flag; the cache's view: held, ready, deleting;
# the expectations mark (the epoch of the record naming it); truly available (0 waiting
# or never, 1 counted, 2 never again); counted available in the cache (ready
# minReadySeconds before the instant of a sync).
(_OWNER, _BORN, _READY, _DELETING, _GONE, _C_IN, _C_READY, _C_DEL, _MARK,
 _COUNTED, _C_AV) = range(11)
_P_COLS: Final = 11
# The ReplicaSets' columns (template k + 1 in column k): in the API; creation second;
# generation, spec.replicas, revision, desired and max annotations; status replicas,
# ready, available, observedGeneration; expectations (set, add, del, at, epoch); pods in
# the API, live, terminating, truly available; the sync's view of it (replicas,
# annotations, revision, status); its name's rank; bounds of its pods' uids in the cache
# (none of its pods listed is below the first; the second, the largest to reach it; 0
# none); its pods the cache lists (not deleting), of them the ready ones and those counted
# available (what a sync of it counts, kept as the cache changes).
(_EXISTS, _CREATED, _GEN, _REPL, _REV, _DANN, _MANN, _SREPL, _SREADY, _SAVAIL, _SOG,
 _EXP, _EADD, _EDEL, _EAT, _EEPOCH, _NAPI, _NLIVE, _NTERM, _NTAV, _VREPL, _VDANN, _VMANN,
 _VREV, _VSREPL, _VSREADY, _VSAVAIL, _NAME, _CHEAD, _CTAIL, _CLIST, _CREADY,
 _CAVAIL) = range(33)
_R_COLS: Final = 33
# A Deployment (rows of one array: 0 the API's, 1 the sync's copy, 2 the status being
# computed): resourceVersion, generation, spec.replicas, template, revision; status:
# observedGeneration, replicas, updated, ready, available, unavailable, the number of
# conditions, and each condition (type, status, reason, lastUpdate, lastTransition).
_RV, _DGEN, _DREPL, _TMPL, _DREV = range(5)
_OG, _STREPL, _UPD, _STREADY, _STAVAIL, _UNAV, _NCOND = range(5, 12)
_C0: Final = 12
_D_COLS: Final = _C0 + 10
_API, _SYNC, _ST = 0, 1, 2
# A condition's fields, its types and reasons.
_CT, _CS, _CR, _CLU, _CLT = range(5)
_AVAILABLE_T, _PROGRESSING_T = 0, 1
(_NEW_RS_CREATED, _FOUND_NEW_RS, _NEW_RS_AVAILABLE, _RS_UPDATED, _TIMED_OUT,
 _MIN_AVAILABLE, _MIN_UNAVAILABLE) = range(1, 8)
# An entry's fields in the heap (an entry a row): instant, kind and order, the payload.
_K1, _K2, _PA, _PB, _PC, _PD = range(6)
_H_ROWS: Final = 6
# The lanes of the events due (see _push).
_SCRIPT, _NOW_LANE, _POD_LANE, _READY_LANE, _LEAVE_LANE = range(5)
_N_LANES: Final = 5
_ORDER_BITS: Final = 40
# What may be due, in D2's order; and what a delivery carries.
_POD, _DEATHS, _USER, _DELIVER = range(4)
_TO_READY, _TO_LEAVE = 0, 1
_CREATE, _TEMPLATE, _SCALE = 0, 1, 2
_DEP_CACHE, _RS_CACHE, _POD_CACHE = 0, 1, 2
_ADDED, _UPDATED, _DELETED = 0, 1, 2
# The queues: the Deployment controller's (one key, 0) and the ReplicaSet controller's
# (a key per ReplicaSet); their rows in the queue state: dirty, processing, waiting's due
# (-1 none) and call order, failures.
_DEP_Q, _RS_Q = 0, 1
_DIRTY, _PROC, _WDUE, _WORD, _FAIL = range(5)
_Q_ROWS: Final = 5
# The second's counts (a trace row's columns).
_R = deployment_rules
# A cell's end: done, more room needed (need[0] the pods, need[1] a lane's), a proportion
# over a max-replicas annotation of 0 (where the reference model divides by zero).
_DONE, _ROOM, _ZERO_ANNOTATION, _CONFLICT = 0, 1, 2, 3
_POD_ROOM: Final = 1024
_LANE_ROOM: Final = 512  # a power of two


def _name_ranks() -> Int64Array:
    names = [f"web-v{k + 1}" for k in range(MAX_REPLICASETS)]
    order = sorted(range(MAX_REPLICASETS), key=lambda k: names[k])
    ranks = np.empty(MAX_REPLICASETS, np.int64)
    for rank, k in enumerate(order):
        ranks[k] = rank
    return ranks


#: Each ReplicaSet's place in name order (``web-v10`` sorts before ``web-v2``).
_NAME_RANKS: Final = _name_ranks()


# --- the events due ----------------------------------------------------------------------
# A cell's loop is compiled without numba's reference counting (``_nrt=False``): it
# allocates nothing, and every array it reads outlives it (its block's scratch, the
# batch). The helpers compiled apart take that setting from it, and so passing an array,
# or inlining a helper that takes one (numba's inlining aliases each array argument), costs
# no count at all: counts the compiler did not prune in a function this large, a call
# each, were a fifth of the kernel's time (1.3x the cells per CPU-second without them,
# measured). Go's sort, which allocates its stack, keeps its counting there (:func:`_jit_nrt`).
# The small helpers called most often are inlined (adding an entry due, the queues' Add,
# AddAfter, Get, Done and release, a second's row and its fold, the status helpers, a
# pod's leaving), the lanes' first entries read in the loop itself (together a third more
# cells per CPU-second, measured); so are the conditions' helpers, a ReplicaSet's Update
# and reconcileOldReplicaSets, called at most Deployment syncs (a call passes each array
# as a dozen machine words: about 1.05x more, measured), the others compiled apart.
#
# The events due are not one heap but five lanes, each already in the order the reference
# model's heap pops them (instant, kind, order): the script (the user's writes and the
# deaths, sorted as they are added at the start), the deliveries of the instant (a write's
# event), the pod events (all delivered G s later), the pods turning Ready (B s after
# their creation) and the pods leaving (grace s after their deletion). Each lane's entries
# are added in the order of their keys, so the earliest of the five lanes' first entries
# is the heap's first. A lane is a ring of ``cap`` entries (a power of two); ``lanes``
# holds each lane's first and next positions (rows 0, 1), the room flag (row 2) and its
# first entry's instant and kind-and-order (rows 3, 4; _NEVER for an empty lane).


@numba.njit(cache=True, nogil=True, inline=_A)
def _push(heap: Int64Array, lanes: Int64Array, lane: int, instant: int, kind: int,  # noqa: PLR0913, PLR0917
          order: int, a: int, b: int, c: int, d: int) -> None:
    """Add an entry to ``lane`` (its first and next positions ``lanes[0, lane]``,
    ``lanes[1, lane]``); beyond its room, flag ``lanes[2, 0]``: the cell runs again with
    more."""
    cap = heap.shape[0] // _N_LANES
    head, tail = lanes[0, lane], lanes[1, lane]
    if tail - head >= cap:
        lanes[2, 0] = 1
        return
    k2 = (kind << _ORDER_BITS) | order
    i = tail
    if i == head:
        lanes[3, lane], lanes[4, lane] = instant, k2
    if lane == _SCRIPT:  # the script's entries come in any order: sorted insertion
        while i > head:
            prev = lane * cap + ((i - 1) & (cap - 1))
            if heap[prev, _K1] < instant or (heap[prev, _K1] == instant
                                             and heap[prev, _K2] < k2):
                break
            at = lane * cap + (i & (cap - 1))
            for r in range(_H_ROWS):
                heap[at, r] = heap[prev, r]
            i -= 1
        if i == head:  # the new first
            lanes[3, lane], lanes[4, lane] = instant, k2
    at = lane * cap + (i & (cap - 1))
    heap[at, _K1], heap[at, _K2] = instant, k2
    heap[at, _PA], heap[at, _PB], heap[at, _PC], heap[at, _PD] = a, b, c, d
    lanes[1, lane] = tail + 1


# --- the queues (Q1-Q5) ----------------------------------------------------------------


@numba.njit(cache=True, nogil=True, inline=_A)
def _q_add(qs: Int64Array, fifo: Int64Array, qv: Int64Array, q: int, key: int) -> None:
    """Q1: ``Add`` (``qv[q]`` the queue's length)."""
    if qs[q, _DIRTY, key]:
        return
    qs[q, _DIRTY, key] = 1
    if not qs[q, _PROC, key]:
        fifo[q, qv[q]] = key
        qv[q] += 1


@numba.njit(cache=True, nogil=True, inline=_A)
def _q_get(qs: Int64Array, fifo: Int64Array, qv: Int64Array, q: int) -> int:
    """Q1: ``Get``."""
    key = fifo[q, 0]
    for i in range(1, qv[q]):
        fifo[q, i - 1] = fifo[q, i]
    qv[q] -= 1
    qs[q, _PROC, key] = 1
    qs[q, _DIRTY, key] = 0
    return int(key)


@numba.njit(cache=True, nogil=True, inline=_A)
def _q_done(qs: Int64Array, fifo: Int64Array, qv: Int64Array, q: int, key: int) -> None:
    """Q1: ``Done``."""
    qs[q, _PROC, key] = 0
    if qs[q, _DIRTY, key]:
        fifo[q, qv[q]] = key
        qv[q] += 1


@numba.njit(cache=True, nogil=True, inline=_A)
def _q_add_after(qs: Int64Array, fifo: Int64Array, qv: Int64Array,  # noqa: PLR0913, PLR0917
                 q: int, key: int, delay: int, now: int) -> None:
    """Q2: ``AddAfter`` (``qv[2 + q]`` the queue's count of calls, ``qv[4 + q]`` the
    earliest time a key waits for, _NEVER for none)."""
    if delay <= 0:  # Add
        if qs[q, _DIRTY, key]:
            return
        qs[q, _DIRTY, key] = 1
        if not qs[q, _PROC, key]:
            fifo[q, qv[q]] = key
            qv[q] += 1
        return
    qv[2 + q] += 1
    due = now + delay
    if qs[q, _WDUE, key] < 0 or due < qs[q, _WDUE, key]:
        qs[q, _WDUE, key] = due
        qs[q, _WORD, key] = qv[2 + q]
        qv[4 + q] = min(qv[4 + q], due)


@numba.njit(cache=True, nogil=True)
def _q_rate_limited_delay(qs: Int64Array, bucket: Any, q: int, key: int, now: int) -> int:
    """Q5: ``When``: both limiters count the call; the longer wait."""
    n = qs[q, _FAIL, key]
    qs[q, _FAIL, key] = n + 1
    # Q4: the bucket (row 0 its tokens, row 1 its last instant)
    wait, tokens = _reserve(bucket[0, q], int(bucket[1, q]), now)
    bucket[1, q] = float(now)
    bucket[0, q] = tokens
    return int(max(_exponential_delay(n), wait))


@numba.njit(cache=True, nogil=True, inline=_A)
def _q_release(qs: Int64Array, fifo: Int64Array, qv: Int64Array, q: int,  # noqa: PLR0913, PLR0917
               nkeys: int,
               now: int) -> None:
    """Q2: add the keys due by ``now``, in the order their times were set."""
    if qv[4 + q] > now:
        return
    while True:
        best = -1
        later = _NEVER
        for key in range(nkeys):
            due = qs[q, _WDUE, key]
            if 0 <= due <= now:
                if best < 0 or qs[q, _WORD, key] < qs[q, _WORD, best]:
                    best = key
            elif due > now:
                later = min(later, due)
        if best < 0:
            qv[4 + q] = later
            return
        qs[q, _WDUE, best] = -1
        if not qs[q, _DIRTY, best]:  # Add
            qs[q, _DIRTY, best] = 1
            if not qs[q, _PROC, best]:
                fifo[q, qv[q]] = best
                qv[q] += 1


# --- the Deployment's status and conditions (C6) ------------------------------------------


@numba.njit(cache=True, nogil=True, inline=_A)
def _find_cond(dm: Int64Array, row: int, ctype: int) -> int:
    for i in range(dm[row, _NCOND]):
        if dm[row, _C0 + 5 * i + _CT] == ctype:
            return i
    return -1


@numba.njit(cache=True, nogil=True, inline=_A)
def _remove_cond(dm: Int64Array, row: int, ctype: int) -> None:
    n = dm[row, _NCOND]
    i = -1
    for j in range(n):
        if dm[row, _C0 + 5 * j + _CT] == ctype:
            i = j
    if i < 0:
        return
    for j in range(i, n - 1):
        for f in range(5):
            dm[row, _C0 + 5 * j + f] = dm[row, _C0 + 5 * (j + 1) + f]
    dm[row, _NCOND] = n - 1


@numba.njit(cache=True, nogil=True, inline=_A)
def _set_condition(dm: Int64Array, row: int, ctype: int, status: int, reason: int,  # noqa: PLR0913, PLR0917
                   lu: int, lt: int) -> None:
    """``SetDeploymentCondition``."""
    n = dm[row, _NCOND]
    i = -1
    for j in range(n):
        if dm[row, _C0 + 5 * j + _CT] == ctype:
            i = j
    if i >= 0:
        base = _C0 + 5 * i
        if dm[row, base + _CS] == status and dm[row, base + _CR] == reason:
            return
        if dm[row, base + _CS] == status:
            lt = dm[row, base + _CLT]
        for j in range(i, n - 1):  # the others keep their order; the new one goes last
            for f in range(5):
                dm[row, _C0 + 5 * j + f] = dm[row, _C0 + 5 * (j + 1) + f]
        n -= 1
    base = _C0 + 5 * n
    dm[row, base + _CT], dm[row, base + _CS], dm[row, base + _CR] = ctype, status, reason
    dm[row, base + _CLU], dm[row, base + _CLT] = lu, lt
    dm[row, _NCOND] = n + 1


@numba.njit(cache=True, nogil=True, inline=_A)
def _same_status(dm: Int64Array, a: int, b: int) -> bool:
    if dm[a, _NCOND] != dm[b, _NCOND]:
        return False
    for k in range(_OG, _C0 + 5 * dm[a, _NCOND]):  # noqa: SIM110 — numba compiles loops
        if dm[a, k] != dm[b, k]:
            return False
    return True


@numba.njit(cache=True, nogil=True, inline=_A)
def _copy_status(dm: Int64Array, src: int, dst: int) -> None:
    for k in range(_OG, _D_COLS):
        dm[dst, k] = dm[src, k]


# --- one cell --------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True, inline=_A)
def _resolve(sv: int, sp: int, uv: int, up: int, desired: int) -> tuple[int, int]:
    """(maxSurge, ``MaxUnavailable``) against ``desired``, of the budgets ``sv`` (a
    percentage where ``sp``) and ``uv`` (``up``)."""
    surge = _surge(sv, sp, uv, up, desired)
    if desired == 0:
        return surge, 0
    return surge, min(_unavailable(sv, sp, uv, up, desired), desired)


@numba.njit(cache=True, nogil=True, inline=_A)
def _update_status(dm: Int64Array, rv: int) -> bool:
    """``UpdateStatus`` of the sync's copy (its resourceVersion checked by the caller): the
    status, times stored as whole seconds, and the revision, if they changed (the new
    resourceVersion ``rv``); whether it wrote."""
    n = dm[_SYNC, _NCOND]
    if n == dm[_API, _NCOND] and dm[_SYNC, _DREV] == dm[_API, _DREV]:
        differ = 0  # (every field compared, the differences gathered: one branch)
        for k in range(_OG, _C0):
            differ |= dm[_SYNC, k] ^ dm[_API, k]
        for i in range(n):
            base = _C0 + 5 * i
            for f in (_CT, _CS, _CR):
                differ |= dm[_SYNC, base + f] ^ dm[_API, base + f]
            for f in (_CLU, _CLT):
                differ |= (dm[_SYNC, base + f] // _S * _S) ^ dm[_API, base + f]
        if differ == 0:
            return False
    _copy_status(dm, _SYNC, _API)
    for i in range(n):
        base = _C0 + 5 * i
        dm[_API, base + _CLU] = dm[_API, base + _CLU] // _S * _S
        dm[_API, base + _CLT] = dm[_API, base + _CLT] // _S * _S
    dm[_API, _DREV] = dm[_SYNC, _DREV]
    dm[_API, _RV] = rv
    return True


@numba.njit(cache=True, nogil=True, inline=_A)
def _scale_rs(rs: Int64Array, dm: Int64Array, row: Int64Array, k: int,  # noqa: PLR0913, PLR0917
              replicas: int, revision: int, desired: int, most: int) -> bool:
    """``Update`` of ReplicaSet ``k`` with this size, revision and both replica
    annotations: nothing when they are as stored; a new size bumps the generation and
    counts as a scale write (new or old as the Deployment's template says). Whether it
    wrote (its event is the caller's to send)."""
    before = rs[_REPL, k]
    if before == replicas and rs[_REV, k] == revision and rs[_DANN, k] == desired and \
            rs[_MANN, k] == most:
        return False
    rs[_REPL, k] = replicas
    rs[_REV, k] = revision
    rs[_DANN, k] = desired
    rs[_MANN, k] = most
    if replicas != before:
        rs[_GEN, k] += 1
        if dm[_API, _TMPL] == k + 1:
            row[deployment_rules.NEW_SCALE_WRITES] += 1
        else:
            row[deployment_rules.OLD_SCALE_WRITES] += 1
    return True


@numba.njit(cache=True, nogil=True, inline=_A)
def _complete(dm: Int64Array, st: int) -> bool:
    """``DeploymentComplete`` of status row ``st`` for the sync's Deployment."""
    r = dm[_SYNC, _DREPL]
    return bool(dm[st, _UPD] == r and dm[st, _STREPL] == r and dm[st, _STAVAIL] == r
                and dm[st, _OG] >= dm[_SYNC, _DGEN])


@numba.njit(cache=True, nogil=True, inline=_A)
def _calculate_status(dm: Int64Array, rs: Int64Array, listed: int, new: int,  # noqa: PLR0913, PLR0917
                      max_unavailable: int, now: int) -> None:
    """``calculateStatus`` (C6) into row ``_ST``, from the sync's view of the ReplicaSets
    listed (and the new one, ``new`` or -1) and the sync's copy."""
    _copy_status(dm, _SYNC, _ST)
    total = replicas = ready = available = 0
    for k in range(listed):
        if rs[_EXISTS, k]:
            total += rs[_VREPL, k]
            replicas += rs[_VSREPL, k]
            ready += rs[_VSREADY, k]
            available += rs[_VSAVAIL, k]
    dm[_ST, _OG] = dm[_SYNC, _DGEN]
    dm[_ST, _STREPL] = replicas
    dm[_ST, _UPD] = rs[_VSREPL, new] if new >= 0 else 0
    dm[_ST, _STREADY] = ready
    dm[_ST, _STAVAIL] = available
    dm[_ST, _UNAV] = max(0, total - available)
    if available >= dm[_SYNC, _DREPL] - max_unavailable:
        _set_condition(dm, _ST, _AVAILABLE_T, 1, _MIN_AVAILABLE, now, now)
    else:
        _set_condition(dm, _ST, _AVAILABLE_T, 0, _MIN_UNAVAILABLE, now, now)


@numba.njit(cache=True, nogil=True)
def _by_size(rs: Int64Array, a: int, b: int, newer: bool) -> bool:
    """``ReplicaSetsBySizeNewer`` (``newer``) or ``BySizeOlder``: ``Less(a, b)``."""
    if rs[_VREPL, a] == rs[_VREPL, b]:
        a_first = rs[_CREATED, a] < rs[_CREATED, b] or (
            rs[_CREATED, a] == rs[_CREATED, b] and rs[_NAME, a] < rs[_NAME, b])
        b_first = rs[_CREATED, b] < rs[_CREATED, a] or (
            rs[_CREATED, a] == rs[_CREATED, b] and rs[_NAME, b] < rs[_NAME, a])
        return bool(b_first if newer else a_first)
    return bool(rs[_VREPL, a] > rs[_VREPL, b])


@numba.njit(cache=True, nogil=True, inline=_A)
def _gone(pods: Int64Array, rs: Int64Array, uid: int) -> None:
    """Pod ``uid`` leaves the API: the counts of its ReplicaSet."""
    owner = pods[uid, _OWNER]
    pods[uid, _GONE] = 1
    rs[_NAPI, owner] -= 1
    if pods[uid, _READY] != _NOT:
        rs[_NLIVE, owner] -= 1
    if pods[uid, _DELETING]:
        rs[_NTERM, owner] -= 1
    if pods[uid, _COUNTED] == 1:
        rs[_NTAV, owner] -= 1
    pods[uid, _COUNTED] = 2


@numba.njit(cache=True, nogil=True, inline=_A)
def _sample(rs: Int64Array, dm: Int64Array, surge: int, unavailable: int,  # noqa: PLR0913, PLR0917
            row: Int64Array, t: int, n_rs: int) -> None:
    """The state columns of second ``t``'s trace row (the counts are kept in it), the
    ReplicaSets ``0 … n_rs - 1``; ``surge`` and ``unavailable`` resolved against the
    Deployment's spec.replicas."""
    new = dm[_API, _TMPL] - 1
    if new >= n_rs or not rs[_EXISTS, new]:
        new = -1
    spec = live = avail = tav = api = term = count = 0
    for k in range(n_rs):
        if rs[_EXISTS, k]:
            count += 1
            spec += rs[_REPL, k]
            live += rs[_NLIVE, k]
            avail += rs[_SAVAIL, k]
            tav += rs[_NTAV, k]
            api += rs[_NAPI, k]
            term += rs[_NTERM, k]
    r = deployment_rules
    desired = dm[_API, _DREPL]
    row[r.T] = t
    row[r.DESIRED] = desired
    n_spec = rs[_REPL, new] if new >= 0 else 0
    n_live = rs[_NLIVE, new] if new >= 0 else 0
    n_avail = rs[_SAVAIL, new] if new >= 0 else 0
    n_pods = rs[_NAPI, new] if new >= 0 else 0
    row[r.NEW_SPEC] = n_spec
    row[r.OLD_SPEC] = spec - n_spec
    row[r.NEW_LIVE] = n_live
    row[r.OLD_LIVE] = live - n_live
    row[r.NEW_AVAILABLE] = n_avail
    row[r.OLD_AVAILABLE] = avail - n_avail
    row[r.AVAILABLE] = tav
    row[r.NEW_TRUE_AVAILABLE] = rs[_NTAV, new] if new >= 0 else 0
    row[r.LIVE] = live
    row[r.API_PODS] = api
    row[r.TERMINATING] = term
    row[r.NONTERMINATING] = api - term
    row[r.NEW_PODS] = n_pods
    row[r.OLD_PODS] = api - n_pods
    row[r.RS_COUNT] = count
    row[r.D_UPDATED] = dm[_API, _UPD]
    row[r.D_AVAILABLE] = dm[_API, _STAVAIL]
    c = _find_cond(dm, _API, _PROGRESSING_T)
    row[r.STATUS_COMPLETE] = 1 if (c >= 0 and dm[_API, _C0 + 5 * c + _CS] == 1
                                   and dm[_API, _C0 + 5 * c + _CR] == _NEW_RS_AVAILABLE
                                   and dm[_API, _OG] >= dm[_API, _DGEN]) else 0
    row[r.MAX_SURGE_R] = surge
    row[r.MAX_UNAVAILABLE_R] = unavailable



@numba.njit(cache=True, nogil=True)
def _scale(rs: Int64Array, dm: Int64Array, row: Int64Array, items: Int64Array,  # noqa: PLR0912, PLR0913, PLR0915, PLR0917
           n_old: int, has_new: bool, new: int, new_rev: int, surge: int) -> int:
    """C5: ``scale`` (proportional) by the sync's view of the ReplicaSets (the old ones in
    ``items[:n_old, 2]`` by creation; the new one, ``new_rev`` its revision as the sync
    holds it). The ReplicaSets written go to ``items[:, 3]`` in order; their number, or
    -1 for a proportion over a max-replicas annotation of 0."""
    d_repl = dm[_SYNC, _DREPL]
    most = d_repl + surge
    n_w = 0
    # active: the old ones newest first, then the new one
    n_act = 0
    for j in range(n_old - 1, -1, -1):
        k = items[j, 2]
        if rs[_VREPL, k] > 0:
            items[n_act, 0] = k
            n_act += 1
    if has_new and rs[_VREPL, new] > 0:
        items[n_act, 0] = new
        n_act += 1
    if n_act <= 1:  # FindActiveOrLatest: the only active one, or the latest
        if n_act == 1:
            only = items[0, 0]
        elif has_new:
            only = new
        elif n_old > 0:
            only = items[n_old - 1, 2]
        else:
            return 0
        rev = new_rev if only == new else rs[_VREV, only]
        if rs[_VREPL, only] != d_repl and _scale_rs(rs, dm, row, only, d_repl, rev, d_repl,
                                                    most):
            items[0, 3] = only
            n_w = 1
        return n_w
    if has_new and rs[_VDANN, new] == d_repl and rs[_VREPL, new] == d_repl and \
            rs[_VSAVAIL, new] == d_repl:  # IsSaturated: the old ones to 0
        for j in range(n_old - 1, -1, -1):
            k = items[j, 2]
            if rs[_VREPL, k] > 0 and _scale_rs(rs, dm, row, k, 0, rs[_VREV, k], d_repl,
                                               most):
                items[n_w, 3] = k
                n_w += 1
        return n_w
    to_add = most if d_repl > 0 else 0
    for j in range(n_act):
        to_add -= rs[_VREPL, items[j, 0]]
    if to_add != 0:  # Go's sort (insertion, 11 at most): BySizeNewer up, BySizeOlder down
        for i in range(1, n_act):
            j = i
            while j > 0 and _by_size(rs, items[j, 0], items[j - 1, 0], to_add > 0):
                items[j, 0], items[j - 1, 0] = items[j - 1, 0], items[j, 0]
                j -= 1
    added = 0
    for j in range(n_act):
        k = items[j, 0]
        items[j, 1] = rs[_VREPL, k]
        if to_add != 0:
            ann = rs[_VMANN, k] if rs[_VMANN, k] != _NONE else dm[_SYNC, _STREPL]
            if ann == 0 and rs[_VREPL, k] != 0 and d_repl != 0 and to_add != added:
                return -1
            share = _proportion(rs[_VREPL, k], d_repl, surge, ann, to_add, added)
            items[j, 1] += share
            added += share
    for j in range(n_act):
        k = items[j, 0]
        size = items[j, 1]
        if j == 0 and to_add != 0:
            size = max(0, size + to_add - added)
        rev = new_rev if k == new else rs[_VREV, k]
        if (rs[_VREPL, k] != size or rs[_VDANN, k] != d_repl or rs[_VMANN, k] != most) \
                and _scale_rs(rs, dm, row, k, size, rev, d_repl, most):
            items[n_w, 3] = k
            n_w += 1
    return n_w


@numba.njit(cache=True, nogil=True, inline=_A)
def _reconcile_old(rs: Int64Array, dm: Int64Array, row: Int64Array,  # noqa: PLR0912, PLR0913, PLR0917
                   items: Int64Array, n_old: int, new: int, surge: int,
                   max_unavailable: int) -> int:
    """C4: ``reconcileOldReplicaSets`` over the sync's view of the ReplicaSets (the old
    ones in ``items[:n_old, 2]`` by creation). The ReplicaSets written go to
    ``items[:, 3]`` in order; their number."""
    d_repl = dm[_SYNC, _DREPL]
    most = d_repl + surge
    n_w = 0
    # the active old ones (by creation) and their sizes as the sync changes them
    n_act = 0
    for j in range(n_old):
        k = items[j, 2]
        if rs[_VREPL, k] > 0:
            items[n_act, 0] = k
            items[n_act, 1] = rs[_VREPL, k]
            n_act += 1
    if n_act == 0:
        return 0
    all_pods = rs[_VREPL, new]
    for j in range(n_old):
        all_pods += rs[_VREPL, items[j, 2]]
    down_most = _max_scaled_down(all_pods, d_repl, max_unavailable, rs[_VREPL, new],
                                 rs[_VSAVAIL, new])
    if down_most <= 0:
        return 0
    # cleanupUnhealthyReplicas: its error (an old one with more available pods than
    # spec.replicas) is swallowed: no scale-down in this sync
    cleaned = 0
    for j in range(n_act):
        if cleaned >= down_most:
            break
        k = items[j, 0]
        if items[j, 1] == 0 or items[j, 1] == rs[_VSAVAIL, k]:
            continue
        down = min(down_most - cleaned, items[j, 1] - rs[_VSAVAIL, k])
        if down < 0:
            return n_w
        if _scale_rs(rs, dm, row, k, items[j, 1] - down, rs[_VREV, k], d_repl, most):
            items[n_w, 3] = k
            n_w += 1
        items[j, 1] -= down
        cleaned += down
    # scaleDownOldReplicaSetsForRollingUpdate
    min_available = d_repl - max_unavailable
    available = rs[_VSAVAIL, new]
    for j in range(n_act):
        available += rs[_VSAVAIL, items[j, 0]]
    if available <= min_available:
        return n_w
    total, target = 0, available - min_available
    for j in range(n_act):
        if total >= target:
            break
        k = items[j, 0]
        if items[j, 1] == 0:
            continue
        down = min(items[j, 1], target - total)
        if _scale_rs(rs, dm, row, k, items[j, 1] - down, rs[_VREV, k], d_repl, most):
            items[n_w, 3] = k
            n_w += 1
        items[j, 1] -= down
        total += down
    return n_w



@numba.njit(cache=True, nogil=True)
def _next_event(t: int, duration: int, deaths_at: Int64Array, d_lo: int, d_hi: int,  # noqa: PLR0913, PLR0917
                scale_at: Int64Array, s_lo: int, s_hi: int) -> int:
    """The first second after ``t`` that opens an event's window (a death event or a
    change of desired, :meth:`reconsim.model.params.Cell.event_seconds`), or
    ``duration + 1``."""
    nxt = duration + 1
    for i in range(d_lo, d_hi):
        if t < deaths_at[i] < nxt:
            nxt = deaths_at[i]
    for i in range(s_lo, s_hi):
        if t < scale_at[i] < nxt:
            nxt = scale_at[i]
    return nxt


@_kernel(_nrt=False)
def _run_cell(  # noqa: PLR0911, PLR0912, PLR0913, PLR0915, PLR0917 — one flat loop
        sv: int, sp: int, uv: int, up: int, desired0: int, G: int, B: int, mrs: int,
        grace: int, cold: bool,
        duration: int, rollouts: Int64Array, r_lo: int, r_hi: int, scale_at: Int64Array,
        scale_desired: Int64Array, s_lo: int, s_hi: int, deaths_at: Int64Array,
        deaths_count: Int64Array, d_lo: int, d_hi: int, pods: Int64Array, rs: Int64Array,
        dm: Int64Array, heap: Int64Array, lanes: Int64Array, qs: Int64Array,
        fifo: Int64Array,
        bucket: Any, qv: Int64Array, avq: Int64Array, items: Int64Array, row: Int64Array,
        m: Int64Array,
        trace: Int64Array, t_base: int, traced: bool, need: Int64Array,
        shared: Int64Array, col: int, responses: Int64Array, r_base: int) -> int:
    """Play one cell; its metrics in ``m``, the figures every world has in column ``col``
    of ``shared`` and its responses from column ``r_base`` of ``responses``; its trace
    rows from ``t_base`` if ``traced``."""
    gdelay, bdelay, gracedelay = G * _S, B * _S, grace * _S
    pod_cap, lane_cap = pods.shape[0] - 1, heap.shape[0] // _N_LANES
    n_rs_max = r_hi - r_lo + 1
    # everything cleared
    n_pods = 0
    for k in range(n_rs_max):
        for c in range(_R_COLS):
            rs[c, k] = 0
        rs[_NAME, k] = _NAME_RANKS[k]
        rs[_DANN, k] = rs[_MANN, k] = _NONE
    for r in range(3):
        for c in range(_D_COLS):
            dm[r, c] = 0
    for q in range(2):
        for r in range(_Q_ROWS):
            for k in range(n_rs_max):
                qs[q, r, k] = 0
        for k in range(n_rs_max):
            qs[q, _WDUE, k] = -1
        bucket[0, q] = 100.0
        bucket[1, q] = 0.0
    for k in range(4):
        qv[k] = 0
    qv[4] = qv[5] = _NEVER
    for k in range(_N_LANES):
        lanes[0, k] = lanes[1, k] = lanes[4, k] = 0
        lanes[3, k] = _NEVER
    lanes[2, 0] = 0
    cq_head = cq_tail = 0  # the pods turned ready in the cache, in order (avq's column 1)
    order = 0
    epoch = 0
    rv = 0
    av_head = av_tail = 0
    for k in range(_R.N_TRACE):
        row[k] = 0
    _start_metrics(m)
    now = 0
    # The figures every world has, fed as rolling.metrics_of feeds copies.Account from the
    # trace: each second's live count (ready pods in the API, terminating ones included)
    # against the desired of the cell's scale schedule, an event's window opened at its
    # second (its change of desired first).
    first_death = duration + 1
    deaths_total = 0
    for i in range(d_lo, d_hi):
        deaths_total += deaths_count[i]
        first_death = min(first_death, deaths_at[i])
    acc = start_account(first_death)
    acc_desired = desired0
    next_event = _next_event(-1, duration, deaths_at, d_lo, d_hi, scale_at, s_lo, s_hi)
    rounds = 0
    # the fenceposts (maxSurge, MaxUnavailable) of the last spec.replicas resolved
    fp_desired = desired0
    fp_surge, fp_unav = _resolve(sv, sp, uv, up, desired0)

    if not cold:  # D6: the settled objects, listed by the fresh caches at t = 0
        surge0 = _resolve(sv, sp, uv, up, desired0)[0]
        if desired0 > pod_cap:
            need[0] = desired0 + 1
            return _ROOM
        rs[_EXISTS, 0] = 1
        rs[_CREATED, 0] = PRE_HISTORY
        rs[_GEN, 0] = 1
        rs[_REPL, 0] = desired0
        rs[_REV, 0] = 1
        rs[_DANN, 0] = desired0
        rs[_MANN, 0] = desired0 + surge0
        rs[_SREPL, 0] = rs[_SREADY, 0] = rs[_SAVAIL, 0] = desired0
        rs[_SOG, 0] = 1
        settled = (PRE_HISTORY + 2 * mrs) * _S
        dm[_API, _RV] = 3
        dm[_API, _DGEN] = 1
        dm[_API, _DREPL] = desired0
        dm[_API, _TMPL] = 1
        dm[_API, _DREV] = 1
        dm[_API, _OG] = 1
        dm[_API, _STREPL] = dm[_API, _UPD] = dm[_API, _STREADY] = dm[_API, _STAVAIL] = desired0
        _set_condition(dm, _API, _AVAILABLE_T, 1, _MIN_AVAILABLE, settled, settled)
        _set_condition(dm, _API, _PROGRESSING_T, 1, _NEW_RS_AVAILABLE, settled,
                       PRE_HISTORY * _S)
        rv = 3 + desired0
        for k in range(1, desired0 + 1):
            pods[k, _OWNER] = 0
            pods[k, _BORN] = PRE_HISTORY
            pods[k, _READY] = PRE_HISTORY
            pods[k, _DELETING] = pods[k, _GONE] = pods[k, _MARK] = pods[k, _COUNTED] = 0
            pods[k, _C_IN] = 1
            pods[k, _C_READY] = PRE_HISTORY
            pods[k, _C_DEL] = pods[k, _C_AV] = 0
            avq[av_tail, 0] = k
            av_tail += 1
            avq[cq_tail, 1] = k
            cq_tail += 1
        n_pods = desired0
        if desired0 > 0:
            rs[_CHEAD, 0], rs[_CTAIL, 0] = 1, desired0
        rs[_NAPI, 0] = rs[_NLIVE, 0] = rs[_CLIST, 0] = rs[_CREADY, 0] = desired0
        _q_add(qs, fifo, qv, _DEP_Q, 0)  # the Deployment, the ReplicaSet, its pods
        _q_add(qs, fifo, qv, _DEP_Q, 0)
        _q_add(qs, fifo, qv, _RS_Q, 0)
    else:
        order += 1
        _push(heap, lanes, _SCRIPT, 0, _USER, order, _CREATE, desired0, 0, 0)
    if (r_hi - r_lo) + (s_hi - s_lo) + (d_hi - d_lo) + 1 > lane_cap:
        need[1] = (r_hi - r_lo) + (s_hi - s_lo) + (d_hi - d_lo) + 1
        return _ROOM
    for i in range(r_lo, r_hi):
        order += 1
        _push(heap, lanes, _SCRIPT, rollouts[i] * _S, _USER, order, _TEMPLATE,
                            i - r_lo + 2, 0, 0)
    for i in range(s_lo, s_hi):
        order += 1
        _push(heap, lanes, _SCRIPT, scale_at[i] * _S, _USER, order, _SCALE,
                            scale_desired[i], 0, 0)
    for i in range(d_lo, d_hi):
        order += 1
        _push(heap, lanes, _SCRIPT, deaths_at[i] * _S, _DEATHS, order,
                            deaths_count[i], 0, 0, 0)
    after = rollouts[r_lo]
    last_change = rollouts[r_hi - 1]

    t = 0
    while t <= duration:
        end = (t + 1) * _S
        while True:
            # the next instant: now, while a queue holds a key
            if qv[0] == 0 and qv[1] == 0:
                nxt = min(qv[4], qv[5])  # the earliest entry due, or a delayed add
                for lane in range(_N_LANES):
                    nxt = min(nxt, lanes[3, lane])
                if nxt >= end:
                    break
                now = nxt
            # one instant (D2): what is due, then the syncs, each followed by what it caused
            turn = _DEP_Q
            first_pass = True
            while True:
                if not first_pass:
                    if qv[turn] > 0:
                        ran = turn
                    elif qv[1 - turn] > 0:
                        ran = 1 - turn
                    else:
                        break
                    if ran == _DEP_Q:
                        # ---- the Deployment controller's sync (C1-C9) ----
                        key = _q_get(qs, fifo, qv, _DEP_Q)
                        row[_R.DEPLOY_SYNCS] += 1
                        # the sync's copy of the Deployment; its view of the ReplicaSets
                        for c in range(_D_COLS):
                            dm[_SYNC, c] = dm[_API, c]
                        n_rs = 0
                        for k in range(n_rs_max):
                            if rs[_EXISTS, k]:
                                n_rs = k + 1
                                rs[_VREPL, k] = rs[_REPL, k]
                                rs[_VDANN, k] = rs[_DANN, k]
                                rs[_VMANN, k] = rs[_MANN, k]
                                rs[_VREV, k] = rs[_REV, k]
                                rs[_VSREPL, k] = rs[_SREPL, k]
                                rs[_VSREADY, k] = rs[_SREADY, k]
                                rs[_VSAVAIL, k] = rs[_SAVAIL, k]
                        listed = n_rs  # the ReplicaSets the sync listed (0 … listed - 1)
                        d_repl = dm[_SYNC, _DREPL]
                        if d_repl != fp_desired:  # the fenceposts of a new count
                            fp_desired = d_repl
                            fp_surge, fp_unav = _resolve(sv, sp, uv, up, d_repl)
                        surge, max_unav = fp_surge, fp_unav
                        most = d_repl + surge
                        new = dm[_SYNC, _TMPL] - 1  # its ReplicaSet, if listed
                        # the old ones in creation order (creation second, then name)
                        n_old = 0
                        for k in range(listed):
                            if k != new and rs[_EXISTS, k]:
                                j = n_old
                                while j > 0 and (
                                        rs[_CREATED, items[j - 1, 2]] > rs[_CREATED, k]
                                        or (rs[_CREATED, items[j - 1, 2]] == rs[_CREATED, k]
                                            and rs[_NAME, items[j - 1, 2]] > rs[_NAME, k])):
                                    items[j, 2] = items[j - 1, 2]
                                    j -= 1
                                items[j, 2] = k
                                n_old += 1
                        # (items row 2 holds the old ones; rows 0, 1 are free here)
                        new_revision = 1
                        for j in range(n_old):
                            new_revision = max(new_revision, rs[_VREV, items[j, 2]] + 1)
                        has_new = new < listed and rs[_EXISTS, new] == 1
                        # C2, run twice (isScalingEvent's lookup, then the sync's): the
                        # sync's list keeps the ReplicaSet as listed (its revision), the
                        # lookup returns it as stored (new_rev)
                        new_rev = rs[_VREV, new] if has_new else new_revision
                        scaling = False
                        for attempt in range(2):
                            if has_new:
                                if rs[_VREV, new] < new_revision:
                                    # SetNewReplicaSetAnnotations: an Update (once)
                                    if rs[_REV, new] != new_revision:
                                        rs[_REV, new] = new_revision
                                        order += 1
                                        _push(heap, lanes, _NOW_LANE, now, _DELIVER,
                                                            order, _RS_CACHE, new, 0, 0)
                                    new_rev = new_revision
                                else:
                                    needs_update = False
                                    if dm[_SYNC, _DREV] != rs[_VREV, new]:
                                        dm[_SYNC, _DREV] = rs[_VREV, new]
                                        needs_update = True
                                    if _find_cond(dm, _SYNC, _PROGRESSING_T) < 0:
                                        _set_condition(dm, _SYNC, _PROGRESSING_T, 1,
                                                       _FOUND_NEW_RS, now, now)
                                        needs_update = True
                                    if needs_update:
                                        if dm[_SYNC, _RV] != dm[_API, _RV]:
                                            return _CONFLICT
                                        if _update_status(dm, rv + 1):
                                            rv += 1
                                            order += 1
                                            _push(heap, lanes, _NOW_LANE, now, _DELIVER,
                                                                order, _DEP_CACHE, 0, 0, 0)
                            if attempt == 0:
                                # isScalingEvent: an active one whose desired annotation
                                # is not spec.replicas
                                for k in range(listed):
                                    if rs[_EXISTS, k] and rs[_VREPL, k] > 0 and \
                                            rs[_VDANN, k] != _NONE and rs[_VDANN, k] != d_repl:
                                        scaling = True
                            if not has_new:
                                break
                        if scaling:
                            # ---- C5: sync (scale), then syncDeploymentStatus ----
                            n_w = _scale(rs, dm, row, items, n_old, has_new, new, new_rev,
                                         surge)
                            if n_w < 0:
                                return _ZERO_ANNOTATION
                            for j in range(n_w):  # the writes' events, in their order
                                order += 1
                                _push(heap, lanes, _NOW_LANE, now, _DELIVER, order,
                                                    _RS_CACHE, items[j, 3], 0, 0)
                            # syncDeploymentStatus
                            _calculate_status(dm, rs, listed, new if has_new else -1,
                                              max_unav, now)
                            if not _same_status(dm, _ST, _SYNC):
                                _copy_status(dm, _ST, _SYNC)
                                status_write = True
                            else:
                                status_write = False
                        else:
                            # ---- rolloutRolling: C2 (create), C3, C4, C7 ----
                            if not has_new:
                                # the new ReplicaSet, created: NewRSNewReplicas
                                current = 0
                                for j in range(n_old):
                                    current += rs[_VREPL, items[j, 2]]
                                surge_up = surge  # (maxSurge: the fencepost's surge)
                                size = _new_rs_new_replicas(d_repl, surge_up, current, 0)
                                k = new
                                rs[_EXISTS, k] = 1
                                rs[_CREATED, k] = now // _S
                                rs[_GEN, k] = 1
                                rs[_REPL, k] = size
                                rs[_REV, k] = new_revision
                                rs[_DANN, k] = d_repl
                                rs[_MANN, k] = most
                                rs[_SREPL, k] = rs[_SREADY, k] = rs[_SAVAIL, k] = 0
                                rs[_SOG, k] = 0
                                rs[_VREPL, k] = size
                                rs[_VDANN, k] = d_repl
                                rs[_VMANN, k] = most
                                rs[_VREV, k] = new_revision
                                rs[_VSREPL, k] = rs[_VSREADY, k] = rs[_VSAVAIL, k] = 0
                                if size != 0:
                                    if dm[_API, _TMPL] == k + 1:
                                        row[_R.NEW_SCALE_WRITES] += 1
                                    else:
                                        row[_R.OLD_SCALE_WRITES] += 1
                                order += 1
                                _push(heap, lanes, _NOW_LANE, now, _DELIVER, order,
                                                    _RS_CACHE, k, 0, 0)
                                has_new = True
                                listed = max(listed, k + 1)
                                dm[_SYNC, _DREV] = new_revision
                                _set_condition(dm, _SYNC, _PROGRESSING_T, 1, _NEW_RS_CREATED,
                                               now, now)
                                # UpdateStatus, the reply discarded
                                if dm[_SYNC, _RV] != dm[_API, _RV]:
                                    return _CONFLICT
                                if _update_status(dm, rv + 1):
                                    rv += 1
                                    order += 1
                                    _push(heap, lanes, _NOW_LANE, now, _DELIVER, order,
                                          _DEP_CACHE, 0, 0, 0)
                            # C3: reconcileNewReplicaSet
                            scaled_up = False
                            if rs[_VREPL, new] != d_repl:
                                if rs[_VREPL, new] > d_repl:
                                    target = d_repl
                                else:
                                    total = rs[_VREPL, new]
                                    for j in range(n_old):
                                        total += rs[_VREPL, items[j, 2]]
                                    target = _new_rs_new_replicas(
                                        d_repl, surge, total,
                                        rs[_VREPL, new])
                                if rs[_VREPL, new] != target:
                                    rev = new_rev
                                    if _scale_rs(rs, dm, row, new, target, rev, d_repl, most):
                                        order += 1
                                        _push(heap, lanes, _NOW_LANE, now, _DELIVER, order,
                                                            _RS_CACHE, new, 0, 0)
                                    scaled_up = True
                            if not scaled_up:
                                # C4: reconcileOldReplicaSets
                                n_w = _reconcile_old(rs, dm, row, items, n_old, new, surge,
                                                     max_unav)
                                for j in range(n_w):  # the writes' events, in their order
                                    order += 1
                                    _push(heap, lanes, _NOW_LANE, now, _DELIVER, order,
                                                        _RS_CACHE, items[j, 3], 0, 0)
                            # C7: syncRolloutStatus (the sync's view of the ReplicaSets)
                            _calculate_status(dm, rs, listed, new, max_unav, now)
                            cur = _find_cond(dm, _SYNC, _PROGRESSING_T)
                            done = dm[_ST, _STREPL] == dm[_ST, _UPD] and cur >= 0 and \
                                dm[_SYNC, _C0 + 5 * cur + _CR] == _NEW_RS_AVAILABLE
                            if not done:
                                if _complete(dm, _ST):
                                    _set_condition(dm, _ST, _PROGRESSING_T, 1,
                                                   _NEW_RS_AVAILABLE, now, now)
                                elif (dm[_ST, _UPD] > dm[_SYNC, _UPD]
                                      or dm[_ST, _STREPL] - dm[_ST, _UPD]
                                      < dm[_SYNC, _STREPL] - dm[_SYNC, _UPD]
                                      or dm[_ST, _STREADY] > dm[_SYNC, _STREADY]
                                      or dm[_ST, _STAVAIL] > dm[_SYNC, _STAVAIL]):
                                    lt = now
                                    if cur >= 0:
                                        if dm[_SYNC, _C0 + 5 * cur + _CS] == 1:
                                            lt = dm[_SYNC, _C0 + 5 * cur + _CLT]
                                        _remove_cond(dm, _ST, _PROGRESSING_T)
                                    _set_condition(dm, _ST, _PROGRESSING_T, 1, _RS_UPDATED,
                                                   now, lt)
                                else:
                                    c = _find_cond(dm, _ST, _PROGRESSING_T)
                                    timed_out = False
                                    if c >= 0:
                                        reason = dm[_ST, _C0 + 5 * c + _CR]
                                        if reason == _TIMED_OUT:
                                            timed_out = True
                                        elif reason != _NEW_RS_AVAILABLE:
                                            timed_out = dm[_ST, _C0 + 5 * c + _CLU] + \
                                                PROGRESS_DEADLINE * _S < now
                                    if timed_out:
                                        _set_condition(dm, _ST, _PROGRESSING_T, 0, _TIMED_OUT,
                                                       now, now)
                            if _same_status(dm, _ST, _SYNC):
                                status_write = False
                                # C8: requeueStuckDeployment
                                if cur >= 0 and not _complete(dm, _ST) and \
                                        dm[_SYNC, _C0 + 5 * cur + _CR] != _TIMED_OUT:
                                    wait = dm[_SYNC, _C0 + 5 * cur + _CLU] + \
                                        PROGRESS_DEADLINE * _S - now
                                    if wait < _S:
                                        _q_add_after(qs, fifo, qv, _DEP_Q, 0,
                                                     _q_rate_limited_delay(qs, bucket, _DEP_Q,
                                                                           0, now), now)
                                    else:
                                        _q_add_after(qs, fifo, qv, _DEP_Q, 0,
                                                     wait + _S, now)
                            else:
                                _copy_status(dm, _ST, _SYNC)
                                status_write = True
                        conflict = False
                        if status_write:
                            if dm[_SYNC, _RV] != dm[_API, _RV]:
                                conflict = True
                            elif _update_status(dm, rv + 1):
                                rv += 1
                                order += 1
                                _push(heap, lanes, _NOW_LANE, now, _DELIVER, order,
                                                    _DEP_CACHE, 0, 0, 0)
                        # C9: handleErr
                        if conflict:
                            if qs[_DEP_Q, _FAIL, 0] < MAX_RETRIES:
                                _q_add_after(qs, fifo, qv, _DEP_Q, 0,
                                             _q_rate_limited_delay(qs, bucket, _DEP_Q, 0, now),
                                             now)
                            else:
                                qs[_DEP_Q, _FAIL, 0] = 0
                        else:
                            qs[_DEP_Q, _FAIL, 0] = 0
                        _q_done(qs, fifo, qv, _DEP_Q, key)
                    else:
                        # ---- the ReplicaSet controller's sync (R1-R4) ----
                        key = _q_get(qs, fifo, qv, _RS_Q)
                        row[_R.RS_SYNCS] += 1
                        satisfied = rs[_EXP, key] == 0 or (
                            rs[_EADD, key] <= 0 and rs[_EDEL, key] <= 0) or (
                            now - rs[_EAT, key] > EXPECTATIONS_TIMEOUT)
                        # the pods ready in the cache since minReadySeconds before now
                        # are counted available (they turned ready in this order)
                        while cq_head < cq_tail:
                            uid = avq[cq_head, 1]
                            if mrs > 0 and (pods[uid, _C_READY] + mrs) * _S >= now:
                                break
                            cq_head += 1
                            if pods[uid, _C_IN] == 1 and pods[uid, _C_DEL] == 0 and \
                                    pods[uid, _C_READY] != _NOT:
                                pods[uid, _C_AV] = 1
                                rs[_CAVAIL, pods[uid, _OWNER]] += 1
                        n_list = rs[_CLIST, key]
                        n_ready = rs[_CREADY, key]
                        n_avail = rs[_CAVAIL, key]
                        if satisfied:
                            diff = n_list - rs[_REPL, key]
                            if diff < 0:
                                n = min(-diff, BURST_REPLICAS)
                                if n_pods + n > pod_cap:
                                    need[0] = n_pods + n + 1
                                    return _ROOM
                                rs[_EXP, key] = 1
                                rs[_EADD, key] = n
                                rs[_EDEL, key] = 0
                                rs[_EAT, key] = now
                                for _ in range(n):
                                    n_pods += 1
                                    uid = n_pods
                                    pods[uid, _OWNER] = key
                                    pods[uid, _BORN] = now // _S
                                    pods[uid, _READY] = _NOT
                                    pods[uid, _DELETING] = pods[uid, _GONE] = 0
                                    pods[uid, _C_IN] = pods[uid, _C_DEL] = 0
                                    pods[uid, _C_READY] = _NOT
                                    pods[uid, _MARK] = pods[uid, _COUNTED] = 0
                                    pods[uid, _C_AV] = 0
                                    rs[_NAPI, key] += 1
                                    row[_R.CREATE_COMMANDS] += 1
                                    row[_R.CREATED] += 1
                                    order += 1
                                    _push(heap, lanes, _POD_LANE, now + gdelay, _DELIVER,
                                                        order, _POD_CACHE, uid, _ADDED,
                                                        _NOT * 2)
                                    order += 1
                                    _push(heap, lanes, _READY_LANE, now + bdelay, _POD,
                                                        order, uid, _TO_READY, 0, 0)
                            elif diff > 0:
                                k_del = min(diff, BURST_REPLICAS)
                                # the pods listed (the cache's, not deleting), in its
                                # order: uid order, swept between the bounds; the first
                                # found is the new lower bound
                                n = 0
                                for uid in range(rs[_CHEAD, key], rs[_CTAIL, key] + 1):
                                    if pods[uid, _OWNER] == key and pods[uid, _C_IN] == 1 \
                                            and pods[uid, _C_DEL] == 0:
                                        items[n, 0] = uid
                                        items[n, 1] = pods[uid, _BORN]
                                        items[n, 2] = pods[uid, _C_READY]
                                        n += 1
                                        if n == n_list:
                                            break
                                if n > 0:
                                    rs[_CHEAD, key] = items[0, 0]
                                if k_del < n_list:
                                    # their ranks (pods made together share their
                                    # seconds: a rank computed once for a run of them)
                                    c_sec = r_sec = _NEVER
                                    c_rank = r_rank = 0
                                    for i in range(n_list):
                                        if items[i, 1] != c_sec:
                                            c_sec = items[i, 1]
                                            c_rank = _age_rank(c_sec, now)
                                        if items[i, 2] != r_sec:
                                            r_sec = items[i, 2]
                                            r_rank = _age_rank(r_sec, now)
                                        items[i, 3] = c_rank
                                        items[i, 4] = r_rank
                                    _sort_pods(items, n_list, now, 0)
                                    # the targets in name order (all of them are in it)
                                    for i in range(1, k_del):
                                        j = i
                                        while j > 0 and items[j, 0] < items[j - 1, 0]:
                                            items[j, 0], items[j - 1, 0] = items[j - 1, 0], \
                                                items[j, 0]
                                            j -= 1
                                epoch += 1
                                rs[_EXP, key] = 1
                                rs[_EADD, key] = 0
                                rs[_EDEL, key] = k_del
                                rs[_EAT, key] = now
                                rs[_EEPOCH, key] = epoch
                                for i in range(k_del):
                                    uid = items[i, 0]
                                    pods[uid, _MARK] = epoch
                                    row[_R.DELETE_COMMANDS] += 1
                                    if pods[uid, _GONE]:  # NotFound: observed at once
                                        pods[uid, _MARK] = 0
                                        rs[_EDEL, key] -= 1
                                        continue
                                    if not pods[uid, _DELETING]:
                                        row[_R.DELETED] += 1
                                        pods[uid, _DELETING] = 1
                                        rs[_NTERM, key] += 1
                                        if pods[uid, _COUNTED] == 1:
                                            rs[_NTAV, key] -= 1
                                        pods[uid, _COUNTED] = 2
                                        view = 2 * pods[uid, _READY] + 1  # deleting
                                        order += 1
                                        if grace == 0:
                                            _gone(pods, rs, uid)
                                            _push(heap, lanes, _POD_LANE, now + gdelay, _DELIVER,
                                                  order, _POD_CACHE, uid, _DELETED, view)
                                        else:
                                            _push(heap, lanes, _POD_LANE, now + gdelay, _DELIVER,
                                                  order, _POD_CACHE, uid, _UPDATED, view)
                                            order += 1
                                            _push(heap, lanes, _LEAVE_LANE, now + gracedelay, _POD,
                                                  order, uid, _TO_LEAVE, 0, 0)
                        # R3: the status, from the pods listed before
                        if n_list != rs[_SREPL, key] or n_ready != rs[_SREADY, key] or \
                                n_avail != rs[_SAVAIL, key] or rs[_GEN, key] != rs[_SOG, key]:
                            rs[_SREPL, key] = n_list
                            rs[_SREADY, key] = n_ready
                            rs[_SAVAIL, key] = n_avail
                            rs[_SOG, key] = rs[_GEN, key]
                            order += 1
                            _push(heap, lanes, _NOW_LANE, now, _DELIVER, order,
                                                _RS_CACHE, key, 0, 0)
                        # R4
                        if mrs > 0 and rs[_SREADY, key] == rs[_REPL, key] and \
                                rs[_SAVAIL, key] != rs[_REPL, key]:
                            _q_add_after(qs, fifo, qv, _RS_Q, key, mrs * _S, now)
                        qs[_RS_Q, _FAIL, key] = 0
                        _q_done(qs, fifo, qv, _RS_Q, key)
                    turn = 1 - ran
                first_pass = False
                # run_due: everything due now, in order; then the delayed adds
                while True:
                    if lanes[2, 0]:  # a lane had no room: more, and the cell again
                        need[1] = 2 * lane_cap
                        return _ROOM
                    # the earliest entry (nothing is due before now): taken off its lane
                    best, k2 = -1, 0
                    for lane in range(_N_LANES):
                        if lanes[3, lane] == now and (best < 0 or lanes[4, lane] < k2):
                            best, k2 = lane, lanes[4, lane]
                    if best < 0:
                        break
                    first = best * lane_cap + (lanes[0, best] & (lane_cap - 1))
                    head = lanes[0, best] + 1
                    lanes[0, best] = head
                    if head < lanes[1, best]:  # its lane's next entry is the lane's first
                        at = best * lane_cap + (head & (lane_cap - 1))
                        lanes[3, best], lanes[4, best] = heap[at, _K1], heap[at, _K2]
                    else:
                        lanes[3, best] = _NEVER
                    kind = heap[first, _K2] >> _ORDER_BITS
                    pa, pb, pc = heap[first, _PA], heap[first, _PB], heap[first, _PC]
                    snap_ready = heap[first, _PD]
                    if kind == _POD:
                        uid = pa
                        if pods[uid, _GONE]:
                            continue
                        if pb == _TO_READY:
                            sec = now // _S
                            pods[uid, _READY] = sec
                            owner = pods[uid, _OWNER]
                            rs[_NLIVE, owner] += 1
                            if not pods[uid, _DELETING]:
                                avq[av_tail, 0] = uid
                                av_tail += 1
                            order += 1
                            _push(heap, lanes, _POD_LANE, now + gdelay, _DELIVER, order,
                                                _POD_CACHE, uid, _UPDATED,
                                                2 * sec + pods[uid, _DELETING])
                        else:
                            _gone(pods, rs, uid)
                            order += 1
                            _push(heap, lanes, _POD_LANE, now + gdelay, _DELIVER, order,
                                                _POD_CACHE, uid, _DELETED,
                                                2 * pods[uid, _READY] + pods[uid, _DELETING])
                    elif kind == _DEATHS:
                        left = pa
                        for uid in range(1, n_pods + 1):
                            if left == 0:
                                break
                            if not pods[uid, _GONE] and pods[uid, _READY] != _NOT:
                                left -= 1
                                row[_R.DEATHS] += 1
                                _gone(pods, rs, uid)
                                order += 1
                                _push(heap, lanes, _POD_LANE, now + gdelay, _DELIVER, order,
                                      _POD_CACHE, uid, _DELETED,
                                      2 * pods[uid, _READY] + pods[uid, _DELETING])
                    elif kind == _USER:
                        rv += 1
                        if pa == _CREATE:
                            dm[_API, _RV] = rv
                            dm[_API, _DGEN] = 1
                            dm[_API, _DREPL] = pb
                            dm[_API, _TMPL] = 1
                            dm[_API, _DREV] = _NONE
                        else:
                            dm[_API, _TMPL if pa == _TEMPLATE else _DREPL] = pb
                            dm[_API, _RV] = rv
                            dm[_API, _DGEN] += 1
                        _q_add(qs, fifo, qv, _DEP_Q, 0)  # its event, delivered at once
                    elif pa == _DEP_CACHE:  # a delivery
                        _q_add(qs, fifo, qv, _DEP_Q, 0)
                    elif pa == _RS_CACHE:
                        _q_add(qs, fifo, qv, _DEP_Q, 0)
                        _q_add(qs, fifo, qv, _RS_Q, pb)
                    else:  # a pod's
                        uid, ev = pb, pc
                        was_ready = pods[uid, _C_IN] == 1 and pods[uid, _C_READY] != _NOT
                        was_listed = pods[uid, _C_IN] == 1 and pods[uid, _C_DEL] == 0
                        was_counted = was_listed and pods[uid, _C_READY] != _NOT
                        deleting = snap_ready & 1
                        ready_s = _NOT if ev == _ADDED else snap_ready >> 1
                        owner = pods[uid, _OWNER]
                        if ev == _DELETED:
                            pods[uid, _C_IN] = 0
                        else:
                            if not pods[uid, _C_IN]:
                                if rs[_CHEAD, owner] == 0 or uid < rs[_CHEAD, owner]:
                                    rs[_CHEAD, owner] = uid
                                rs[_CTAIL, owner] = max(rs[_CTAIL, owner], uid)
                            pods[uid, _C_IN] = 1
                            pods[uid, _C_READY] = ready_s
                            pods[uid, _C_DEL] = deleting
                        listed = pods[uid, _C_IN] == 1 and pods[uid, _C_DEL] == 0
                        counted = listed and pods[uid, _C_READY] != _NOT
                        rs[_CLIST, owner] += int(listed) - int(was_listed)
                        rs[_CREADY, owner] += int(counted) - int(was_counted)
                        if counted and not was_counted:
                            avq[cq_tail, 1] = uid
                            cq_tail += 1
                        elif was_counted and not counted and pods[uid, _C_AV]:
                            pods[uid, _C_AV] = 0
                            rs[_CAVAIL, owner] -= 1
                        if ev == _DELETED or deleting:
                            if rs[_EXP, owner] and pods[uid, _MARK] != 0 and \
                                    pods[uid, _MARK] == rs[_EEPOCH, owner]:
                                pods[uid, _MARK] = 0
                                rs[_EDEL, owner] -= 1
                            _q_add(qs, fifo, qv, _RS_Q, owner)
                        elif ev == _ADDED:
                            if rs[_EXP, owner]:
                                rs[_EADD, owner] -= 1
                            _q_add(qs, fifo, qv, _RS_Q, owner)
                        else:
                            _q_add(qs, fifo, qv, _RS_Q, owner)
                            if not was_ready and ready_s != _NOT and mrs > 0:
                                _q_add_after(qs, fifo, qv, _RS_Q, owner,
                                             (mrs + 1) * _S, now)
                for q in range(2):
                    if qv[4 + q] <= now:
                        _q_release(qs, fifo, qv, q, n_rs_max if q == _RS_Q else 1, now)
        # ---- the second's row (sampled after its last instant) ----
        while av_head < av_tail:
            uid = avq[av_head, 0]
            if pods[uid, _READY] + mrs > t:
                break
            av_head += 1
            if pods[uid, _COUNTED] == 0 and not pods[uid, _GONE] and \
                    not pods[uid, _DELETING]:
                pods[uid, _COUNTED] = 1
                rs[_NTAV, pods[uid, _OWNER]] += 1
        if dm[_API, _DREPL] != fp_desired:
            fp_desired = dm[_API, _DREPL]
            fp_surge, fp_unav = _resolve(sv, sp, uv, up, fp_desired)
        _sample(rs, dm, fp_surge, fp_unav, row, t, n_rs_max)
        _add_seconds(m, row, 1, after, last_change)
        if t == next_event:
            last = -1
            for i in range(s_lo, s_hi):
                if scale_at[i] == t:
                    last = i
            if last >= 0:  # (the schedule's last change of the second, as a dict keeps it)
                acc = change_desired(acc, acc_desired, scale_desired[last])
                acc_desired = scale_desired[last]
            acc = begin_event(acc, t, responses, r_base)
            next_event = _next_event(t, duration, deaths_at, d_lo, d_hi, scale_at, s_lo,
                                     s_hi)
        acc = account(acc, t, t + 1, row[_R.LIVE], acc_desired)
        if row[_R.RS_SYNCS] > 0 or row[_R.DEPLOY_SYNCS] > 0:
            rounds += 1
        if traced:
            for c in range(_R.N_TRACE):
                trace[t_base + t, c] = row[c]
        for c in (_R.RS_SYNCS, _R.DEPLOY_SYNCS, _R.CREATE_COMMANDS, _R.CREATED,
                  _R.DELETE_COMMANDS, _R.DELETED, _R.DEATHS, _R.NEW_SCALE_WRITES,
                  _R.OLD_SCALE_WRITES):
            row[c] = 0
        # The seconds up to the next with something due (an instant, or a pod becoming
        # truly available) repeat this row, with no counts: folded at once.
        upto = duration + 1
        soonest = min(qv[4], qv[5])
        for lane in range(_N_LANES):
            soonest = min(soonest, lanes[3, lane])
        upto = min(upto, soonest // _S)
        if av_head < av_tail:
            upto = min(upto, pods[avq[av_head, 0], _READY] + mrs)
        if upto > t + 1:
            row[_R.T] = t + 1
            _add_seconds(m, row, upto - t - 1, after, last_change)
            # (no event's second among them: each is an entry of the script, due)
            acc = account(acc, t + 1, upto, row[_R.LIVE], acc_desired)
            if traced:
                for tt in range(t + 1, upto):
                    row[_R.T] = tt
                    for c in range(_R.N_TRACE):
                        trace[t_base + tt, c] = row[c]
            row[_R.T] = upto - 1
            t = upto - 1
        t += 1
    surge0, unavailable0 = _resolve(sv, sp, uv, up, desired0)
    _end_metrics(m, row, surge0, unavailable0)
    end_events(acc, duration, responses, r_base)
    write_metrics(shared, col, (rounds, m[_R.M_CREATED], m[_R.M_DELETE_COMMANDS],
                                m[_R.M_DELETED], 0, deaths_total, m[_R.M_CREATE_COMMANDS], 0),
                  acc, duration)
    return _DONE


# --- a block of cells, the batch ------------------------------------------------------


@intrinsic
def _pointer(typingctx: Any, address: Any) -> Any:
    """The machine address ``address`` as a pointer."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.inttoptr(args[0], llvm_ir.PointerType(llvm_ir.IntType(8)))
    return nb_types.voidptr(nb_types.uintp), codegen


@numba.njit(cache=True, nogil=True)
def _unowned(a: Int64Array) -> Int64Array:
    """A view of the C-contiguous int64 array ``a`` that owns nothing: passing it to a
    function counts no references (an owned array's count is an atomic operation at each
    call that passes it, not pruned in a cell's loop: a third of the kernel's time,
    measured). ``a`` must outlive it."""
    return carray(_pointer(a.ctypes.data), a.shape, np.int64)  # type: ignore[call-arg]


@numba.njit(cache=True, nogil=True)
def _unowned_float(a: Any) -> Any:
    """:func:`_unowned` of a float64 array."""
    return carray(_pointer(a.ctypes.data), a.shape, np.float64)  # type: ignore[call-arg]



@_kernel()
def _run_block(  # noqa: PLR0913, PLR0917 — numba takes arrays positionally
        lo: int, hi: int, cfgs: Int64Array, cells: Int64Array,
        rollouts_offsets: Int64Array, rollouts_at: Int64Array, scale_offsets: Int64Array,
        scale_at: Int64Array, scale_desired: Int64Array, deaths_offsets: Int64Array,
        deaths_at: Int64Array, deaths_count: Int64Array, out: Int64Array,
        trace: Int64Array, trace_base: Int64Array, traced: bool, shared: Int64Array,
        responses: Int64Array, response_base: Int64Array) -> None:
    # Scratch arrays for the block's cells, never rebound inside a cell's run.
    pods = np.empty((_POD_ROOM + 1, _P_COLS), np.int64)
    items = np.empty((_POD_ROOM + 1, 5), np.int64)
    avq = np.empty((_POD_ROOM + 1, 2), np.int64)
    heap = np.empty((_N_LANES * _LANE_ROOM, _H_ROWS), np.int64)
    lanes = np.empty((5, _N_LANES), np.int64)
    rs = np.empty((_R_COLS, MAX_REPLICASETS), np.int64)
    dm = np.empty((3, _D_COLS), np.int64)
    qs = np.empty((2, _Q_ROWS, MAX_REPLICASETS), np.int64)
    fifo = np.empty((2, MAX_REPLICASETS + 1), np.int64)
    bucket = np.empty((2, 2), np.float64)
    row = np.empty(deployment_rules.N_TRACE, np.int64)
    m = np.empty(deployment_rules.N_METRICS, np.int64)
    need = np.zeros(2, np.int64)
    qv = np.zeros(6, np.int64)  # the queues' lengths, AddAfter call counts, earliest waits
    # their views that own nothing, as the cells' loop takes them
    v_pods, v_items, v_avq, v_heap = _unowned(pods), _unowned(items), _unowned(avq), \
        _unowned(heap)
    v_rs, v_dm, v_qs, v_fifo = _unowned(rs), _unowned(dm), _unowned(qs), _unowned(fifo)
    v_lanes = _unowned(lanes)
    v_shared, v_responses = _unowned(shared), _unowned(responses)
    v_bucket, v_row, v_m, v_need, v_qv = _unowned_float(bucket), _unowned(row), \
        _unowned(m), _unowned(need), _unowned(qv)
    for i in range(lo, hi):
        c = cells[:, i]
        while True:
            need[0] = need[1] = 0
            ended = _run_cell(
                cfgs[0, i], cfgs[1, i], cfgs[2, i], cfgs[3, i], c[0], c[1], c[2], c[3], c[4],
                c[5] == 1, c[6],
                rollouts_at, rollouts_offsets[i], rollouts_offsets[i + 1], scale_at,
                scale_desired, scale_offsets[i], scale_offsets[i + 1], deaths_at,
                deaths_count, deaths_offsets[i], deaths_offsets[i + 1], v_pods, v_rs, v_dm,
                v_heap, v_lanes, v_qs, v_fifo, v_bucket, v_qv, v_avq, v_items, v_row, v_m,
                trace,
                trace_base[i], traced, v_need, v_shared, i, v_responses, response_base[i])
            if ended != _ROOM:
                break
            # more room, and the cell again from its start (the same run)
            if need[0] > pods.shape[0]:
                size = max(need[0], 2 * pods.shape[0])
                pods = np.empty((size, _P_COLS), np.int64)
                items = np.empty((size, 5), np.int64)
                avq = np.empty((size, 2), np.int64)
                v_pods, v_items, v_avq = _unowned(pods), _unowned(items), _unowned(avq)
            if need[1] > heap.shape[0] // _N_LANES:
                cap = heap.shape[0] // _N_LANES
                while cap < need[1]:
                    cap *= 2
                heap = np.empty((_N_LANES * cap, _H_ROWS), np.int64)
                v_heap = _unowned(heap)
        if ended == _DONE:
            for k in range(deployment_rules.N_METRICS):
                out[k, i] = m[k]
        else:
            out[0, i] = -_BIG - ended
    # the scratch arrays live until here, beyond their views' last use
    pods[0, 0] = items[0, 0] = avq[0, 0] = heap[0, 0] = rs[0, 0] = dm[0, 0] = qs[0, 0, 0] = 0
    fifo[0, 0] = row[0] = m[0] = qv[0] = lanes[0, 0] = 0
    bucket[0, 0] = 0.0


_BIG: Final = 1 << 40

#: Cells per parallel block.
_BLOCK: Final = 64


@_kernel(parallel=True)
def _simulate(cfgs: Int64Array, cells: Int64Array, rollouts_offsets: Int64Array,  # noqa: PLR0913, PLR0917
              rollouts_at: Int64Array, scale_offsets: Int64Array, scale_at: Int64Array,
              scale_desired: Int64Array, deaths_offsets: Int64Array, deaths_at: Int64Array,
              deaths_count: Int64Array, out: Int64Array, trace: Int64Array,
              trace_base: Int64Array, traced: bool, shared: Int64Array,
              responses: Int64Array, response_base: Int64Array) -> None:
    n = cells.shape[1]
    for b in numba.prange((n + _BLOCK - 1) // _BLOCK):
        lo = b * _BLOCK
        _run_block(lo, min(n, lo + _BLOCK), cfgs, cells, rollouts_offsets, rollouts_at,
                   scale_offsets, scale_at, scale_desired, deaths_offsets, deaths_at,
                   deaths_count, out, trace, trace_base, traced, shared, responses,
                   response_base)


def trace_rows(arrays: Mapping[str, NDArray[Any]]) -> Int64Array:
    """Each cell's first row in a trace buffer (cell i's ``duration + 1`` rows follow), and
    the buffer's length last: ``len(cells) + 1`` entries."""
    lengths = np.asarray(arrays["duration"], np.int64) + 1
    return np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)


def trace_buffer(arrays: Mapping[str, NDArray[Any]]) -> Int64Array:
    """A zeroed trace buffer for the batch ``arrays``: a row per second of every cell
    (:func:`trace_rows`), a column per :data:`DEPLOYMENT_TRACE_COLUMNS`."""
    return np.zeros((int(trace_rows(arrays)[-1]), len(TRACE_COLUMNS)), np.int64)


def _refuse(a: Mapping[str, Int64Array], n: int) -> None:
    """Raise :class:`KernelRefusalError` for the first cell the kernel cannot run exactly."""
    rollouts = np.diff(a["rollouts_offsets"])
    for name in ("desired", "G", "B", "min_ready_seconds", "grace", "max_surge",
                 "max_unavailable"):
        bad = np.flatnonzero((a[name] < 0) | (a[name] > MAX_COUNT))
        if bad.size:
            i = int(bad[0])
            raise KernelRefusalError(i, f"({name} {int(a[name][i])}) is outside 0 … "
                                        f"{MAX_COUNT:,}")
    bad = np.flatnonzero((a["duration"] < 0) | (a["duration"] > MAX_SECONDS))
    if bad.size:
        i = int(bad[0])
        raise KernelRefusalError(i, f"(duration {int(a['duration'][i])}) is outside 0 … "
                                    f"{MAX_SECONDS:,}")
    bad = np.flatnonzero((rollouts < 1) | (rollouts > MAX_REPLICASETS - 1))
    if bad.size:
        i = int(bad[0])
        raise KernelRefusalError(i, f"({int(rollouts[i])} rollouts) needs 1 … "
                                    f"{MAX_REPLICASETS - 1} (the revision history's limit)")
    # each list's values' rows
    row_of = {name: np.repeat(np.arange(n), np.diff(a[f"{name}_offsets"]))
              for name in ("rollouts", "scale", "deaths")}
    for name in ("rollouts", "scale"):
        at, offsets, cell = a[f"{name}_at"], a[f"{name}_offsets"], row_of[name]
        back = np.flatnonzero((np.diff(at) < 0) & (cell[1:] == cell[:-1]))
        if back.size:
            i = int(cell[back[0]])
            raise KernelRefusalError(i, f"({name} at {at[offsets[i]:offsets[i + 1]].tolist()}) "
                                        "must be in order")
        early = np.flatnonzero(at < 0)
        if early.size:
            raise KernelRefusalError(int(cell[early[0]]), f"({name} at {int(at[early[0]])}) "
                                                          "must be a second >= 0")
    for name, values in (("scale", "scale_desired"), ("deaths", "deaths_count")):
        cell = row_of[name]
        bad = np.flatnonzero((a[values] < 0) | (a[values] > MAX_COUNT))
        if bad.size:
            raise KernelRefusalError(int(cell[bad[0]]), f"({values} {int(a[values][bad[0]])}) "
                                                        f"is outside 0 … {MAX_COUNT:,}")
    bad = np.flatnonzero(a["deaths_at"] < 0)
    if bad.size:
        raise KernelRefusalError(int(row_of["deaths"][bad[0]]),
                                 f"(deaths at {int(a['deaths_at'][bad[0]])}) must be a second "
                                 ">= 0")


def simulate_deployment_arrays(
        *, out: Int64Array | None = None, traces: Int64Array | None = None,
        shared: Int64Array | None = None, responses: Int64Array | None = None,
        response_base: Int64Array | None = None, **arrays: NDArray[Any]) -> Int64Array:
    """Run a batch of Deployment cells (the arrays :data:`DEPLOYMENT_INPUTS`, one entry per
    cell or, for a list, its offsets and values) on the kernel; return the
    ``(len(DEPLOYMENT_OUT_COLUMNS), n)`` int64 matrix of their metrics (a metric a row, -1
    for a null), written into ``out`` when given. With ``traces`` (a C-contiguous int64
    matrix of :func:`trace_buffer`'s shape) each cell's per-second trace is written there
    too, cell i's rows from :func:`trace_rows`' entry i.

    With ``shared`` (a C-contiguous int64 matrix of ``(len(SHARED_OUT_COLUMNS), n)``), the
    figures every world has are written there, a row each (:data:`SHARED_OUT_COLUMNS`), and
    cell i's responses to its events go to the columns of ``responses`` from
    ``response_base[i]`` on (:func:`reconsim.model.kernels.arrays.response_buffers`; both
    or neither, else a throwaway pair).

    Raises :class:`~reconsim.errors.KernelRefusalError` for a cell it cannot run exactly."""
    missing = [name for name in DEPLOYMENT_INPUTS if name not in arrays]
    if missing:
        raise TypeError(f"simulate_deployment_arrays: missing {', '.join(missing)}")
    a = {name: np.ascontiguousarray(np.asarray(arrays[name]).astype(np.int64))
         for name in DEPLOYMENT_INPUTS}
    n = len(a["desired"])
    for name, values in (("rollouts", "rollouts_at"), ("scale", "scale_at"),
                         ("deaths", "deaths_at")):
        offsets = a[f"{name}_offsets"]
        if len(offsets) != n + 1 or offsets[0] != 0 or offsets[-1] != len(a[values]) \
                or np.any(np.diff(offsets) < 0):
            raise ValueError(f"{name}_offsets must run from 0 to the number of {name} "
                             "values, one entry per cell + 1")
    _refuse(a, n)
    cfgs = np.ascontiguousarray(np.stack(
        [a["max_surge"], a["max_surge_percent"] != 0, a["max_unavailable"],
         a["max_unavailable_percent"] != 0]).astype(np.int64))
    cells = np.ascontiguousarray(np.stack(
        [a["desired"], a["G"], a["B"], a["min_ready_seconds"], a["grace"], a["start"],
         a["duration"]]).astype(np.int64))
    n_out = len(DEPLOYMENT_OUT_COLUMNS)
    if out is None:
        out = np.zeros((n_out, n), np.int64)
    elif out.shape != (n_out, n) or out.dtype != np.int64 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous int64 matrix of shape ({n_out}, {n})")
    base = trace_rows(a)
    if traces is None:
        trace, traced = np.zeros((1, len(TRACE_COLUMNS)), np.int64), False
    else:
        if traces.shape != (int(base[-1]), len(TRACE_COLUMNS)) or \
                traces.dtype != np.int64 or not traces.flags.c_contiguous:
            raise ValueError("traces must be a C-contiguous int64 matrix of "
                             f"({int(base[-1])}, {len(TRACE_COLUMNS)}): trace_buffer()")
        trace, traced = traces, True
    n_shared = len(SHARED_OUT_COLUMNS)
    if shared is None:
        shared = np.zeros((n_shared, n), np.int64)
    elif shared.shape != (n_shared, n) or shared.dtype != np.int64 or \
            not shared.flags.c_contiguous:
        raise ValueError(f"shared must be a C-contiguous int64 matrix of shape ({n_shared}, "
                         f"{n})")
    responses, response_base = response_outputs({"controller": a["desired"], **a},
                                                responses, response_base)
    # The blocks handed to the threads one at a time, as each is free (a thread slowed by
    # other work on the machine takes fewer), not split in equal halves beforehand.
    chunks = numba.set_parallel_chunksize(1)
    try:
        _simulate(cfgs, cells, a["rollouts_offsets"], a["rollouts_at"], a["scale_offsets"],
                  a["scale_at"], a["scale_desired"], a["deaths_offsets"], a["deaths_at"],
                  a["deaths_count"], out, trace, base, traced, shared, responses,
                  np.ascontiguousarray(response_base))
    finally:
        numba.set_parallel_chunksize(chunks)
    failed = np.flatnonzero(out[0] < -(_BIG // 2))
    if failed.size:
        i = int(failed[0])
        code = int(-_BIG - out[0, i])
        reason = {_ZERO_ANNOTATION: "scales a ReplicaSet proportionally over a max-replicas "
                                    "annotation of 0 (the reference model divides by zero)",
                  _CONFLICT: "makes a status write conflict the rules do not expect"}
        raise KernelRefusalError(i, reason.get(code, f"ended with code {code}"))
    return out


def scenario_arrays(scenarios: Sequence[Scenario]) -> dict[str, Int64Array]:
    """The kernel's arrays (:data:`DEPLOYMENT_INPUTS`) of the reference model's scenarios,
    in order."""
    cols: dict[str, list[int]] = {name: [] for name in DEPLOYMENT_INPUTS}
    for name in ("rollouts_offsets", "scale_offsets", "deaths_offsets"):
        cols[name].append(0)
    for s in scenarios:
        for name in ("desired", "G", "B", "min_ready_seconds", "grace", "duration"):
            cols[name].append(getattr(s, name))
        for name in ("max_surge", "max_unavailable"):
            value, percent = int_or_percent(getattr(s, name), name)
            cols[name].append(value)
            cols[f"{name}_percent"].append(percent)
        cols["start"].append(STARTS.index(s.start))
        rollouts = list(s.rollouts)
        cols["rollouts_at"] += rollouts
        cols["rollouts_offsets"].append(cols["rollouts_offsets"][-1] + len(rollouts))
        for at, desired in s.scale:
            cols["scale_at"].append(at)
            cols["scale_desired"].append(desired)
        cols["scale_offsets"].append(len(cols["scale_at"]))
        for at, count in s.deaths:
            cols["deaths_at"].append(at)
            cols["deaths_count"].append(count)
        cols["deaths_offsets"].append(len(cols["deaths_at"]))
    return {name: np.asarray(values, np.int64) for name, values in cols.items()}
