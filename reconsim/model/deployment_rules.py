"""The Deployment world's rules on numbers, each one plain integer function: the reference
model (:mod:`reconsim.model.deployment`) may call them as Python, the Deployment kernel
(:mod:`reconsim.model.kernels.deployment`) calls the very same functions compiled by numba.

A percentage is passed as its number and a flag (``value, is_percent``: ``"25%"`` is
``25, 1``), as the kernel's arrays hold it; a time is an integer number of nanoseconds.
The trace's columns and the metrics are those of :mod:`reconsim.model.deployment`
(:data:`~reconsim.model.deployment.TRACE_COLUMNS`, the data set's ``metrics.csv``).
"""

from __future__ import annotations

import math
from typing import Any, Final

#: Nanoseconds in a second.
SECOND: Final = 1_000_000_000
#: A ready time that is not there (a pod not Ready), far below every real second.
NOT_READY: Final = -(1 << 40)


def scaled(value: int, is_percent: int, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``: an int as it is, ``value`` percent of
    ``total`` rounded up or down (in float64, as Go).

    >>> scaled(25, 1, 3, True), scaled(25, 1, 3, False), scaled(7, 0, 3, False)
    (1, 0, 7)
    """
    if is_percent == 0:
        return value
    x = float(value) * float(total) / 100
    return math.ceil(x) if round_up else math.floor(x)


def fencepost_surge(surge: int, surge_pct: int, unavailable: int, unavailable_pct: int,
                    desired: int) -> int:
    """``ResolveFenceposts``' surge: rounded up.

    >>> fencepost_surge(25, 1, 25, 1, 3)
    1
    """
    return scaled(surge, surge_pct, desired, True)


def fencepost_unavailable(surge: int, surge_pct: int, unavailable: int,
                          unavailable_pct: int, desired: int) -> int:
    """``ResolveFenceposts``' unavailable: rounded down, 1 when both come to 0.

    >>> fencepost_unavailable(25, 1, 25, 1, 3), fencepost_unavailable(0, 0, 25, 1, 1)
    (0, 1)
    """
    most = scaled(unavailable, unavailable_pct, desired, False)
    if most == 0 and scaled(surge, surge_pct, desired, True) == 0:
        return 1
    return most


def go_round(x: float) -> int:
    """Go's ``math.Round``: half away from zero.

    >>> go_round(2.5), go_round(-2.5), go_round(2.4999)
    (3, -3, 2)
    """
    if x >= 0:
        return math.floor(x + 0.5)
    return -math.floor(-x + 0.5)


def new_rs_new_replicas(desired: int, surge: int, current: int, new_replicas: int) -> int:
    """``NewRSNewReplicas`` (RollingUpdate): the new ReplicaSet's size, given the surge
    (rounded up against ``desired``) and ``current``, all ReplicaSets' spec.replicas.

    >>> new_rs_new_replicas(3, 1, 3, 0), new_rs_new_replicas(3, 1, 4, 1)
    (1, 1)
    """
    most = desired + surge
    if current >= most:
        return new_replicas
    return new_replicas + min(most - current, desired - new_replicas)


def max_scaled_down(all_replicas: int, desired: int, max_unavailable: int,
                    new_replicas: int, new_available: int) -> int:
    """``reconcileOldReplicaSets``' ``maxScaledDown``: all replicas less the minimum
    available less the new ReplicaSet's unavailable ones.

    >>> max_scaled_down(4, 3, 0, 1, 0)
    0
    """
    return all_replicas - (desired - max_unavailable) - (new_replicas - new_available)


def proportion(replicas: int, desired: int, surge: int, annotated: int,  # noqa: PLR0913, PLR0917
               to_add: int, added: int) -> int:
    """``GetProportion`` and ``getReplicaSetFraction``: what a ReplicaSet of ``replicas``
    (its max-replicas annotation ``annotated``) gets of ``to_add``, ``added`` given
    already. ``annotated`` must not be 0 where it is read.

    >>> proportion(3, 6, 2, 4, 4, 0), proportion(3, 0, 0, 4, -3, 0)
    (3, -3)
    """
    if replicas == 0 or to_add in (0, added):
        return 0
    if desired == 0:
        fraction = -replicas
    else:
        size = float(replicas * (desired + surge)) / float(annotated)
        fraction = go_round(size) - replicas
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def age_rank(second: int, now: int) -> int:
    """LogarithmicScaleDown's rank of a time: ``floor(log2(age in ns))`` as Go computes it,
    in floating point, the age from whole second ``second`` to instant ``now``; -1 for no
    age.

    >>> age_rank(0, 8), age_rank(3, 3 * SECOND)
    (3, -1)
    """
    if second == NOT_READY:
        return -1
    age = now - second * SECOND
    if age <= 0:
        return -1
    # The exponent of age's highest bit, in six halvings: floor(log2) of the exact age.
    rank, high = 0, age
    for bits in (32, 16, 8, 4, 2, 1):
        if high >> bits:
            high >>= bits
            rank += bits
    # Go's float64 log2 gives the same integer part except, perhaps, within a hair of a
    # power of two (the age rounded to 53 bits, the logarithm rounded): there, Go's way.
    margin = (1 << rank) >> 20
    if age - (1 << rank) <= margin or (2 << rank) - age <= margin:
        return int(math.log2(float(age)))
    return rank


def ranked_less(a_uid: int, a_created: int, a_ready: int, a_created_rank: int,  # noqa: PLR0913, PLR0917
                a_ready_rank: int, b_uid: int, b_created: int, b_ready: int,
                b_created_rank: int, b_ready_rank: int) -> bool:
    """``ActivePodsWithRanks.Less`` with LogarithmicScaleDown (v1.23's default), each
    pod's times given with their :func:`age_rank`: whether pod ``a`` is deleted before pod
    ``b``; seconds, ``NOT_READY`` for a pod not Ready."""
    a_is, b_is = a_ready != NOT_READY, b_ready != NOT_READY
    if a_is != b_is:  # Pending before Running, not Ready before Ready
        return not a_is
    if a_is and a_ready != b_ready:  # both Ready, at different seconds
        rank_x, rank_y = a_ready_rank, b_ready_rank
    elif a_created != b_created:
        rank_x, rank_y = a_created_rank, b_created_rank
    else:
        return False
    if rank_x == rank_y:
        return a_uid < b_uid
    return rank_x < rank_y


def pod_less(a_uid: int, a_created: int, a_ready: int, b_uid: int,  # noqa: PLR0913, PLR0917
             b_created: int, b_ready: int, now: int) -> bool:
    """:func:`ranked_less` at instant ``now`` (ns): the ReplicaSet controller's ``less``
    (:func:`reconsim.model.controllers.replicaset.less`) on exact ages in ns.

    >>> pod_less(1, 0, NOT_READY, 2, 0, 5, 10 * SECOND)  # not Ready first
    True
    """
    return ranked_less(a_uid, a_created, a_ready, age_rank(a_created, now),
                       age_rank(a_ready, now), b_uid, b_created, b_ready,
                       age_rank(b_created, now), age_rank(b_ready, now))


# --- The metrics of a trace -------------------------------------------------------------

#: The trace's columns (:data:`reconsim.model.deployment.TRACE_COLUMNS`), by position.
(T, DESIRED, NEW_SPEC, OLD_SPEC, NEW_LIVE, OLD_LIVE, NEW_AVAILABLE, OLD_AVAILABLE, AVAILABLE,
 NEW_TRUE_AVAILABLE, LIVE, API_PODS, TERMINATING, NONTERMINATING, NEW_PODS, OLD_PODS,
 RS_COUNT, RS_SYNCS, DEPLOY_SYNCS, CREATE_COMMANDS, CREATED, DELETE_COMMANDS, DELETED,
 DEATHS, D_UPDATED, D_AVAILABLE, STATUS_COMPLETE, MAX_SURGE_R, MAX_UNAVAILABLE_R,
 NEW_SCALE_WRITES, OLD_SCALE_WRITES) = range(31)
N_TRACE: Final = 31

#: The metrics (the data set's ``metrics.csv`` columns after ``id``), by position.
(M_MAX_PODS, M_MAX_API_PODS, M_MAX_LIVE, M_MAX_SURGE, M_SURGE_VIOLATION,
 M_API_SURGE_VIOLATION, M_MIN_AVAILABLE, M_MIN_AVAILABLE_AFTER, M_UNAVAILABLE_SECONDS,
 M_UNAVAILABLE_AFTER, M_ROLLOUT_DONE_AT, M_STATUS_COMPLETE_AT, M_COMPLETE_AT_END,
 M_CREATED, M_DELETED, M_CREATE_COMMANDS, M_DELETE_COMMANDS, M_RS_SYNCS, M_DEPLOY_SYNCS,
 M_EXCESS, M_MISSING, M_DEATHS, M_FINAL_RS_COUNT, M_MAX_SURGE_R,
 M_MAX_UNAVAILABLE_R) = range(25)
N_METRICS: Final = 25
#: A null metric (no such second).
NULL: Final = -1
_BIG: Final = 1 << 62


def start_metrics(m: Any) -> None:
    """Clear the metrics ``m`` (an int64 array of :data:`N_METRICS`) before a trace's first
    second."""
    for k in range(N_METRICS):
        m[k] = 0
    m[M_MIN_AVAILABLE] = _BIG
    m[M_MIN_AVAILABLE_AFTER] = _BIG
    m[M_ROLLOUT_DONE_AT] = NULL
    m[M_STATUS_COMPLETE_AT] = NULL


def rollout_done(r: Any) -> bool:
    """The data set's "rollout done" of a trace row: every desired pod new and truly
    available, none old, none terminating beyond."""
    return bool(r[NEW_TRUE_AVAILABLE] == r[DESIRED]
                and r[NEW_PODS] - r[TERMINATING] == r[DESIRED] and r[OLD_PODS] == 0)


def add_seconds(m: Any, r: Any, n: int, after: int, last_change: int) -> None:
    """Fold ``n`` seconds into the metrics ``m``: seconds ``r[T] … r[T] + n - 1``, each
    with trace row ``r`` (an int64 array of :data:`N_TRACE`) but for its second. ``after``
    is the first rollout's second, ``last_change`` the last one's.

    >>> import numpy as np
    >>> m, r = np.zeros(N_METRICS, np.int64), np.zeros(N_TRACE, np.int64)
    >>> start_metrics(m)
    >>> r[T], r[DESIRED], r[LIVE], r[STATUS_COMPLETE] = 5, 3, 2, 1
    >>> add_seconds(m, r, 10, 0, 12)
    >>> int(m[M_MISSING]), int(m[M_STATUS_COMPLETE_AT]), int(m[M_MIN_AVAILABLE_AFTER])
    (10, 12, 0)
    """
    if n <= 0:
        return
    t = r[T]
    m[M_MAX_PODS] = max(m[M_MAX_PODS], r[NONTERMINATING])
    m[M_MAX_API_PODS] = max(m[M_MAX_API_PODS], r[API_PODS])
    m[M_MAX_LIVE] = max(m[M_MAX_LIVE], r[LIVE])
    m[M_MAX_SURGE] = max(m[M_MAX_SURGE], 0, r[NONTERMINATING] - r[DESIRED])
    if r[NONTERMINATING] > r[DESIRED] + r[MAX_SURGE_R]:
        m[M_SURGE_VIOLATION] += n
    if r[API_PODS] > r[DESIRED] + r[MAX_SURGE_R]:
        m[M_API_SURGE_VIOLATION] += n
    m[M_MIN_AVAILABLE] = min(m[M_MIN_AVAILABLE], r[AVAILABLE])
    unavailable = r[AVAILABLE] < r[DESIRED] - r[MAX_UNAVAILABLE_R]
    if unavailable:
        m[M_UNAVAILABLE_SECONDS] += n
    past = t + n - max(t, after)  # the seconds from the first rollout on
    if past > 0:
        m[M_MIN_AVAILABLE_AFTER] = min(m[M_MIN_AVAILABLE_AFTER], r[AVAILABLE])
        if unavailable:
            m[M_UNAVAILABLE_AFTER] += past
    first = max(t, last_change)  # the first second from the last rollout on
    if first < t + n:
        if m[M_ROLLOUT_DONE_AT] == NULL and rollout_done(r):
            m[M_ROLLOUT_DONE_AT] = first
        if m[M_STATUS_COMPLETE_AT] == NULL and r[STATUS_COMPLETE] == 1:
            m[M_STATUS_COMPLETE_AT] = first
    m[M_CREATED] += n * r[CREATED]
    m[M_DELETED] += n * r[DELETED]
    m[M_CREATE_COMMANDS] += n * r[CREATE_COMMANDS]
    m[M_DELETE_COMMANDS] += n * r[DELETE_COMMANDS]
    m[M_RS_SYNCS] += n * r[RS_SYNCS]
    m[M_DEPLOY_SYNCS] += n * r[DEPLOY_SYNCS]
    m[M_EXCESS] += n * max(0, r[LIVE] - r[DESIRED])
    m[M_MISSING] += n * max(0, r[DESIRED] - r[LIVE])
    m[M_DEATHS] += n * r[DEATHS]


def end_metrics(m: Any, last: Any, max_surge_r: int, max_unavailable_r: int) -> None:
    """Close the metrics ``m`` with the trace's last row and the cell's fenceposts at its
    first desired count (unavailable at most desired); the fewest available from the first
    rollout on is null where that rollout falls after the run's end (no such second)."""
    if m[M_MIN_AVAILABLE_AFTER] == _BIG:
        m[M_MIN_AVAILABLE_AFTER] = NULL
    m[M_COMPLETE_AT_END] = 1 if rollout_done(last) else 0
    m[M_FINAL_RS_COUNT] = last[RS_COUNT]
    m[M_MAX_SURGE_R] = max_surge_r
    m[M_MAX_UNAVAILABLE_R] = max_unavailable_r
