"""``replicaset``: Kubernetes' ReplicaSet controller (v1.23.13), sync by sync.

It syncs on events (:mod:`reconsim.model.events`): every pod event reaching its cache, its
own status writes and its retries queue its key. A sync acts only when its expectations
are satisfied (no record yet, both counters at or below 0, or the record older than
``ttl``); it then corrects the gap between the active pods its cache lists and
``desired``. The record is set by the sync that acts (the creates it made, or the pods it
deleted), lowered by each creation and each deletion of a named pod its cache sees, and
at once by the creates that failed or lost their reply, and by deletes that found their
pod gone. A sync with a failed or lost create returns an error: its key is retried after
5 ms x 2^n, n its failures since its last success (at most 1,000 s). Deletions take the
pods ``ActivePodsWithRanks`` puts first: not ready before ready, then the more recently
ready, then the more recently created (with ``log_scale_down``, by the logarithm of their
age, then by creation).

docs/replicaset.md states the rules, each with the Go function it follows.
"""

from __future__ import annotations

import math
from typing import Any, Final

from reconsim.model.controllers.definition import ADDED, DELETED, Controller, Param, slots
from reconsim.model.controllers.expectations import TTL
from reconsim.model.kinds import Flag

#: Its memory: whether a record is set, its add and delete counters, the instant (ms) it
#: was set, and the failures since the last sync without error.
M: Final = slots(recorded=0, add=0, dele=0, at=0, failures=0)
#: The per-item rate limiter's base and largest delay, ms (client-go's defaults).
RETRY_BASE_MS: Final = 5
RETRY_MAX_MS: Final = 1_000_000


def decide(v: Any, p: Any, m: Any) -> int:
    """The gap between ``desired`` and the active pods, once the expectations are met."""
    if m[M.recorded] == 1 and (m[M.add] > 0 or m[M.dele] > 0) and v.now - m[M.at] <= p.ttl * 1000:
        return 0
    return v.desired - v.seen  # type: ignore[no-any-return]


def settle(o: Any, p: Any, m: Any) -> int:
    """Set the record for the commands carried out, lowered by those that will never be
    observed; 0, or the retry's delay when a create failed or lost its reply."""
    if o.asked != 0:
        m[M.recorded] = 1
        m[M.at] = o.now
        m[M.add] = o.ok if o.asked > 0 else 0  # the creates skipped, failed or lost are written off
        m[M.dele] = -o.asked - o.not_found if o.asked < 0 else 0
    if o.failed + o.lost > 0:
        n = m[M.failures]
        m[M.failures] = n + 1
        if n >= 40:
            return RETRY_MAX_MS
        return min(RETRY_BASE_MS * (1 << n), RETRY_MAX_MS)  # type: ignore[no-any-return]
    m[M.failures] = 0
    return 0


def observe(e: Any, p: Any, m: Any) -> None:
    """A creation lowers the add counter (below 0 too), a named pod's deletion the other."""
    if m[M.recorded] == 1:
        if e.kind == ADDED:
            m[M.add] -= 1
        elif e.kind == DELETED and e.marked == 1:
            m[M.dele] -= 1


def less(a: Any, b: Any, p: Any) -> bool:
    """``ActivePodsWithRanks.Less``: whether pod ``a`` is deleted before pod ``b``. With
    ``log_scale_down``, times compare by ``floor(log2(age in ns))`` as Go computes it, in
    floating point (-1 for no age), then by creation (uid). One function, no helpers:
    numba compiles a hook as it is. The Deployment world ranks its pods by the same rule
    on nanoseconds (:func:`reconsim.model.deployment_rules.age_rank` and
    :func:`~reconsim.model.deployment_rules.ranked_less`); a property test holds the two
    equal."""
    a_ready, b_ready = a.ready >= 0, b.ready >= 0
    if a_ready != b_ready:  # Pending before Running, not Ready before Ready
        return not a_ready
    if a_ready and a.ready != b.ready:  # both Ready, at different seconds
        x, y = a.ready, b.ready
    elif a.created != b.created:
        x, y = a.created, b.created
    else:
        return False
    if p.log_scale_down == 0:
        return x > y  # type: ignore[no-any-return]
    age_x = a.now * 1_000_000 - x * 1_000_000_000
    age_y = a.now * 1_000_000 - y * 1_000_000_000
    rank_x = int(math.log2(float(age_x))) if age_x > 0 else -1
    rank_y = int(math.log2(float(age_y))) if age_y > 0 else -1
    if rank_x == rank_y:
        return a.uid < b.uid  # type: ignore[no-any-return]
    return rank_x < rank_y


#: ``log_scale_down``: rank pods for deletion by the logarithm of their age, a cell field that
#: a controller takes by declaring it so.
LOG_SCALE_DOWN: Final = Param(Flag(), False, "replicaset: rank pods for deletion by the "
                              "logarithm of their age (LogarithmicScaleDown)")

REPLICASET = Controller(
    "replicaset", decide,
    "Kubernetes' ReplicaSet controller, sync by sync: queued by its pod events, its status "
    "writes and its retries; expectations, slow start, burst cap, deletion ranks",
    params={"ttl": TTL, "log_scale_down": LOG_SCALE_DOWN},
    memory=M,
    settle=settle, observe=observe, less=less)
